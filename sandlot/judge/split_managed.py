"""C#'s and Scala's split: the answer is a compilation unit of its own, the tests' harness
another, which owns the entry point and the seal and calls the answer from outside, by a name
from the root that nothing the answer declares can take.

- C#: the answer is compiled alone into an assembly of its own (`sandlot_answer.dll`, by the
  csharp row's compile step, sandlot/languages/csharp.py), which the harness references under an
  extern alias only (`-r:SandlotAnswer=...`): none of the answer's types (a `Main`, a
  `class Debug`, a `namespace System { class Console }`, a `SandlotSeal`) is in the harness's
  global namespace, so none stands for a name the tests or the seal use; the tests call the
  answer's functions as `SandlotAnswer::Problem.F(...)`. The answer's internal types and members
  are visible to the harness (the row adds `InternalsVisibleTo("main")`), as they are in the one
  file SandboxFusion compiles; a private function the tests call is made internal.
- Scala: the answer's file opens with `package sandlotanswer` (its own package clauses go), and
  is compiled in the same scalac run as the harness: everything it declares is in that package,
  which the harness never imports, and the tests call it as `_root_.sandlotanswer.Problem.f(...)`.

The secret is read by the first statement of the harness's entry point into a local (no field
that reflection could read), before any class of the answer is initialized (the runtime
initializes one at its first use, and only the tests use the answer); the seal is written by the
entry point's last statement with the number of assertion sites (sites.py) that ran and held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sandlot.executor import SEAL_FILE
from sandlot.judge import braces, returns, sites, splices
from sandlot.judge.guard_texts import CSHARP_SITE_CHECKS
from sandlot.judge.plans import Program
from sandlot.languages import ANSWER_ALIAS
from sandlot.languages import SPLIT_DIR as ANSWER_DIR

SECRET = "sandlotSecret"

CSHARP_SEAL = (
    (
        """
// sandlot's seal (sandlot/judge/split_managed.py): read by the tests' Main, first, into a local;
// written at its end with the number of assertion sites that ran and held.
static class SandlotSeal {
"""
        + CSHARP_SITE_CHECKS
        + """
    public static string Read() {
        try {
            var text = System.Text.Encoding.GetEncoding("ISO-8859-1")
                .GetString(System.IO.File.ReadAllBytes("SEAL_FILE"));
            System.IO.File.Delete("SEAL_FILE");
            return text;
        } catch (System.Exception) {
            return "";
        }
    }

VET
    public static void End(string secret) {
        if (secret.Length == 0) return;
        System.Console.Out.Flush();
        var counts = "passed=" + passed.Count + " failed=0";
        var bytes = System.Text.Encoding.GetEncoding("ISO-8859-1")
            .GetBytes(secret + counts + secret + "\\n");
        using (var stdout = System.Console.OpenStandardOutput()) {
            stdout.Write(bytes, 0, bytes.Length);
        }
    }
}
"""
    )
    .replace("SEAL_FILE", SEAL_FILE)
    .replace("VET", returns.CSHARP_VET.strip("\n") + "\n", 1)
)

SCALA_SEAL = """
// sandlot's seal (sandlot/judge/split_managed.py), in a package of its own: read by the tests'
// main, first, into a local; written at its end with the number of sites that ran and held.
package sandlot {
object SandlotSeal {
  private val passed = new java.util.BitSet()

  // An assertion site of the tests (sandlot/judge/sites.py): fails as Predef.assert does.
  def check(site: Int, ok: Boolean): Unit = {
    if (!ok) throw new java.lang.AssertionError("assertion failed")
    passed.set(site)
  }

  def fails(site: Int, failed: Boolean): Boolean = {
    if (!failed) passed.set(site)
    failed
  }

  def read(): String = {
    try {
      val path = java.nio.file.Paths.get("SEAL_FILE")
      val text = new String(java.nio.file.Files.readAllBytes(path), "ISO-8859-1")
      java.nio.file.Files.delete(path)
      text
    } catch { case _: Exception => "" }
  }

VET
  def end(secret: String): Unit = {
    if (secret.nonEmpty) {
      System.out.flush()
      val out = new java.io.FileOutputStream(java.io.FileDescriptor.out)
      val counts = "passed=" + passed.cardinality + " failed=0"
      out.write((secret + counts + secret + "\\n").getBytes("ISO-8859-1"))
      out.flush()
    }
  }
}
}
""".replace("SEAL_FILE", SEAL_FILE).replace("VET", returns.SCALA_VET.strip("\n") + "\n", 1)


@dataclass(frozen=True, slots=True)
class Managed:
    """One language's split: where its answer goes, how the harness names it, and its seal."""

    language: str
    answer_file: str  # in ANSWER_DIR
    scope: str  # the keyword of the answer's holder: `class`, `object`
    harness_scope: str  # the holder of the tests' entry point when the tests open it themselves
    answer_head: str  # what opens the answer's unit
    harness_head: str  # what opens the harness's
    qualified: str  # how the harness names the answer's holder `{}`
    directive: re.Pattern[str]  # a using/import line
    package: re.Pattern[str]  # a package clause the answer's unit drops
    function: str  # a declaration of function `{n}` (a regex; group 1 its name when {n} is \w+)
    sites: sites.Dialect
    read: str
    end: str
    seal: str
    vet: str  # the seal's function that vets a value the answer returned (returns.py)
    vet_statements: bool  # whether it takes the value of a call that is a statement of its own


