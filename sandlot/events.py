"""What the engine tells about its work as it happens, and the record of the request it serves.

The layers below the faces call the functions here (a run ended, a request waited for a slot,
the compile cache answered, a submission was judged); none of them knows who listens. The server
listens (`sandlot.telemetry` turns these events into Prometheus metrics); a client-only install,
the CLI's local runs and the Ray actor have no listener, and nothing here needs a package of its
own. The API's middleware opens a `RequestRecord` per request in a context variable, so that what
a run adds lands on the request that caused it, also from the tasks a request fans out into.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from sandlot.jail import Outcome


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


class Listener(Protocol):
    """What a listener hears (sandlot.telemetry's metrics are one)."""

    def ran(self, language: str, step: str, status: str, outcome: Outcome) -> None: ...
    def queued(self, seconds: float) -> None: ...
    def slots_changed(self, total: int, busy: int, waiting: int) -> None: ...
    def rejected(self, reason: str) -> None: ...
    def compile_cache(self, hit: bool) -> None: ...
    def judged(self, dataset: str, verdict: str) -> None: ...
    def error(self, kind: str) -> None: ...
    def sessions_held(self, live: int, paused: int) -> None: ...
    def branched(self, kind: str, seconds: float) -> None: ...
    def state_kept(self, op: str, wall: float, cpu: float) -> None: ...


LISTENERS: list[Listener] = []


def listen(listener: Listener) -> None:
    """Hear every event of this process from now on."""
    LISTENERS.append(listener)


def status_of(outcome: Outcome) -> str:
    """ok, error (a non-zero exit or a signal) or the limit that ended the run."""
    if outcome.limit is not None:
        return outcome.limit.value
    return "ok" if outcome.exit_code == 0 and outcome.signal is None else "error"


def ran(language: str, step: str, outcome: Outcome) -> None:
    """A compile or run step (`step`) of `language` ended with `outcome`."""
    status = status_of(outcome)
    for listener in LISTENERS:
        listener.ran(language, step, status, outcome)
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
    """A run got its slot after `seconds` in line."""
    for listener in LISTENERS:
        listener.queued(seconds)
    record = CURRENT.get()
    if record is not None:
        record.queue_seconds += seconds


def slots_changed(total: int, busy: int, waiting: int) -> None:
    for listener in LISTENERS:
        listener.slots_changed(total, busy, waiting)


def rejected(reason: str) -> None:
    """A request was refused for want of a slot (HTTP 504), for `reason`."""
    for listener in LISTENERS:
        listener.rejected(reason)


def compile_cache(hit: bool) -> None:
    for listener in LISTENERS:
        listener.compile_cache(hit)


def judged(dataset: str, language: str | None, verdict: str) -> None:
    """A submission to `dataset` (a bounded label) got `verdict`."""
    for listener in LISTENERS:
        listener.judged(dataset, verdict)
    record = CURRENT.get()
    if record is not None:
        record.verdict = verdict
        record.language = language or record.language


def error(kind: str) -> None:
    for listener in LISTENERS:
        listener.error(kind)


def sessions_held(live: int, paused: int) -> None:
    for listener in LISTENERS:
        listener.sessions_held(live, paused)


def branched(kind: str, seconds: float) -> None:
    """A session was snapshotted, forked, paused or resumed (`kind`), in `seconds`."""
    for listener in LISTENERS:
        listener.branched(kind, seconds)


def state_kept(op: str, wall: float, cpu: float) -> None:
    """A session's agent did a snapshot's `op` in `wall` seconds, its box using `cpu`."""
    for listener in LISTENERS:
        listener.state_kept(op, wall, cpu)
