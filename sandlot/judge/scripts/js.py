"""JavaScript and TypeScript: what the judge hands the executor's driver (driver.js), which
keeps the answer apart from the tests.

The driver reads the secret and the program, removes both from the work dir, and runs the
answer as a script of its own (one that leaves a comment, string or template open does not
parse; it cannot reach into the tests' text). The tests then run as the body of a function, in a
scope of their own, made before the answer ran: their declarations (`test`, `compare`, `x0`)
are that function's locals, which the answer can neither replace nor shadow with a global's
accessor; their `require` gives `assert` (and lodash) as frozen copies taken before the answer
ran, their `console` asserts by throwing, as HumanEval-X's tests expect, and `__sandlot` is the
harness, reachable from nowhere else.

Each assertion site of the tests' text reports to the harness: a call of an assertion
(`assert.deepEqual(...)`, `console.assert(...)`) becomes `__sandlot.after(site, call)`, which
marks its site once the call returned; an `if (cond) { throw ... }` becomes
`if (__sandlot.fails(site, cond))`, which marks it when the condition is false. The seal's
payload is `passed=N failed=0`. TypeScript's tests are a file of their own (`TS_TESTS`),
transpiled beside the answer and joined to it by the executor.
"""

from __future__ import annotations

import re

from sandlot.judge import braces
from sandlot.judge.scripts import Joined, lex
from sandlot.languages import TS_TESTS

HARNESS = "__sandlot"
_LEXEMES = lex.lexemes(lex.SINGLE, lex.DOUBLE, lex.BACKTICK, lex.SLASH_COMMENTS)
# The tests' own `assert` when they define one instead of requiring node's.
_OWN_ASSERT = re.compile(r"\bfunction\s+assert\b|\b(?:const|let|var)\s+assert\s*=(?!\s*require\b)")


def sites(tests: str) -> tuple[str, int | None]:
    blanked = _LEXEMES.blank(tests)
    calls = lex.calls(blanked, ("console.assert", "assert"))
    calls += [s for s in _method_calls(blanked) if s.start not in {c.start for c in calls}]
    throws = lex.guarded_conditions(blanked, "throw")
    if throws is None or _OWN_ASSERT.search(blanked):
        return tests, None
    kinds = sorted([(s, "after") for s in calls] + [(s, "fails") for s in throws],
                   key=lambda c: c[0].start)  # fmt: skip

    def wrap(text: str, k: int) -> str:
        return f"{HARNESS}.{kinds[k][1]}({k}, {text})"

    out = lex.replaced(tests, [s for s, _ in kinds], wrap)
    return (tests, None) if out is None or not kinds else (out, len(kinds))


def _method_calls(blanked: str) -> list[lex.Span]:
    """Calls of `assert.<method>(...)` (`assert.deepEqual`, `assert.strictEqual`...)."""
    out = []
    for m in re.finditer(r"(?<![\w.$])assert\s*\.\s*\w+\s*\(", blanked):
        end = braces.matching(blanked, m.end() - 1)
        if end is not None:
            out.append(lex.Span(m.start(), end + 1))
    return out


def jest_tests(spec: str) -> int:
    """How many tests a jest spec declares (`test(...)` and `it(...)` calls)."""
    return len(lex.calls(_LEXEMES.blank(spec), ("test", "it")))


# The tests' first line: in the driver's function, `__sandlot` is the function's own and this does
# nothing; run anywhere else (a result's full_code, run by hand), the program runs its tests with
# a harness that counts nothing.
_STANDALONE = (
    f"typeof {HARNESS} === 'undefined' && (globalThis.{HARNESS} = "
    "{ after() {}, fails(site, failed) { return failed; } });\n"
)


def join(answer: str, tests: str) -> Joined:
    """The program the driver runs; `tests_at` says where its tests begin."""
    body, count = sites(tests)
    code = f"{answer}\n"
    return Joined(f"{code}{_STANDALONE}{body}", {}, count, tests_at=len(code))


def join_typescript(answer: str, tests: str) -> Joined:
    """The answer is the program; its tests are a file of their own, which the build transpiles
    beside it (the executor joins them for the driver)."""
    body, count = sites(tests)
    return Joined(answer, {f"{TS_TESTS}.ts": f"{_STANDALONE}{body}".encode()}, count)