# The tests' assertions as the seal's own checks (sites.py), named from the root, for the split
# and the in-process guard alike: a member of the answer's named `SandlotSeal`, `Debug` or
# `assert` stands for nothing the tests call.
CSHARP_SITES = sites.Dialect(
    calls=("Debug.Assert", "Trace.Assert", "System.Diagnostics.Debug.Assert",
           "System.Diagnostics.Trace.Assert"),
    check="global::SandlotSeal.Check", fails="global::SandlotSeal.Fails",
)  # fmt: skip
SCALA_SITES = sites.Dialect(calls=("assert",), check="_root_.sandlot.SandlotSeal.check",
                             fails="_root_.sandlot.SandlotSeal.fails")  # fmt: skip
_CSHARP_USING = r"^[ \t]*using\s+(?:static\s+)?[\w.]+(?:\s*=\s*[^;\n]+)?\s*;[ \t]*$"

CSHARP = Managed(
    language="csharp",
    answer_file="answer.cs",
    scope="class",
    harness_scope="class SandlotTests",
    answer_head="",
    harness_head=f"extern alias {ANSWER_ALIAS};\n",
    qualified=ANSWER_ALIAS + "::{}",
    directive=re.compile(_CSHARP_USING, re.M),
    package=re.compile(r"(?!)"),
    function=r"\b(?:static\s+)(?:[\w<>\[\],.?() ]+\s+)?({n})\s*(?:<[^>()]*>)?\s*\(",
    sites=CSHARP_SITES,
    read=f"string {SECRET} = global::SandlotSeal.Read();",
    end=f"global::SandlotSeal.End({SECRET});",
    seal=CSHARP_SEAL,
    vet="global::SandlotSeal.Vet",
    vet_statements=False,
)
SCALA = Managed(
    language="scala",
    answer_file="answer.scala",
    scope="object",
    harness_scope="object Main",
    answer_head="package sandlotanswer\n",
    harness_head="",
    qualified="_root_.sandlotanswer.{}",
    directive=re.compile(r"^[ \t]*import\s+[^\n]*$", re.M),
    package=re.compile(r"^[ \t]*package\s+[\w.]+[ \t]*;?[ \t]*$", re.M),
    function=r"\bdef\s+({n})\b",
    sites=SCALA_SITES,
    read=f"val {SECRET} = _root_.sandlot.SandlotSeal.read()",
    end=f"_root_.sandlot.SandlotSeal.end({SECRET})",
    seal=SCALA_SEAL,
    vet="_root_.sandlot.SandlotSeal.vet",
    vet_statements=True,
)


def directives(m: Managed, code: str) -> str:
    """`code`'s using/import lines, each once."""
    return "".join(dict.fromkeys(x.group().strip() + "\n" for x in m.directive.finditer(code)))


def functions(m: Managed, code: str) -> set[str]:
    """The names of the functions `code` declares."""
    return set(re.findall(m.function.format(n=r"\w+"), braces.blank(code)))


def qualify(tests: str, names: set[str], owner: str) -> str:
    """The tests' unqualified calls of `names` (`f(x)`, not `a.f(x)`), as calls of `owner`'s."""
    if not names:
        return tests
    blanked = braces.blank(tests)
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    out, last = [], 0
    for found in re.finditer(rf"(?<![\w$.:])(?:{alternatives})(?=\s*[(\[])", blanked):
        before = blanked[: found.start()].rstrip()
        if re.search(r"\b(?:new|def|void|class|object)$", before):
            continue
        out += [tests[last : found.start()], f"{owner}."]
        last = found.start()
    out.append(tests[last:])
    return "".join(out)


def harness(m: Managed, tests: str) -> tuple[str, int | None] | None:
    """The tests as the harness: their assertion sites reporting to the seal, the secret read
    first in their entry point and the seal written last, the seal's class after them; and how
    many sites there are. None: the tests have no complete entry point."""
    instrumented, count = sites.instrument(tests, m.sites)
    ended = braces.at_end_of_main(instrumented, m.language, m.end)
    if ended is None:
        return None
    return m.harness_head + braces.at_start_of_main(ended, m.language, m.read) + m.seal, count


def program(
    m: Managed, answer: str, tests: str, owner: str, called: set[str], test_code: str, **kw: Any
) -> Program | None:
    """The split program: `answer` (a unit declaring `owner`, whose functions `called` the tests
    call unqualified) beside the harness made of `tests`. None: the tests have no entry point."""
    qualified = qualify(tests, called, m.qualified.format(owner))
    built = harness(m, returns.vet_calls(qualified, called, m.vet, statements=m.vet_statements))
    if built is None:
        return None
    text, count = built
    answer = m.answer_head + m.package.sub("", answer)
    if m is CSHARP:  # a private function the tests call: internal, which the harness may call
        for name in called:
            answer = _internal(answer, name)
    files = dict(kw.pop("files", None) or {})
    files[f"{ANSWER_DIR}/{m.answer_file}"] = answer.encode()
    return Program(m.language, text, test_code, files=files, seal=True, tests=count, **kw)


