"""What the executor returns, and the one mapping from jail outcomes to SandboxFusion's verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field

from sandlot.jail import Limit, Outcome

# SandboxFusion's enums (research/sandboxfusion.md §1.2); never add values, add fields instead.
SUCCESS, FAILED, SANDBOX_ERROR = "Success", "Failed", "SandboxError"
FINISHED, TIME_LIMIT_EXCEEDED, ERROR = "Finished", "TimeLimitExceeded", "Error"


def command_status(outcome: Outcome) -> str:
    return TIME_LIMIT_EXCEEDED if outcome.limit in (Limit.WALL_TIME, Limit.CPU_TIME) else FINISHED


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

    @property
    def status(self) -> str:
        if self.error is not None:
            return SANDBOX_ERROR
        for step in (self.compile, self.run):
            if step is not None and (
                command_status(step) == TIME_LIMIT_EXCEEDED or return_code(step) != 0
            ):
                return FAILED
        return SUCCESS


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
