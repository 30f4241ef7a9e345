"""executor — turns code requests into jail runs: compile once, run one or many cases.

Imports the jail and the languages table; never the API, CLI or judge.
"""

from sandlot.executor.results import CaseResult, Execution, TestRun
from sandlot.executor.runner import CodeRequest, Executor, TestCase

__all__ = ["CaseResult", "CodeRequest", "Execution", "Executor", "TestCase", "TestRun"]
