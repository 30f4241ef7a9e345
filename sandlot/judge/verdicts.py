"""Per-test verdicts, derived from how a run ended. Reported in extra fields only: SandboxFusion's
own enums (Success/Failed/SandboxError) are never extended."""

from __future__ import annotations

from enum import StrEnum

from sandlot.executor import Execution
from sandlot.jail import Limit, Outcome


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    TIME_LIMIT = "time_limit_exceeded"
    MEMORY_LIMIT = "memory_limit_exceeded"
    OUTPUT_LIMIT = "output_limit_exceeded"
    RUNTIME_ERROR = "runtime_error"
    COMPILE_ERROR = "compile_error"
    SANDBOX_ERROR = "sandbox_error"
    NO_CODE = "no_code"
    SKIPPED = "skipped"  # not run: an earlier case failed and run_all_cases is off


def of_outcome(outcome: Outcome) -> Verdict | None:
    """The verdict a run earned by how it ended, or None when it ended cleanly (exit 0)."""
    if outcome.limit in (Limit.WALL_TIME, Limit.CPU_TIME):
        return Verdict.TIME_LIMIT
    if outcome.limit is Limit.MEMORY:
        return Verdict.MEMORY_LIMIT
    if outcome.limit is Limit.OUTPUT:
        return Verdict.OUTPUT_LIMIT
    if outcome.signal is not None or outcome.exit_code != 0:
        return Verdict.RUNTIME_ERROR
    return None


def of_execution(execution: Execution) -> Verdict:
    """A whole program's verdict: accepted iff it compiled and exited 0 within its limits."""
    if execution.error is not None:
        return Verdict.SANDBOX_ERROR
    if execution.compile is not None and not execution.compile.ok:
        if execution.compile.limit is Limit.MEMORY:
            return Verdict.MEMORY_LIMIT
        return Verdict.COMPILE_ERROR
    if execution.run is None:
        return Verdict.SANDBOX_ERROR
    bad = of_outcome(execution.run)
    if bad is None:
        return Verdict.ACCEPTED
    # A failed assertion is the program's way of saying "wrong answer".
    if bad is Verdict.RUNTIME_ERROR and _assertion(execution.run):
        return Verdict.WRONG_ANSWER
    return bad


def _assertion(outcome: Outcome) -> bool:
    tail = outcome.stderr[-4000:]
    return any(
        marker in tail
        for marker in (b"AssertionError", b"Assertion `", b"assertion failed", b"AssertionFailed",
                       b"assert.", b"FAILED", b"panicked at", b"Assertion failed.")
    )  # fmt: skip
