"""Admission: a fixed set of slots, a bounded waiting line, and turns taken request by request.

Every request waits in a lane of its own. A request with one run (a `/run_code`) has a lane of
one; a request with many (the cases of `/run_batch` or of `test_cases`) keeps its runs in one
lane. A freed slot goes to the first waiter of the lane whose turn it is, and that lane goes to
the back of the line: lanes are served round-robin, so one request of 10,000 cases takes one
slot in turn with each other waiting request instead of filling the line ahead of them. With one
run per lane this is plain FIFO.

The bound is on requests, not runs: at most `queue_size` lanes wait, and a request that finds the
line full is refused (504) before any of its runs is queued.

A request has `queue_timeout` seconds from joining the line to start: once one of its runs holds a
slot, its other runs (in its lane, or in the lanes of the same HTTP request: a judged
submission's cases) wait their turns without a limit, so an admitted request is served, never
refused half done. A request that cannot start in time is refused as early as that is known, so
that its client can retry (RL clients retry a 504 and nothing else) instead of timing out on a
request the server would still run:
- on arrival, when the line's own pace says it would not start in time: a lane k places back
  starts after about (k + 1) x (the median time the last HOLDS runs held a slot) / slots. The
  median, not the mean: in a mix of quick runs and a few long ones (time-outs), the quick ones
  ahead are what a waiter mostly waits for, and a long run that blocks the slots meanwhile is
  caught by the deadline;
- while waiting, when that estimate (checked at most every SHED_EVERY seconds, as slots free)
  has gone past its deadline, and at its deadline in any case;
- a request whose client has gone (its task cancelled) leaves the line at once.
A refusal's `retry_after` is when a new request would fit in the time again, had nothing else
arrived. A run's limits start only once it holds a slot, so time spent queued never counts.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from sandlot import events
from sandlot.errors import Overloaded

HOLDS = 64  # the last slot-hold times that estimate how fast the line moves
SHED_EVERY = 0.1  # seconds between checks of the waiting lanes against their deadlines


class Lane:
    """One request's place in line; its runs wait here in order."""

    __slots__ = ("deadline", "record", "waiters")

    def __init__(self, deadline: float | None, record: events.RequestRecord | None) -> None:
        self.waiters: deque[asyncio.Future[int]] = deque()
        self.deadline = deadline  # when its first run must have started; None once one has
        self.record = record  # the HTTP request it serves, if any

    def budgeted(self) -> bool:
        """Whether it must still start by its deadline (nothing of its request has started)."""
        if self.record is not None and self.record.admitted:
            self.deadline = None
        return self.deadline is not None

    def started(self) -> None:
        self.deadline = None
        if self.record is not None:
            self.record.admitted = True


