"""Scripting languages' harnesses (PHP, Perl, Ruby, R, Lua, bash, Racket; JavaScript and
TypeScript through their driver): how an answer and its tests make one run whose seal
(sandlot/executor/seal.py) attests how many of the tests' assertion sites ran and held.

Each language's module has a `join(answer, tests) -> Joined`. Where the interpreter allows, the
answer is a file of its own (`ANSWER`), parsed or compiled apart from the tests and loaded by
the harness, which is the program that runs:

1. the harness first reads the run's secret into a closure bound to a name drawn per submission
   (or a variable of its own scope), and removes it and its own file (the tests' text); nothing
   of the answer has run or been compiled yet;
2. it loads the answer's file: whatever the answer's text does to its own parse (an unclosed
   comment, string or heredoc, `__END__`, `__halt_compiler()`, `?>`, `#;`, an alias, a macro)
   ends at the end of that file;
3. it runs the tests, each assertion site rewritten into the harness's own check, which fails as
   the assertion would and marks its site when it holds: an assertion the answer redefined, or a
   test it made a no-op, swallowed or skipped, leaves its site unmarked;
4. after the tests' last statement it writes the seal with `passed=N failed=0`, N the number of
   distinct sites marked; the judge accepts only N equal to the number of sites it counted in
   the tests' text (`Joined.tests`).

What stays out of reach is the answer's reach into the process they share (reflection: symbol
tables, frames, the debug library, `/proc/self`, patching the core classes the harness's own
checks use): integrity.py says it per language, and the tests of test_reward_hacks_script.py
show it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from sandlot.executor import SEAL_FILE as SEAL

__all__ = ["ANSWER", "SEAL", "Joined", "fresh_name"]

ANSWER = "sandlot_answer"  # the answer's file, with its language's extension


@dataclass(frozen=True, slots=True)
class Joined:
    """An answer and its tests as one run: `code` is the harness (the run's program), `files`
    holds the answer's own file beside it; `tests` is how many assertion sites the seal must
    attest passed (None: the seal attests only that the tests ran to their end); `tests_at`,
    for a driver's language, is where the tests begin in `code`."""

    code: str
    files: dict[str, bytes] = field(default_factory=dict)
    tests: int | None = None
    tests_at: int | None = None


def fresh_name() -> str:
    """A name no answer can know in advance: the harness's, per submission."""
    return "sandlot_" + secrets.token_hex(8)
