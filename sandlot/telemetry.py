"""What the engine tells about its work: Prometheus metrics, and the record of the request being
served (what its access-log line says).

The layers below the API call the functions here as things happen (a run ended, a request
waited for a slot, the compile cache answered); none of them knows about HTTP. The API's
middleware opens a `RequestRecord` per request in a context variable, so that what a run adds
lands on the request that caused it, also from the tasks a request fans out into.

With several server processes (`serve --workers N`) the metrics live in prometheus-client's
multiprocess mode: `PROMETHEUS_MULTIPROC_DIR` is set before this module is first imported, every
process writes its own files there, and a scrape of any process sums them all. Gauges add up
over the live processes. Names follow go-judge's (`*_seconds`, `*_bytes`, `*_total`).
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)

from sandlot.jail.spec import Outcome

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
MiB = 1 << 20
_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
_BOX_START = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 2)
_QUEUE = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60)
_MEMORY = tuple(float(MiB << k) for k in range(0, 16, 2))  # 1 MiB .. 16 GiB
disable_created_metrics()  # a `*_created` series per series doubles a scrape for no reader

HTTP_REQUESTS = Counter("sandlot_http_requests", "HTTP requests answered", ["endpoint", "status"])
HTTP_SECONDS = Histogram(
    "sandlot_http_request_duration_seconds", "time to answer a request", ["endpoint"],
    buckets=_SECONDS,
)  # fmt: skip
RUN_SECONDS = Histogram(
    "sandlot_exec_time_seconds", "wall time of a run (compile or run step)",
    ["language", "step", "status"], buckets=_SECONDS,
)  # fmt: skip
RUN_CPU = Histogram(
    "sandlot_exec_cpu_seconds", "CPU time of a run", ["language", "step", "status"],
    buckets=_SECONDS,
)  # fmt: skip
RUN_MEMORY = Histogram(
    "sandlot_exec_memory_bytes", "peak memory of a run", ["language", "step", "status"],
    buckets=_MEMORY,
)  # fmt: skip
BOX_START = Histogram(
    "sandlot_box_start_seconds", "time from a run's turn to its program starting in a box",
    buckets=_BOX_START,
)  # fmt: skip
QUEUE_SECONDS = Histogram(
    "sandlot_queue_wait_seconds", "time a run waited for a slot", buckets=_QUEUE
)
QUEUE_WAITING = Gauge(
    "sandlot_queue_waiting", "requests waiting for a slot", multiprocess_mode="livesum"
)
SLOTS_BUSY = Gauge("sandlot_slots_busy", "slots running a box", multiprocess_mode="livesum")
SLOTS = Gauge("sandlot_slots", "slots of the server", multiprocess_mode="livesum")
REJECTED = Counter("sandlot_rejected", "requests refused for want of a slot (HTTP 504)", ["reason"])
CACHE = Counter("sandlot_compile_cache", "compile-cache lookups", ["result"])
VERDICTS = Counter("sandlot_judge_verdicts", "judged submissions", ["dataset", "verdict"])
ERRORS = Counter("sandlot_errors", "errors, by kind", ["kind"])
SESSIONS = Gauge(
    "sandlot_sessions", "sessions held, live or paused (state on disk, box freed)", ["state"],
    multiprocess_mode="livesum",
)  # fmt: skip
BRANCHED = Histogram(
    "sandlot_session_branch_seconds", "time to snapshot, fork, pause or resume a session",
    ["kind"], buckets=_SECONDS,
)  # fmt: skip
STATE_SECONDS = Histogram(
    "sandlot_session_state_seconds",
    "time a session's agent took to save, load or rebase its state for a snapshot: wall time, "
    "and the CPU time of its whole box meanwhile", ["op", "clock"], buckets=_SECONDS,
)  # fmt: skip


@dataclass(slots=True)
class RequestRecord:
    """What one request did, for its access-log line."""

    id: str
    language: str | None = None
    verdict: str | None = None
    limit: str | None = None
    runs: int = 0
    run_seconds: float = 0.0
    queue_seconds: float = 0.0
    admitted: bool = False  # a run of it has held a slot: its other runs wait their turns


CURRENT: ContextVar[RequestRecord | None] = ContextVar("sandlot_request", default=None)


def status_of(outcome: Outcome) -> str:
    """ok, error (a non-zero exit or a signal) or the limit that ended the run."""
    if outcome.limit is not None:
        return outcome.limit.value
    return "ok" if outcome.exit_code == 0 and outcome.signal is None else "error"


def ran(language: str, step: str, outcome: Outcome) -> None:
    status = status_of(outcome)
    RUN_SECONDS.labels(language, step, status).observe(outcome.wall_time)
    RUN_CPU.labels(language, step, status).observe(outcome.cpu_time)
    RUN_MEMORY.labels(language, step, status).observe(outcome.memory_peak)
    start = outcome.stages.get("start")
    if start is not None:
        BOX_START.observe(start + outcome.stages.get("setup", 0.0))
    record = CURRENT.get()
    if record is not None:
        record.language = language
        record.runs += 1
        record.run_seconds += outcome.wall_time
        if outcome.limit is not None and record.limit is None:
            record.limit = outcome.limit.value
        if status != "ok" and record.verdict in (None, "ok"):
            record.verdict = status  # the first run that did not just succeed tells
        elif record.verdict is None and step == "run":
            record.verdict = status


def queued(seconds: float) -> None:
    QUEUE_SECONDS.observe(seconds)
    record = CURRENT.get()
    if record is not None:
        record.queue_seconds += seconds


def slots_changed(total: int, busy: int, waiting: int) -> None:
    SLOTS.set(total)
    SLOTS_BUSY.set(busy)
    QUEUE_WAITING.set(waiting)


def rejected(reason: str) -> None:
    REJECTED.labels(reason).inc()


def compile_cache(hit: bool) -> None:
    CACHE.labels("hit" if hit else "miss").inc()


def judged(dataset: str, language: str | None, verdict: str) -> None:
    VERDICTS.labels(dataset, verdict).inc()
    record = CURRENT.get()
    if record is not None:
        record.verdict = verdict
        record.language = language or record.language


def error(kind: str) -> None:
    ERRORS.labels(kind).inc()


def sessions_held(live: int, paused: int) -> None:
    SESSIONS.labels("live").set(live)
    SESSIONS.labels("paused").set(paused)


def branched(kind: str, seconds: float) -> None:
    """A session was snapshotted, forked, paused or resumed (`kind`), in `seconds`."""
    BRANCHED.labels(kind).observe(seconds)


def state_kept(op: str, wall: float, cpu: float) -> None:
    """A session's agent did a snapshot's `op` in `wall` seconds, its box using `cpu`."""
    STATE_SECONDS.labels(op, "wall").observe(wall)
    STATE_SECONDS.labels(op, "cpu").observe(cpu)


def answered(endpoint: str, status: int, seconds: float) -> None:
    HTTP_REQUESTS.labels(endpoint, str(status)).inc()
    HTTP_SECONDS.labels(endpoint).observe(seconds)


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, of every server process, and their type."""
    if os.environ.get(MULTIPROCESS_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def process_gone(pid: int) -> None:
    """A server process exited: its live gauges stop counting (multiprocess mode)."""
    if os.environ.get(MULTIPROCESS_ENV):
        multiprocess.mark_process_dead(pid)
