"""judge — datasets, prompts, code extraction, program assembly, checkers, verdicts, pass@k.

Calls the executor, never the jail.
"""

from sandlot.judge.batch import Sample, judge_many, number_samples, record
from sandlot.judge.datasets import Datasets, integrity_rows
from sandlot.judge.engine import EvalResult, Judge, TestOutcome
from sandlot.judge.integrity import weakest
from sandlot.judge.metric_functions import source
from sandlot.judge.metrics import counts, summarize
from sandlot.judge.plans import JudgeConfig
from sandlot.judge.rewards import ItemResult, RewardItem, check_size, score_batch

__all__ = [
    "Datasets",
    "EvalResult",
    "ItemResult",
    "Judge",
    "JudgeConfig",
    "RewardItem",
    "Sample",
    "TestOutcome",
    "check_size",
    "counts",
    "integrity_rows",
    "judge_many",
    "number_samples",
    "record",
    "score_batch",
    "source",
    "summarize",
    "weakest",
]
