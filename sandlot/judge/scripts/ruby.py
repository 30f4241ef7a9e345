"""Ruby: the answer is its own file, `load`ed by the harness once the secret is read.

`__END__` and an open `=begin` end (or break) the answer's own file; `exit!` and `at_exit`
leave without the seal. The tests assert with test-unit's `assert_equal(expected, actual)`
(MultiPL-E, HumanEvalDS, CRUXEval-X) or raise in an `if` (MBXP's `if x0 != v0` then `raise`;
`raise ... unless cond`, as a /run_batch assert):
each assertion becomes the harness's `check(site, expected, actual)`, which compares with
`expected == actual` as test-unit does, fails with its message and marks its site when it holds
(an answer that patches `assert_equal`, the test case or test-unit's runner changes nothing it
checks); each such condition becomes `fails(site, cond)`, which marks its site when false.
A site that did not hold is counted as failed before the failure is raised, so an answer that
makes `raise` a no-op (Kernel#raise redefined) gets `failed=1` in the seal, not a pass.
test-unit rows end where its runner reports (it runs its tests at exit, after any last line).

The harness object is a global under the drawn name: Ruby gives a test method no other way to
reach it, and `global_variables` lists it (reflection, out of reach as is patching the core
classes the check and the seal's writing use: `==`, `Hash`, `IO#write`).
"""

from __future__ import annotations

import re

from sandlot.judge.scripts import ANSWER, SEAL, Joined, fresh_name, lex

FILE = f"{ANSWER}.rb"
_LEXEMES = lex.lexemes(lex.SINGLE, lex.DOUBLE, r"#[^\n{][^\n]*|#$")

_START = """${v} = begin
  s = File.binread('{seal}') rescue ''
  File.delete('{seal}') rescue nil
  File.delete(__FILE__) rescue nil
  passed, failed = {{}}, {{}}
  out = STDOUT
  o = Object.new
  o.define_singleton_method(:check) do |site, expected, actual|
    if expected == actual
      passed[site] = true
    else
      failed[site] = true
      failure = RuntimeError
      failure = Test::Unit::AssertionFailedError if defined?(Test::Unit::AssertionFailedError)
      raise failure, "<#{{expected.inspect}}> expected but was\\n<#{{actual.inspect}}>"
    end
  end
  o.define_singleton_method(:fails) do |site, bad|
    if bad then failed[site] = true else passed[site] = true end
    bad
  end
  o.define_singleton_method(:end) do
    out.write(s + "passed=#{{passed.size}} failed=#{{failed.size}}" + s + "\\n")
    out.flush
  end
  o.freeze
end
load './{answer}'
"""
_END = "${v}.end"
# test-unit runs its tests at exit, after any last line: run them here instead.
_TEST_UNIT_END = (
    "Test::Unit::AutoRunner.need_auto_run = false\n"
    "exit(Test::Unit::AutoRunner.run ? (${v}.end; 0) : 1)"
)
# `if cond` (or `unless cond`) whose next line raises: MBXP's assertion.
_RAISING_IF = re.compile(
    r"^([ \t]*(?:if|unless)[ \t]+)(.+?)([ \t]*(?:then)?[ \t]*\n[ \t]*raise\b)", re.M
)


# `raise ... if cond` (or `unless cond`): the modifier form, as a /run_batch assert writes it.
_RAISE_IF = re.compile(r"^[ \t]*raise\b[^\n]*?[ \t](if|unless)[ \t]+([^\n]*?)[ \t]*$", re.M)

_NOT_ONE_CONDITION = re.compile(r"\b(?:rescue|if|unless|while|until|and|or|do)\b|;")


def sites(tests: str, v: str) -> tuple[str, int | None]:
    blanked = _LEXEMES.blank(tests)
    spans = lex.calls(blanked, ("assert_equal",))
    checks = [(s, "check") for s in spans]
    for m in _RAISING_IF.finditer(blanked):
        kind = "fails" if m.group(1).strip() == "if" else "holds"
        checks.append((lex.Span(m.start(2), m.end(2)), kind))
    for m in _RAISE_IF.finditer(blanked):
        if _NOT_ONE_CONDITION.search(m.group(2)):
            continue  # `... rescue nil`, a second modifier: not a site (no count is claimed)
        kind = "fails" if m.group(1) == "if" else "holds"
        checks.append((lex.Span(m.start(2), m.end(2)), kind))
    if len(re.findall(r"\braise\b", blanked)) != sum(k != "check" for _, k in checks):
        return tests, None  # a raise this does not place: the seal attests only the end
    checks.sort(key=lambda c: c[0].start)

    def wrap(text: str, k: int) -> str:
        kind = checks[k][1]
        if kind == "check":
            return f"${v}.check({k}, {text[text.index('(') + 1 : -1]})"
        if kind == "fails":
            return f"${v}.fails({k}, ({text}))"
        return f"!${v}.fails({k}, !({text}))"

    out = lex.replaced(tests, [s for s, _ in checks], wrap)
    return (tests, None) if out is None or not checks else (out, len(checks))


def join(answer: str, tests: str) -> Joined:
    v = fresh_name()
    body, count = sites(tests, v)
    end = _TEST_UNIT_END if "test/unit" in tests else _END
    code = f"{_START.format(v=v, seal=SEAL, answer=FILE)}{body.rstrip()}\n{end.format(v=v)}\n"
    return Joined(code, {FILE: answer.encode()}, count)
