"""Judging: the datasets and their prompts (`/list_datasets`, `/get_prompts`, the MCP prompt
tool), one completion (`/submit`, the MCP judge tool), many samples of one dataset by this
machine's engine, and the results file an interrupted evaluation resumes from.

`POST /evaluate`, `sandlot eval` (its local engine) and the Ray actor of `sandlot eval --ray` all
judge through `evaluate`: every problem id is checked before anything runs, then the samples are
judged `slots * 2` at a time (one waits in the queue for each that runs, so a slot never idles
between two), and each judged sample is recorded as the line a results file holds
(`answer_record` makes the same line of a sample a server judged, for `sandlot eval --server`).

A result is reused only for the same sample judged the same way: each line carries a fingerprint
of the dataset, the judging options and the completion, so a samples file rewritten with other
completions, or judged against another dataset, is judged again (and the stale lines leave the
results file).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandlot.judge import Sample, judge_many, result_record

if TYPE_CHECKING:
    from sandlot.judge import EvalResult, Judge, JudgeConfig
    from sandlot.service import Service
    from sandlot.wire import EvalResult as Answer

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Judged:
    """One sample and its verdict, with the line a results file holds for it."""

    sample: Sample
    result: EvalResult
    record: Record = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "record", result_record(self.sample, self.result))


def dataset_names(service: Service) -> list[str]:
    """Every dataset id this server can judge."""
    return service.judge.datasets.names()


def dataset_name(service: Service, dataset: str, cfg: JudgeConfig) -> str:
    """The name of the dataset `cfg` picks by `dataset` (an alias, or a language's variant); an
    error names a dataset that does not exist."""
    return service.judge.spec(dataset, cfg).name


async def problem_ids(service: Service, dataset: str, cfg: JudgeConfig) -> list[str | int]:
    """Every problem id of the dataset."""
    return await asyncio.to_thread(service.judge.ids, dataset, cfg)


async def prompts(
    service: Service, dataset: str, cfg: JudgeConfig, offset: int = 0, limit: int | None = None
) -> list[dict[str, Any]]:
    """The dataset's problems from `offset` (at most `limit`), as a model would be given them."""
    return await asyncio.to_thread(service.judge.prompts, dataset, cfg, offset, limit)


async def prompt_by_id(
    service: Service, dataset: str, problem_id: str | int, cfg: JudgeConfig
) -> dict[str, Any]:
    """One problem's prompt, as a model would be given it."""
    return await asyncio.to_thread(service.judge.prompt_by_id, dataset, problem_id, cfg)


async def submit(
    service: Service, dataset: str, problem_id: str | int, completion: str, cfg: JudgeConfig
) -> EvalResult:
    """One completion judged on one problem of `dataset`."""
    return await service.judge.submit(dataset, problem_id, completion, cfg)


def check_ids(judge: Judge, dataset: str, samples: Iterable[Sample], cfg: JudgeConfig) -> None:
    """The dataset exists and has every sample's problem (its error names the first that is
    not): a misspelt name or a wrong id fails before anything is judged."""
    for s in samples:
        judge.problem(dataset, s.id, cfg)


async def evaluate(
    service: Service,
    dataset: str,
    samples: list[Sample],
    cfg: JudgeConfig,
    on_judged: Callable[[Judged], None] | None = None,
) -> list[Judged]:
    """Judge every sample on this machine, `slots * 2` at a time; results in input order, and
    each handed to `on_judged` as soon as it is known."""
    judge = service.judge
    check_ids(judge, dataset, samples, cfg)

    def done(sample: Sample, result: EvalResult) -> None:
        if on_judged is not None:
            on_judged(Judged(sample, result))

    concurrency = max(1, service.config.slots * 2)
    results = await judge_many(judge, dataset, samples, cfg, concurrency, done)
    return [Judged(s, r) for s, r in zip(samples, results, strict=True)]


def answer_record(sample: Sample, answer: Answer, dataset: str) -> Record:
    """The results line of a sample a server judged (its `/submit` answer): the line `record`
    makes of a local verdict, from the wire."""
    extra = answer.extra or {}
    runs = [t.exec_info.run_result for t in answer.tests]
    times = [r.execution_time for r in runs if r is not None and r.execution_time is not None]
    return {
        "id": sample.id, "sample": sample.index, "accepted": answer.accepted,
        "verdict": extra.get("verdict"), "reason": extra.get("reason"),
        "extracted_type": answer.extracted_type, "dataset": extra.get("dataset") or dataset,
        "language": extra.get("language"), "run_time": round(sum(times), 6) if times else None,
    }  # fmt: skip


def fingerprint(dataset: str, language: str | None, extra: dict[str, Any], sample: Sample) -> str:
    """What a result was judged from: the dataset, the options and the completion itself."""
    what = json.dumps([dataset, language, extra, str(sample.id), sample.completion])
    return hashlib.sha256(what.encode()).hexdigest()[:32]


def read_done(lines: list[str]) -> dict[tuple[str, int], Record]:
    """Records of an earlier run (a torn last line from an interruption is ignored)."""
    done: dict[tuple[str, int], Record] = {}
    for line in lines:
        try:
            rec = json.loads(line)
            done[(str(rec["id"]), int(rec["sample"]))] = rec
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
    return done


class ResultsFile:
    """A results JSONL of one evaluation: what an earlier run judged that still holds, and the
    lines of this run appended as they come (a crash loses at most the samples in flight).

    The file is rewritten with only the reusable lines when it holds anything else (stale
    results, a torn line), so that it says what this run found and appends stay whole."""

    def __init__(
        self, path: Path, dataset: str, language: str | None, extra: dict[str, Any],
        samples: list[Sample], restart: bool = False,
    ) -> None:  # fmt: skip
        self.path = path
        self.samples = samples
        if restart and path.exists():
            path.unlink()
        self.prints = {s.key: fingerprint(dataset, language, extra, s) for s in samples}
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        earlier = read_done(lines)
        self.done = {
            k: rec for k, rec in earlier.items() if rec.get("fingerprint") == self.prints.get(k)
        }
        self.stale = len(earlier) - len(self.done)  # other completions, dataset or options
        if len(self.done) != len(lines):
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(
                "".join(json.dumps(r) + "\n" for r in self.done.values()), encoding="utf-8"
            )
            tmp.replace(path)

    @property
    def todo(self) -> list[Sample]:
        """The samples still to judge, in input order."""
        return [s for s in self.samples if s.key not in self.done]

    @contextmanager
    def appending(self) -> Iterator[Callable[[Sample, Record], Record]]:
        """`add(sample, record)`: the record, fingerprinted, appended and kept."""
        with self.path.open("a", encoding="utf-8") as sink:

            def add(sample: Sample, rec: Record) -> Record:
                rec = {**rec, "fingerprint": self.prints[sample.key]}
                sink.write(json.dumps(rec) + "\n")
                sink.flush()
                self.done[sample.key] = rec
                return rec

            yield add

    def records(self) -> list[Record]:
        """Every judged sample's record, in input order."""
        return [self.done[s.key] for s in self.samples if s.key in self.done]