def multiple(
    m: Managed, prompt: str, code: str, whole: bool, tests: str, **kw: Any
) -> Program | None:  # fmt: skip
    """MultiPL-E: the prompt's class (object) `Problem` with the answer's body, closed, is the
    answer; the tests' entry point (which the tests open inside that scope, after closing the
    prompt's function) is the harness's, calling the prompt's functions as `Problem.f(...)`."""
    head = re.search(rf"\b{m.scope}\s+(\w+)", braces.blank(prompt))
    first, _, rest = tests.partition("\n")
    if head is None or first.strip() != "}":  # tests that are not MultiPL-E's: not split
        return None
    owner = head.group(1)
    if whole:
        # as the unsplit program had it: the answer's scope of that name (else its first, else
        # its bare members) as the prompt's, without its own main or a usage example after it
        code = braces.drop_main(code, m.language)
        opened = (splices.csharp_open_class(code, prompt) if m is CSHARP
                  else splices.open_scope(code, prompt, m.scope))  # fmt: skip
        code = opened + "\n}\n"
        # an answer cut off inside its scope (the drop of its own main took its end): closed
        blanked = braces.blank(code)
        code += "\n}" * max(0, blanked.count("{") - blanked.count("}"))
        answer = directives(m, prompt) + code
    else:
        answer = prompt + code + "\n    }\n}\n"
    harness_text = f"{directives(m, prompt)}{m.harness_scope} {{\n{rest}"
    called = functions(m, prompt) - functions(m, rest)
    return program(m, answer, harness_text, owner, called, tests, **kw)


def insert(m: Managed, template: str, code: str, prompt: str, **kw: Any) -> Program | None:
    """An `#<INSERT>` slot inside the tests' class (object) takes the members of the answer's
    one of that name (or its bare members), which become that holder in the answer's own unit,
    whose functions (those the row's prompt declares) the tests call from outside. Slots
    elsewhere, and rows whose prompt declares no function, are not split."""
    kw.pop("forbidden", None)
    slot = template.find("#<INSERT>")
    owner = _enclosing(m, template, slot)
    if owner is None:
        return None
    harness_text = template.replace("#<INSERT>", "", 1)
    body = _scope_body(m, code, owner)
    members = braces.drop_main(m.directive.sub("", code if body is None else body), m.language)
    answer = f"{directives(m, code)}{m.scope} {owner} {{\n{members}\n}}\n"
    # the functions the row's prompt declares (a Markdown fence is no literal here): the tests'
    # calls of them, and of nothing else, go to the answer (a `def println` of its own stands
    # for no call of the tests'); a prompt that declares none leaves the row unsplit
    called = functions(m, prompt.replace("`", " ")) - functions(m, harness_text)
    if not called:
        return None
    return program(m, answer, harness_text, owner, called, template, **kw)


def _enclosing(m: Managed, code: str, at: int) -> str | None:
    blanked = braces.blank(code)
    holders = re.compile(rf"\b{m.scope}\s+(\w+)[^{{;]*\{{")
    for found in reversed(list(holders.finditer(blanked, 0, at))):
        end = braces.closing(blanked, found.end() - 1)
        if end is None or end >= at:
            return found.group(1)
    return None


def _scope_body(m: Managed, code: str, name: str) -> str | None:
    """The members of the answer's class (object) `name` (else of its first one), or None."""
    blanked = braces.blank(code)
    found = list(re.finditer(rf"\b{m.scope}\s+(\w+)[^{{;=]*\{{", blanked))
    if not found:
        return None
    scope = next((f for f in found if f.group(1) == name), found[0])
    end = braces.closing(blanked, scope.end() - 1)
    return code[scope.end() : end if end is not None else len(code)]


_ACCESS = re.compile(r"\b(?:public|internal|protected)\b")


def _internal(code: str, name: str) -> str:
    """A C# answer whose static function `name` is private (said, or by default) made internal:
    in SandboxFusion's one file the tests are in its class and call it."""
    declared = rf"(?=[\w<>\[\],.?() ]*?\b{re.escape(name)}\s*(?:<[^>()]*>)?\s*\()"
    pattern = re.compile(r"(?m)^([ \t]*)((?:(?:private|static|unsafe|async|new)\s+)+)" + declared)
    out, last = [], 0
    blanked = braces.blank(code)
    for found in pattern.finditer(blanked):
        mods = found.group(2)
        if "static" not in mods or _ACCESS.search(blanked[found.start() : found.end()]):
            continue
        out += [code[last : found.start(2)], "internal ", re.sub(r"\bprivate\s+", "", mods)]
        last = found.end(2)
    out.append(code[last:])
    return "".join(out)
