"""The judge's checkers: the executor's output comparison (`sandlot.executor.compare`), plus
testlib's exit codes for a custom checker program, which the judge runs in the jail."""

from __future__ import annotations

from sandlot.executor import MODES, Checker

__all__ = ["MODES", "TESTLIB", "Checker"]

# testlib's exit codes
TESTLIB = {0: "ok", 1: "wrong answer", 2: "presentation error", 3: "checker failed",
           7: "partially correct"}  # fmt: skip
