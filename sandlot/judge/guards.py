"""Guards in a program's text: statements that read the run's secret before any code under test
runs, and write the seal (sandlot/executor/seal.py) only where the tests end.

Python needs none here: the executor's driver runs its programs; Java keeps the answer apart
from its tests and seals its own harness (split_java.py). The scripting languages (JavaScript
and TypeScript through their driver, PHP, Perl, Ruby, R, Lua, bash, Racket) have a harness of
their own (sandlot/judge/scripts/): `join` makes their run of an answer and its tests. For the
others, `guard_end` puts the seal's writing at the end of the tests (the last statement of their
main, or their last line where tests are top-level statements) before the answer is put in, so
never in an answer's own main; `with_start` then puts the reading first, where nothing of the
answer can run before it:

- C++: a pre-init function, which runs before every static initializer; only the tests' main may
  write the seal (a friend of the class that holds it);
- C#, Scala: the first static initializer of the class (object) that holds the tests' main;
  the seal is written only when the tests' main, called by the runtime, calls for it (a call from
  anywhere else spends it);
- Rust: the first statement of main (Rust runs no code before main), into a local of main;
- Kotlin scripts: the program's first statement, into a closure bound to a name drawn at
  random per submission.

The text of the compiled languages' guards is the same from one submission to the next, so the
compile cache keeps hitting; the secret is in no source and no binary. Which guard is a
language's is its row in dialects.py; their texts are in guard_texts.py.
"""

from __future__ import annotations

import re

from sandlot.judge.dialects import DIALECTS, dialect
from sandlot.judge.guard_texts import SEAL, MainGuard
from sandlot.judge.scripts import Joined

__all__ = ["DRIVEN", "SEAL", "guard_end", "join", "tests_of", "with_start"]

# Rows with a driver (their `harness`): the executor seals them without help.
DRIVEN = frozenset(d.name for d in DIALECTS.values() if d.driven)


def guard_end(test: str, language: str) -> tuple[str, bool]:
    """`test` with the seal's writing where it ends, and whether the program is sealed: False
    where the language or the test has no such place (the program is judged on its exit)."""
    d = dialect(language)
    if d.driven:
        return test, True
    if d.guard is None:
        return test, False
    return d.guard.guard_end(test, language)


def tests_of(test: str, language: str) -> int | None:
    """How many assertion sites the guard of `language` makes `test` report to the seal (None:
    its seal attests only that the tests' main ended)."""
    guard = dialect(language).guard
    return guard.tests(test) if isinstance(guard, MainGuard) else None


def with_start(program: str, language: str) -> str:
    """The assembled `program` (its tests guarded by `guard_end`) reading the secret first."""
    d = dialect(language)
    if d.driven or d.guard is None:
        return program
    return d.guard.with_start(program)


# Tests that open by closing what the prompt opened (a HumanEval row's `}` or `end` line, as
# SandboxFusion joins them): those lines finish the answer, so they go to the answer's side.
_CLOSING = re.compile(r"(?:[ \t]*(?:[})\]];?|end)[ \t]*(?:\n|$))+")


def join(answer: str, tests: str, language: str) -> Joined | None:
    """The run of `answer` and its `tests` where `language` has a harness of its own (the
    answer apart, the tests' assertion sites counted), else None."""
    script = dialect(language).script
    if script is None:
        return None
    closing = _CLOSING.match(tests)
    if closing:
        head = answer.rstrip("\n")
        answer, tests = f"{head}\n{closing.group()}", tests[closing.end() :]
    return script(answer, tests)
