"""Batch evaluation: many samples (several per problem) judged concurrently, with pass@k.

Used by `POST /evaluate` and by `sandlot eval` against the local engine. Samples are numbered
per problem in input order, so that (id, sample) names one sample across interrupted runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sandlot.errors import InvalidRequest
from sandlot.judge.engine import EvalResult, Judge
from sandlot.judge.plans import JudgeConfig

ID_KEYS = ("id", "task_id", "problem_id")
COMPLETION_KEYS = ("completion", "solution")


@dataclass(frozen=True, slots=True)
class Sample:
    id: str | int
    completion: str
    index: int  # the n-th sample of this problem, from 0

    @property
    def key(self) -> tuple[str, int]:
        return str(self.id), self.index


def number_samples(rows: Iterable[dict[str, Any]], where: str = "samples") -> list[Sample]:
    """Rows {id|task_id|problem_id, completion|solution} -> samples numbered per problem."""
    seen: dict[str, int] = {}
    out = []
    for n, row in enumerate(rows, 1):
        pid = next((row[k] for k in ID_KEYS if row.get(k) is not None), None)
        completion = next((row[k] for k in COMPLETION_KEYS if row.get(k) is not None), None)
        if pid is None or not isinstance(completion, str):
            raise InvalidRequest(
                f"{where}, sample {n}: needs an id ({'/'.join(ID_KEYS)}) and a completion "
                f"string ({'/'.join(COMPLETION_KEYS)})"
            )
        index = seen.get(str(pid), 0)
        seen[str(pid)] = index + 1
        out.append(Sample(pid, completion, index))
    return out


def record(sample: Sample, result: EvalResult) -> dict[str, Any]:
    """The per-sample line written to a results file (what an eval report is built from)."""
    extra = result.extra or {}
    return {
        "id": sample.id, "sample": sample.index, "accepted": result.accepted,
        "verdict": extra.get("verdict"), "reason": extra.get("reason"),
        "extracted_type": result.extracted_type, "dataset": extra.get("dataset"),
        "language": extra.get("language"), "run_time": run_time(result),
    }  # fmt: skip


def run_time(result: EvalResult) -> float | None:
    """Seconds the sample's tests ran (wall time of the run steps, compiles not counted)."""
    runs = [t.execution.run for t in result.tests if t.execution is not None]
    times = [run.wall_time for run in runs if run is not None]
    return round(sum(times), 6) if times else None


async def judge_many(
    judge: Judge,
    dataset: str,
    samples: list[Sample],
    cfg: JudgeConfig,
    concurrency: int,
    on_done: Callable[[Sample, EvalResult], None] | None = None,
) -> list[EvalResult]:
    """Judge every sample, `concurrency` at a time; results in input order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(sample: Sample) -> EvalResult:
        async with gate:
            result = await judge.submit(dataset, sample.id, sample.completion, cfg)
        if on_done is not None:
            on_done(sample, result)
        return result

    return list(await asyncio.gather(*(one(s) for s in samples)))
