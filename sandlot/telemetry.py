"""The server's Prometheus metrics: what the engine tells (`sandlot.events`), counted, and the
HTTP requests answered.

Importing this module makes it a listener of the engine's events in this process: the server
imports it, a client-only install (which has no prometheus-client) never does.

With several server processes (`serve --workers N`) the metrics live in prometheus-client's
multiprocess mode: `PROMETHEUS_MULTIPROC_DIR` is set before this module is first imported, every
process writes its own files there, and a scrape of any process sums them all. Gauges add up
over the live processes. Names follow go-judge's (`*_seconds`, `*_bytes`, `*_total`).
"""

from __future__ import annotations

import os

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

from sandlot import events
from sandlot.jail import Outcome

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


class Metrics:
    """The engine's events, as metrics (an `events.Listener`)."""

    def ran(self, language: str, step: str, status: str, outcome: Outcome) -> None:
        RUN_SECONDS.labels(language, step, status).observe(outcome.wall_time)
        RUN_CPU.labels(language, step, status).observe(outcome.cpu_time)
        RUN_MEMORY.labels(language, step, status).observe(outcome.memory_peak)
        start = outcome.stages.get("start")
        if start is not None:
            BOX_START.observe(start + outcome.stages.get("setup", 0.0))

    def queued(self, seconds: float) -> None:
        QUEUE_SECONDS.observe(seconds)

    def slots_changed(self, total: int, busy: int, waiting: int) -> None:
        SLOTS.set(total)
        SLOTS_BUSY.set(busy)
        QUEUE_WAITING.set(waiting)

    def rejected(self, reason: str) -> None:
        REJECTED.labels(reason).inc()

    def compile_cache(self, hit: bool) -> None:
        CACHE.labels("hit" if hit else "miss").inc()

    def judged(self, dataset: str, verdict: str) -> None:
        VERDICTS.labels(dataset, verdict).inc()

    def error(self, kind: str) -> None:
        ERRORS.labels(kind).inc()

    def sessions_held(self, live: int, paused: int) -> None:
        SESSIONS.labels("live").set(live)
        SESSIONS.labels("paused").set(paused)

    def branched(self, kind: str, seconds: float) -> None:
        BRANCHED.labels(kind).observe(seconds)

    def state_kept(self, op: str, wall: float, cpu: float) -> None:
        STATE_SECONDS.labels(op, "wall").observe(wall)
        STATE_SECONDS.labels(op, "cpu").observe(cpu)


events.listen(Metrics())


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
