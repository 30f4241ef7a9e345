"""Judging on a Ray cluster (`sandlot eval --ray ADDRESS`): one engine per node, fed by the driver.

Every alive node of the cluster gets one actor, pinned to it, that runs sandlot's own engine
there: the Service `sandlot serve` runs, with the node's slots and jail. The driver cuts the
samples into chunks and keeps at most `CHUNKS_IN_FLIGHT` chunks per node in flight (back-
pressure: a slow node gets less, nothing piles up in the object store), and hands every result,
as it comes back, to the same callback as a local run, so the progress bar, the resumable
results file and pass@k are those of local `eval`. A record is the one a local run writes.

Two engines on one machine (a local test cluster) must not share uids or work dirs, so engine k
uses `uid_base + k * slots` and `state_dir/ray-k`. Ray is an optional extra: `sandlot[ray]`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandlot.config import Config
from sandlot.errors import SandlotError
from sandlot.judge import Sample

CHUNKS_IN_FLIGHT = 2
Done = Callable[[Sample, dict[str, Any]], None]


class _Engine:
    """The actor: a Service on its node, judging chunks of samples through the local engine."""

    def __init__(self, config_path: str | None, index: int) -> None:
        from sandlot.service import Service

        cfg = Config.load(config_path)
        # queue_timeout: the driver's chunks wait their turns as long as it takes.
        cfg = dataclasses.replace(cfg, uid_base=cfg.uid_base + index * cfg.slots,
                                  state_dir=f"{cfg.state_dir}/ray-{index}",
                                  queue_timeout=math.inf)  # fmt: skip
        self.service = Service(cfg).start()
        if self.service.problem is not None:
            raise SandlotError(f"no isolation on this node: {self.service.problem}")

    def slots(self) -> int:
        return self.service.config.slots

    async def judge(self, dataset: str, rows: list[tuple[Any, str, int]], extra: dict[str, Any],
                    language: str | None) -> list[dict[str, Any]]:  # fmt: skip
        from sandlot.judge import JudgeConfig
        from sandlot.usecases import evaluate

        samples = [Sample(pid, completion, index) for pid, completion, index in rows]
        cfg = JudgeConfig(language=language, extra=extra)
        return [j.record for j in await evaluate(self.service, dataset, samples, cfg)]

    def close(self) -> None:
        self.service.close()


def run_ray(
    address: str, dataset: str, samples: list[Sample], extra: dict[str, Any],
    language: str | None, config: Path | None, on_done: Done,
) -> dict[str, int]:  # fmt: skip
    """Judge `samples` over the cluster at `address` ("auto": the one this machine is in);
    returns how many samples each node judged."""
    try:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError:
        raise SandlotError("--ray needs Ray: pip install 'sandlot[ray]'") from None
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    engine = ray.remote(num_cpus=0)(_Engine)
    actors: list[tuple[str, Any]] = []
    try:
        for k, node in enumerate(n for n in ray.nodes() if n["Alive"]):
            pin = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            actor = engine.options(scheduling_strategy=pin).remote(
                str(config) if config else None, k
            )
            actors.append((node["NodeID"], actor))
        slots = _get(ray, [a.slots.remote() for _, a in actors])
        return _drive(ray, actors, slots, dataset, samples, extra, language, on_done)
    finally:
        for _, actor in actors:
            with contextlib.suppress(SandlotError):  # one that never started said why above
                _get(ray, [actor.close.remote()])
            ray.kill(actor)
        ray.shutdown()


def _drive(
    ray: Any, actors: list[tuple[str, Any]], slots: list[int], dataset: str,
    samples: list[Sample], extra: dict[str, Any], language: str | None, on_done: Done,
) -> dict[str, int]:  # fmt: skip
    chunk = max(2, 2 * min(slots))
    todo = deque(samples[i : i + chunk] for i in range(0, len(samples), chunk))
    pending: dict[Any, tuple[int, list[Sample]]] = {}
    judged = {node: 0 for node, _ in actors}

    def send(k: int) -> None:
        if todo:
            part = todo.popleft()
            rows = [(s.id, s.completion, s.index) for s in part]
            pending[actors[k][1].judge.remote(dataset, rows, extra, language)] = (k, part)

    for k in range(len(actors)):
        for _ in range(CHUNKS_IN_FLIGHT):
            send(k)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        k, part = pending.pop(ready[0])
        for sample, rec in zip(part, _get(ray, ready)[0], strict=True):
            on_done(sample, rec)
        judged[actors[k][0]] += len(part)
        send(k)
    return judged


def _get(ray: Any, refs: list[Any]) -> list[Any]:
    """ray.get, with an engine's own error (an unknown dataset, no isolation) as itself."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.as_instanceof_cause()
        if isinstance(cause, SandlotError):
            raise SandlotError(str(getattr(exc, "cause", cause))) from None
        raise
    except ray.exceptions.RayActorError as exc:
        raise SandlotError(f"a judging engine died: {exc}") from None