class Admission:
    def __init__(
        self,
        slots: int,
        queue_size: int,
        queue_timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.slots = slots
        self.queue_size = queue_size
        self.queue_timeout = queue_timeout  # math.inf: wait as long as it takes
        self._free: deque[int] = deque(range(slots))
        self._turns: deque[Lane] = deque()  # lanes with a waiter, whose turn comes first first
        self._taken: dict[int, float] = {}  # slot -> when its run took it
        self._holds: deque[float] = deque(maxlen=HOLDS)
        self._next_shed = 0.0
        self._changed()

    @property
    def busy(self) -> int:
        return self.slots - len(self._free)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot (a lane counts once however many runs it holds)."""
        return len(self._turns)

    @property
    def waiting_runs(self) -> int:
        return sum(len(lane.waiters) for lane in self._turns)

    def lane(self) -> Lane:
        """A lane for a request with many runs; Overloaded now if it cannot start in time."""
        record = events.CURRENT.get()
        if record is not None and record.admitted:
            return Lane(None, record)  # its request has started: it takes its turns
        if not self._free:
            if len(self._turns) >= self.queue_size:
                raise self._refused(
                    "queue_full",
                    f"all {self.slots} slots are busy and {len(self._turns)} requests wait",
                )
            wait = self._wait(len(self._turns), self._hold())
            if wait is not None and wait > self.queue_timeout:
                raise self._refused(
                    "cannot_start_in_time",
                    f"{len(self._turns)} requests wait for {self.slots} slots: this one would "
                    f"start in about {wait:.0f}s, past the {self.queue_timeout:g}s allowed",
                )
        deadline = None if math.isinf(self.queue_timeout) else self.clock() + self.queue_timeout
        return Lane(deadline, record)

    @asynccontextmanager
    async def slot(self, lane: Lane | None = None) -> AsyncIterator[int]:
        """A slot for one run, in `lane`'s turn (a lane of its own when None)."""
        index = await self._acquire(lane or self.lane())
        try:
            yield index
        finally:
            self._release(index)

    # -- the line ------------------------------------------------------------------------------

    def _changed(self) -> None:
        events.slots_changed(self.slots, self.busy, len(self._turns))

    def _hold(self) -> float | None:
        """How long a run holds a slot, these days; None before any run ended."""
        return statistics.median(self._holds) if self._holds else None

    def _wait(self, ahead: int, hold: float | None) -> float | None:
        """Seconds until a lane with `ahead` lanes before it gets a slot."""
        return None if hold is None else (ahead + 1) * hold / self.slots

    def _refused(self, reason: str | None, why: str) -> Overloaded:
        """The refusal of a request (counted under `reason`, unless None: counted already)."""
        if reason is not None:
            events.rejected(reason)
        wait = self._wait(len(self._turns), self._hold())
        retry = 1 if wait is None else max(1, math.ceil(wait - self.queue_timeout))
        return Overloaded(f"{why}; retry in {retry}s", retry_after=retry)

    def _take(self, index: int, lane: Lane) -> None:
        self._taken[index] = self.clock()
        lane.started()

    async def _acquire(self, lane: Lane) -> int:
        if self._free and not self._turns:
            index = self._free.popleft()
            self._take(index, lane)
            self._changed()
            events.queued(0.0)
            return index
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        lane.waiters.append(future)
        if len(lane.waiters) == 1:
            self._turns.append(lane)
        self._changed()
        since = self.clock()
        try:
            while True:
                deadline = lane.deadline if lane.budgeted() else None
                budget = None if deadline is None else deadline - self.clock()
                try:
                    async with asyncio.timeout(budget):
                        index = await asyncio.shield(future)
                    break
                except TimeoutError:
                    if lane.budgeted():  # else its request started meanwhile: wait on
                        raise
            events.queued(self.clock() - since)
            return index
        except BaseException as exc:
            if not future.done():
                future.cancel()
                self._forget(lane, future)
            elif not future.cancelled() and future.exception() is None:
                self._release(future.result())  # the slot came just as this waiter gave up
            self._changed()
            if isinstance(exc, TimeoutError):
                raise self._refused(
                    "queue_timeout", f"no slot became free within {self.queue_timeout:g}s"
                ) from None
            raise

    def _forget(self, lane: Lane, future: asyncio.Future[int]) -> None:
        lane.waiters.remove(future)
        if not lane.waiters:
            self._turns.remove(lane)

    def _release(self, index: int) -> None:
        now = self.clock()
        held = now - self._taken.pop(index, now)
        self._holds.append(held)
        if not self._turns:
            self._free.append(index)
            self._changed()
            return
        lane = self._turns.popleft()
        future = lane.waiters.popleft()
        if lane.waiters:
            self._turns.append(lane)  # served: to the back of the line
        self._take(index, lane)
        future.set_result(index)
        self._shed(now)
        self._changed()

    def _shed(self, now: float) -> None:
        """Refuse now the waiting requests that would not start before their deadline."""
        if now < self._next_shed:
            return
        hold = self._hold()
        if hold is None:
            return
        self._next_shed = now + SHED_EVERY
        kept: deque[Lane] = deque()
        for lane in self._turns:
            wait = (len(kept) + 1) * hold / self.slots
            if lane.budgeted() and lane.deadline is not None and now + wait > lane.deadline:
                events.rejected("cannot_start_in_time")
                why = (f"it would start in about {wait:.0f}s more, past the "
                       f"{self.queue_timeout:g}s a request may wait")  # fmt: skip
                while lane.waiters:
                    lane.waiters.popleft().set_exception(self._refused(None, why))
            else:
                kept.append(lane)
        self._turns = kept
