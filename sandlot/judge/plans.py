"""What an assembler hands the judge: one program to run, or a program and its stdin cases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandlot.judge.checkers import Checker
from sandlot.judge.extract import Extracted


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """SandboxFusion's TestConfig, as the judge uses it (`custom_extract_logic` is refused)."""

    language: str | None = None
    locale: str | None = None
    is_fewshot: bool = False
    compile_timeout: float | None = None
    run_timeout: float | None = None
    memory_mb: int | None = None
    dataset_type: str | None = None
    provided_data: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Needs:
    """What a dataset's runs need beyond the server's defaults, as its reference solutions
    show (a dataset spec's `needs`): every CPU of the jail's rather than the slot's one (a
    test that asserts two cores), more processes and threads (one that starts a thousand)."""

    any_cpu: bool = False
    pids: int = 0


@dataclass(slots=True)
class Program:
    """A program that is accepted iff it compiles and exits 0 within its limits."""

    language: str
    code: str
    test_code: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    run_timeout: float | None = None
    compile_timeout: float | None = None
    # run_timeout already derives from config.run_timeout (LiveCodeBench's is per case).
    timeout_from_config: bool = False
    test_info: dict[str, Any] | None = None
    # SandboxFusion's anti-hack check: code that exits early with success is not a solution.
    forbidden: tuple[str, ...] = ()
    # Test libraries that report failures but exit 0 (racket's rackunit): these in stderr reject.
    fail_markers: tuple[bytes, ...] = ()
    # Files the run leaves that the judge reads back (a test runner's report: reports.py).
    fetch: tuple[str, ...] = ()
    # Why the program's stdout is no pass, or None (testbenches that always exit 0 and print
    # their verdict).
    stdout_check: Callable[[bytes], str | None] | None = None
    # The run must prove that its tests ran to their end and passed (sandlot/executor/seal.py):
    # an early successful exit (`sys.exit(0)`, `os._exit(0)`, `System.exit(0)`, `exit(0)` in a
    # destructor...) is no pass. Python, JavaScript and TypeScript programs are run by a driver;
    # the others carry their guard in their text (sandlot/judge/guards.py).
    seal: bool = False
    # Where the tests begin in `code` (Python: the answer before them is compiled on its own).
    tests_at: int | None = None
    # The function the tests are about, where the row says (HumanEval's entry point): under
    # `strict`, the only name of the answer's that may stand for a built-in in the tests.
    entry: str | None = None
    # Skipped tests are allowed (the dataset's own convention); else a run that skipped any fails.
    skips_allowed: bool = False
    # How many tests the seal must attest passed (`passed=N` in its payload), as the judge counts
    # them in the dataset's test text, outside the box: a suite that ran fewer, more or none, or
    # one the answer replaced, never matches. None: the seal attests only the tests' end.
    tests: int | None = None
    # Python: the tests' unittest.TestCase classes, which the driver runs itself.
    unittest: tuple[str, ...] | None = None
    # Python: the tests only call the answer's functions (they build none of its objects), so it
    # runs in a process of its own, the tests calling it with plain data (unless the request
    # sends config.extra.split false).
    split: bool = False
    # A split program (sandlot/judge/split/): `code` is the answer's unit alone, these are the
    # harness's files, and `view` shows both as one text (the result's full_code).
    harness: dict[str, bytes] | None = None
    view: str | None = None
    # Assembled by its language's split (dialects.Split): the answer compiled apart from the
    # tests. A split row of integrity.py holds for these programs only.
    apart: bool = False
    needs: Needs = Needs()


@dataclass(frozen=True, slots=True)
class StdioCase:
    stdin: str
    expected: str


@dataclass(slots=True)
class StdioJob:
    """A program run once per case (compiled once), its stdout judged by a checker."""

    language: str
    code: str
    cases: list[StdioCase]
    checker: Checker
    run_all: bool = False  # run every case even after a failure
    files: dict[str, bytes] = field(default_factory=dict)
    run_timeout: float | None = None
    compile_timeout: float | None = None
    full_cases: bool = False  # return long stdin/stdout of passed cases untruncated


@dataclass(slots=True)
class Assembled:
    extracted: Extracted
    job: Program | StdioJob | None  # None: nothing to run (the reason says why)
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    refused: bool = False  # the answer was read and refused (the reason says why), not missing
