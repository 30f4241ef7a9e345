"""Per-test verdicts, derived from how a run ended (the executor's one mapping, `verdict_of`).
Reported in extra fields only: SandboxFusion's own enums (Success/Failed/SandboxError) are never
extended."""

from __future__ import annotations

from sandlot.executor import Execution, Outcome, Verdict, verdict_of

__all__ = ["Verdict", "of_execution"]


def of_execution(execution: Execution) -> Verdict:
    """A whole program's verdict: accepted iff it compiled and exited 0 within its limits."""
    if execution.error is not None:
        return Verdict.SANDBOX_ERROR
    if execution.compile is not None and not execution.compile.ok:
        if verdict_of(execution.compile) is Verdict.MEMORY_LIMIT:
            return Verdict.MEMORY_LIMIT
        return Verdict.COMPILE_ERROR
    if execution.run is None:
        return Verdict.SANDBOX_ERROR
    bad = verdict_of(execution.run)
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
