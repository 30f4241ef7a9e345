"""executor — turns code requests into jail runs: compile once, run one or many cases.

Imports the jail and the languages table; never the API, CLI or judge. The layers above use the
jail's `Outcome` only as this package hands it out (re-exported here), never the jail itself.
"""

from sandlot.executor.cases import Item, ItemOutcome, OnRun, Run
from sandlot.executor.guards import Seal
from sandlot.executor.results import (
    TIME_LIMITS,
    CaseResult,
    Execution,
    TestRun,
    Verdict,
    command_status,
    return_code,
    verdict_of,
)
from sandlot.executor.runner import CodeRequest, Executor, TestCase
from sandlot.jail import Outcome

__all__ = [
    "TIME_LIMITS",
    "CaseResult",
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
    "command_status",
    "return_code",
    "verdict_of",
]
