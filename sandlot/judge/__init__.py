"""judge — datasets, prompts, code extraction, program assembly, checkers, verdicts, pass@k.

Calls the executor, never the jail.
"""

from sandlot.judge.batch import Sample, judge_many, number_samples
from sandlot.judge.batch import record as result_record
from sandlot.judge.datasets import Datasets, integrity_rows
from sandlot.judge.engine import EvalResult, Judge, TestOutcome
from sandlot.judge.integrity import weakest
from sandlot.judge.metric_functions import source as metric_function_source
from sandlot.judge.metrics import counts as sample_counts
from sandlot.judge.metrics import summarize as pass_at_k
from sandlot.judge.plans import JudgeConfig
from sandlot.judge.rewards import ItemResult, RewardItem, score_batch
from sandlot.judge.rewards import check_size as check_batch_size

__all__ = [
    "Datasets",
    "EvalResult",
    "ItemResult",
    "Judge",
    "JudgeConfig",
    "RewardItem",
    "Sample",
    "TestOutcome",
    "check_batch_size",
    "integrity_rows",
    "judge_many",
    "metric_function_source",
    "number_samples",
    "pass_at_k",
    "result_record",
    "sample_counts",
    "score_batch",
    "weakest",
]
