"""judge — datasets, prompts, code extraction, program assembly, checkers, verdicts, pass@k.

Calls the executor, never the jail.
"""

from sandlot.judge.datasets import Datasets
from sandlot.judge.engine import EvalResult, Judge, TestOutcome
from sandlot.judge.plans import JudgeConfig

__all__ = ["Datasets", "EvalResult", "Judge", "JudgeConfig", "TestOutcome"]
