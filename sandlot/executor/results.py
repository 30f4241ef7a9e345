"""What the executor returns, and the one mapping from how a run ended to a verdict: the judge's
per-test verdicts, SandboxFusion's statuses and the reasons given for a failed case all derive
from `verdict_of`.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from enum import StrEnum

from sandlot.jail import Limit, Outcome

UNPROVEN = (
    "the tests did not run to their end: the program exited 0 before its tests had all run "
    "and passed"
)

# SandboxFusion's enums (research/sandboxfusion.md §1.2); never add values, add fields instead.
SUCCESS, FAILED, SANDBOX_ERROR = "Success", "Failed", "SandboxError"
FINISHED, TIME_LIMIT_EXCEEDED, ERROR = "Finished", "TimeLimitExceeded", "Error"
TIME_LIMITS = frozenset({Limit.WALL_TIME, Limit.CPU_TIME})


class Verdict(StrEnum):
    """A test's verdict (sandlot's extra fields; SandboxFusion's enums are never extended)."""

    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    TIME_LIMIT = "time_limit_exceeded"
    MEMORY_LIMIT = "memory_limit_exceeded"
    OUTPUT_LIMIT = "output_limit_exceeded"
    RUNTIME_ERROR = "runtime_error"
    COMPILE_ERROR = "compile_error"
    SANDBOX_ERROR = "sandbox_error"
    NO_CODE = "no_code"
    REFUSED = "refused"  # not run: the answer holds what its family may not (not data, say)
    SKIPPED = "skipped"  # not run: an earlier case failed and run_all_cases is off


_BY_LIMIT = {Limit.WALL_TIME: Verdict.TIME_LIMIT, Limit.CPU_TIME: Verdict.TIME_LIMIT,
             Limit.MEMORY: Verdict.MEMORY_LIMIT, Limit.OUTPUT: Verdict.OUTPUT_LIMIT}  # fmt: skip


def verdict_of(outcome: Outcome) -> Verdict | None:
    """The verdict a run earned by how it ended, or None when it ended cleanly (exit 0)."""
    if outcome.limit is not None:
        return _BY_LIMIT[outcome.limit]
    if outcome.signal is not None or outcome.exit_code != 0:
        return Verdict.RUNTIME_ERROR
    return None


def describe(outcome: Outcome) -> str:
    """Why a run gave no answer, in words: the limit that stopped it, its signal or exit code."""
    verdict = verdict_of(outcome)
    if verdict is not None and verdict is not Verdict.RUNTIME_ERROR:
        return verdict.value.replace("_", " ")
    if outcome.signal is not None:
        return f"killed by signal {outcome.signal}"
    return f"exited with code {outcome.exit_code}"


_SIGNALS = frozenset(signal.Signals)
COMPILE_STEP, RUN_STEP = "the compile step", "the program"  # how a message names each step


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB"


def in_words(outcome: Outcome, step: str) -> str:
    """How a step that did not just succeed ended, for a person: `step` is "the program" or
    "the compile step"."""
    if outcome.limit is Limit.WALL_TIME:
        return f"time limit: {step} was stopped after {outcome.wall_time:.1f}s"
    if outcome.limit is Limit.CPU_TIME:
        return f"CPU time limit: {step} was stopped after {outcome.cpu_time:.1f}s of CPU"
    if outcome.limit is Limit.MEMORY:
        return f"memory limit: {step} was killed at {_mib(outcome.memory_peak)}"
    if outcome.limit is Limit.OUTPUT:
        stream, size = (("stdout", len(outcome.stdout)) if outcome.stdout_truncated
                        else ("stderr", len(outcome.stderr)))  # fmt: skip
        return f"output limit: its {stream} passed {_mib(size)}, so {step} was stopped"
    if outcome.signal is not None:
        name = signal.Signals(outcome.signal).name if outcome.signal in _SIGNALS else "?"
        return f"{step} was killed by signal {outcome.signal} ({name})"
    if step == COMPILE_STEP:
        return f"{step} failed with exit code {outcome.exit_code}"
    return f"{step} exited with code {outcome.exit_code}"


def command_status(outcome: Outcome) -> str:
    return TIME_LIMIT_EXCEEDED if verdict_of(outcome) is Verdict.TIME_LIMIT else FINISHED


def return_code(outcome: Outcome) -> int | None:
    """Exit code, or minus the signal number as SandboxFusion reports; None on a time limit."""
    if command_status(outcome) == TIME_LIMIT_EXCEEDED:
        return None
    if outcome.signal is not None:
        return -outcome.signal
    return outcome.exit_code


@dataclass(slots=True)
class Execution:
    """One request's compile and run steps as they happened."""

    language: str
    compile: Outcome | None = None
    run: Outcome | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    error: str | None = None  # the sandbox could not serve the request (not the program's fault)
    cached: bool = False  # the compile step came from the compile cache
    sealed: bool = False  # the run had to prove that its tests ran to their end (seal.py)
    proof: bytes | None = None  # the payload of the seal it wrote, if it wrote one

    @property
    def unproven(self) -> bool:
        """A sealed run that exited 0 without its seal: its tests did not all run and pass."""
        return self.sealed and self.proof is None and self.run is not None and self.run.ok

    @property
    def status(self) -> str:
        """SandboxFusion's status of the request: a sealed run without its seal failed."""
        return FAILED if self.unproven else self.run_status

    @property
    def run_status(self) -> str:
        """The status by how the steps ended alone (the judge's exec_info: SandboxFusion's). A
        step a limit stopped failed even if it exited 0: a program that overran the output cap
        and exited before it could be killed must not succeed or fail by that race."""
        if self.error is not None:
            return SANDBOX_ERROR
        for step in (self.compile, self.run):
            if step is not None and not step.ok:
                return FAILED
        return SUCCESS

    @property
    def message(self) -> str:
        """Why the request failed, in words; "" when it did not."""
        if self.error is not None:
            return self.error
        if self.unproven:
            return UNPROVEN
        for step, outcome in ((COMPILE_STEP, self.compile), (RUN_STEP, self.run)):
            if outcome is not None and verdict_of(outcome) is not None:
                return in_words(outcome, step)
        return ""


@dataclass(slots=True)
class CaseResult:
    """One test case: whether it passed, what was expected and what came out."""

    passed: bool
    run: Outcome | None
    expected: str
    actual: str | None
    input: str | None = None
    stdin: str | None = None
    error: str | None = None


@dataclass(slots=True)
class TestRun:
    execution: Execution  # the build, and the run of the first failing case (else the last)
    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        return (
            self.execution.error is None and bool(self.cases) and all(c.passed for c in self.cases)
        )

    @property
    def message(self) -> str:
        """Why the cases failed, in words: the build's failure, or how many failed and why the
        first did; "" when they all passed."""
        failed = [(n, c) for n, c in enumerate(self.cases, 1) if not c.passed]
        if self.execution.message or not failed:
            return self.execution.message
        n, first = failed[0]
        if first.error:
            why = first.error
        elif first.run is not None and verdict_of(first.run) is not None:
            why = in_words(first.run, RUN_STEP)
        else:
            why = "wrong answer"
        return f"{len(failed)} of {len(self.cases)} test cases failed, the first is case {n}: {why}"
