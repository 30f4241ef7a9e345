"""Guards: what a sealed run (sandlot/executor/seal.py) adds to its box so that the end of its
tests can be proven.

- Rows with a `harness` (Python, JavaScript, TypeScript) run their program through a driver
  (`python_driver.py`, `driver.js`), which also judges `{"input", "expected"}` test cases after it.
- Rows with a `guard` are test frameworks: their own hook writes the seal once the framework has
  reported every test passed, with its counts (`frameworks.py`).
- Other rows add only the secret: the judge puts the guard into the program's text
  (sandlot/judge/guards.py).

Nothing of a guard goes into a build: compile steps see the same files from one submission to the
next, and the compile cache hits.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, replace
from pathlib import Path

from sandlot.executor import seal as sealing
from sandlot.executor.guards import frameworks
from sandlot.languages import TS_TESTS, Language

PROGRAM_FILE = ".sandlot_program"
_HERE = Path(__file__).parent
# The Python driver's core, and the parts only `strict` and test cases need (compiling them
# costs every run; most of a judge's runs need the core alone). Its docstring stays here.
_PY_TEXT = (_HERE / "python_driver.py").read_text()
_PY_CORE, _PY_STRICT, _PY_CASE, _PY_UNITTEST, _PY_SPLIT = (
    _PY_TEXT[_PY_TEXT.index(start) : _PY_TEXT.index(end) if end else None]
    for start, end in (("def __sandlot_driver(", "def __sandlot_strict("),
                       ("def __sandlot_strict(", "def __sandlot_case("),
                       ("def __sandlot_case(", "def __sandlot_unittest("),
                       ("def __sandlot_unittest(", "def __sandlot_split("),
                       ("def __sandlot_split(", ""))
)  # fmt: skip
_JS = (_HERE / "driver.js").read_text()
# What every sealed Python run's main.py begins with, for each set of parts: a warm zygote
# compiles these once (JailConfig.warm_preludes), where each run compiled its driver anew.
PY_PRELUDES = (
    *(_PY_CORE + strict + case for strict in ("", _PY_STRICT) for case in ("", _PY_CASE)),
    _PY_CORE + _PY_UNITTEST,
    *(_PY_CORE + case + _PY_SPLIT for case in ("", _PY_CASE)),
)


@dataclass(frozen=True, slots=True)
class Seal:
    """A request for a sealed run: accepted only if its tests are proven to have ended."""

    # Where the code's tests begin (a driver compiles the answer before them on its own, and
    # only the answer is on disk while the program runs); None: all of it is tests.
    tests_at: int | None = None
    strict: bool = False  # compare plain data only (the drivers' `strict`)
    entry: str | None = None  # the function the tests are about (HumanEval's entry point)
    # The tests' unittest.TestCase classes, which the driver runs itself (and counts).
    unittest: tuple[str, ...] | None = None
    # The split: the answer in a process of its own, its functions called through a socket
    # with plain data (python_driver.py's __sandlot_split).
    split: bool = False


@dataclass(frozen=True, slots=True)
class Sources:
    """What a build starts from, and whether its code is a test framework's."""

    files: dict[str, bytes]  # the request's files, a framework guard's, the program
    framework: bool  # every run is a test run, so every run is sealed


def sources(row: Language, code: str, files: dict[str, bytes], split: bool = False) -> Sources:
    """The only place a request's code is read: a step needs nothing of it beyond this. A
    judge's `split` program (sandlot/executor/split.py) starts from the answer alone."""
    framework = row.guard is not None and frameworks.sealed(row.guard, code)
    if split and row.split is not None:
        return Sources({**files, row.split.answer: code.encode()}, framework)
    extra = frameworks.build_files(row.guard, code) if row.guard is not None else {}
    return Sources({**files, **extra, row.source: row.program(code).encode()}, framework)


def seal_for(
    sources: Sources, asked: Seal | None, case: tuple[str, str] | None, strict: bool
) -> Seal | None:
    """Whether a run is sealed, and how: the one place that decides it. As asked; otherwise an
    expression case (its driver judges it) and a test framework's run are sealed anyway."""
    if asked is not None:
        return asked
    if case is not None or sources.framework:
        return Seal(strict=strict, split=strict)
    return None


def _called(expression: str) -> str | None:
    """The function an expression case is about, as HumanEval's entry point is: the one its
    outermost call names (`sum(1, 2)` is about the answer's own `sum`). In any other expression
    (`abs(f(2) - 4) < 1e-9`) no name of the answer's stands for a built-in."""
    try:
        node = ast.parse(expression.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the driver reports the case's own error
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def driver(harness: str, program: str, seal: Seal, case: tuple[str, str] | None) -> str:
    """The text of the driver that runs `program` (and judges `case` after it)."""
    tests_at = seal.tests_at or 0
    if case is not None:
        tests_at = len(program)  # the program is the answer; the case's text is the test
    entry = seal.entry if seal.entry is not None or case is None else _called(case[0])
    params = {"seal": sealing.SEAL_FILE, "program": PROGRAM_FILE, "strict": seal.strict,
              "entry": entry, "case": list(case) if case else None}  # fmt: skip
    if harness == "python":
        if seal.split and seal.unittest is None:
            parts = _PY_CORE + (_PY_CASE if case else "") + _PY_SPLIT
            params["split"] = True
            return f"{parts}\n__sandlot_driver({ {**params, 'tests_at': tests_at}!r})\n"
        parts = _PY_CORE + (_PY_STRICT if seal.strict else "") + (_PY_CASE if case else "")
        if seal.unittest is not None and case is None:
            parts += _PY_UNITTEST
            params["unittest"] = list(seal.unittest)
        return f"{parts}\n__sandlot_driver({ {**params, 'tests_at': tests_at}!r})\n"
    # JavaScript counts UTF-16 units
    units = len(program[:tests_at].encode("utf-16-le")) // 2
    return f"{_JS}\nsandlotDriver({json.dumps({**params, 'testsAt': units})});\n"


def run_files(
    row: Language,
    files: dict[str, bytes],
    secret: bytes,
    seal: Seal,
    case: tuple[str, str] | None = None,
) -> dict[str, bytes]:
    """The files of a sealed run step, from the build's (sources, artifacts, the request's)."""
    out = {**files, sealing.SEAL_FILE: secret}
    if row.compile is not None:
        out.pop(row.source, None)  # the tests are in it; the run needs only what was built
        if row.split is not None:
            out.pop(row.split.answer, None)
    if row.harness is not None:
        name = row.harness_program or row.source
        program = files[name]
        tests = out.pop(f"{TS_TESTS}.js", None)
        out.pop(f"{TS_TESTS}.ts", None)
        if tests is not None and case is None:  # a judge's TypeScript tests, built apart
            program += b"\n"
            seal = replace(seal, tests_at=len(program.decode(errors="surrogateescape")))
            program += tests
        out[PROGRAM_FILE] = program
        text = driver(row.harness, program.decode(errors="surrogateescape"), seal, case)
        out[name] = text.encode(errors="surrogateescape")
    if row.guard is not None:
        out.update(frameworks.run_files(row.guard))
    return out


def run_argv(row: Language) -> tuple[str, ...]:
    return frameworks.run_argv(row.guard, row.run) if row.guard is not None else row.run
