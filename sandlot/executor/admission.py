"""Admission: a fixed set of slots, a bounded waiting line, and turns taken request by request.

Every request waits in a lane of its own. A request with one run (a `/run_code`) has a lane of
one; a request with many (the cases of `/run_batch` or of `test_cases`) keeps its runs in one
lane. A freed slot goes to the first waiter of the lane whose turn it is, and that lane goes to
the back of the line: lanes are served round-robin, so one request of 10,000 cases takes one
slot in turn with each other waiting request instead of filling the line ahead of them. With one
run per lane this is plain FIFO.

The bound is on requests, not runs: at most `queue_size` lanes wait, and a request that finds the
line full is refused (504) before any of its runs is queued; a lane already admitted is never
refused for being long. A run that waited longer than `queue_timeout` for its turn is refused
(504). A run's limits start only once it holds a slot, so time spent queued never counts.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sandlot import telemetry
from sandlot.errors import Overloaded


class Lane:
    """One request's place in line; its runs wait here in order."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: deque[asyncio.Future[int]] = deque()


class Admission:
    def __init__(self, slots: int, queue_size: int, queue_timeout: float) -> None:
        self.slots = slots
        self.queue_size = queue_size
        self.queue_timeout = queue_timeout
        self._free: deque[int] = deque(range(slots))
        self._turns: deque[Lane] = deque()  # lanes with a waiter, whose turn comes first first
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
        """A lane for a request with many runs; Overloaded now if the line is full."""
        self._admit()
        return Lane()

    def _changed(self) -> None:
        telemetry.slots_changed(self.slots, self.busy, len(self._turns))

    def _admit(self) -> None:
        if not self._free and len(self._turns) >= self.queue_size:
            telemetry.rejected("queue_full")
            raise Overloaded(
                f"all {self.slots} slots are busy and {len(self._turns)} requests wait; retry later"
            )

    @asynccontextmanager
    async def slot(self, lane: Lane | None = None) -> AsyncIterator[int]:
        """A slot for one run, in `lane`'s turn (a lane of its own when None)."""
        if lane is None:
            self._admit()
            lane = Lane()
        index = await self._acquire(lane)
        try:
            yield index
        finally:
            self._release(index)

    async def _acquire(self, lane: Lane) -> int:
        if self._free and not self._turns:
            index = self._free.popleft()
            self._changed()
            telemetry.queued(0.0)
            return index
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        lane.waiters.append(future)
        if len(lane.waiters) == 1:
            self._turns.append(lane)
        self._changed()
        since = time.monotonic()
        try:
            async with asyncio.timeout(self.queue_timeout):
                index = await asyncio.shield(future)
            telemetry.queued(time.monotonic() - since)
            return index
        except BaseException as exc:
            if future.done():  # the slot came just as this waiter gave up: pass it on
                self._release(future.result())
            else:
                future.cancel()
                self._forget(lane, future)
            self._changed()
            if isinstance(exc, TimeoutError):
                telemetry.rejected("queue_timeout")
                raise Overloaded(
                    f"no slot became free within {self.queue_timeout:g}s; retry later"
                ) from None
            raise

    def _forget(self, lane: Lane, future: asyncio.Future[int]) -> None:
        lane.waiters.remove(future)
        if not lane.waiters:
            self._turns.remove(lane)

    def _release(self, index: int) -> None:
        if not self._turns:
            self._free.append(index)
            self._changed()
            return
        lane = self._turns.popleft()
        future = lane.waiters.popleft()
        if lane.waiters:
            self._turns.append(lane)  # served: to the back of the line
        future.set_result(index)
        self._changed()
