"""executor — turns code requests into jail runs: compile once, run one or many cases.

Imports the jail and the languages table; never the API, CLI or judge. The layers above use the
jail's `Outcome` only as this package hands it out (re-exported here), never the jail itself.
"""

from sandlot.executor.cases import Item, ItemOutcome, OnRun, Run
from sandlot.executor.compare import MODES, Checker
from sandlot.executor.guards import PY_PRELUDES, Seal
from sandlot.executor.limits import asked_of, limits_for
from sandlot.executor.results import (
    TIME_LIMITS,
    CaseResult,
    Execution,
    TestRun,
    Verdict,
    command_status,
    describe,
    return_code,
    verdict_of,
)
from sandlot.executor.runner import CodeRequest, Executor, TestCase
from sandlot.executor.seal import SEAL_FILE, counts
from sandlot.executor.shell import shell_spec
from sandlot.jail import Outcome

__all__ = [
    "MODES",
    "PY_PRELUDES",
    "SEAL_FILE",
    "TIME_LIMITS",
    "CaseResult",
    "Checker",
    "CodeRequest",
    "Execution",
    "Executor",
    "Item",
    "ItemOutcome",
    "OnRun",
    "Outcome",
    "Run",
    "Seal",
    "TestCase",
    "TestRun",
    "Verdict",
    "asked_of",
    "command_status",
    "counts",
    "describe",
    "limits_for",
    "return_code",
    "shell_spec",
    "verdict_of",
]
