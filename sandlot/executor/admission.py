"""Admission: a fixed set of slots handed out in FIFO order, with a bounded waiting line.

A run's limits start only once it holds a slot, so time spent queued never counts against it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sandlot.errors import Overloaded


class Admission:
    def __init__(self, slots: int, queue_size: int, queue_timeout: float) -> None:
        self.slots = slots
        self.queue_size = queue_size
        self.queue_timeout = queue_timeout
        self._free: asyncio.Queue[int] = asyncio.Queue()
        for index in range(slots):
            self._free.put_nowait(index)
        self.waiting = 0

    @property
    def busy(self) -> int:
        return self.slots - self._free.qsize()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        if self._free.empty() and self.waiting >= self.queue_size:
            raise Overloaded(
                f"all {self.slots} slots are busy and {self.waiting} requests wait; retry later"
            )
        self.waiting += 1
        try:
            index = await asyncio.wait_for(self._free.get(), self.queue_timeout)
        except TimeoutError:
            raise Overloaded(
                f"no slot became free within {self.queue_timeout:g}s; retry later"
            ) from None
        finally:
            self.waiting -= 1
        try:
            yield index
        finally:
            self._free.put_nowait(index)
