"""A few Python kernels started ahead, so that a session or a notebook does not wait for one.

A pooled session has never run anything: taking one is as good as starting one, only faster.
The pool refills one kernel at a time in the background, each box at the lowest CPU priority
until it is taken (a kernel's start is CPU work that would otherwise compete with the requests
being served: a fork's kernels reading their state back, the first executions in them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from sandlot.sessions.session import Session

log = logging.getLogger("sandlot.sessions")
RETRY = 5.0  # seconds before trying again after a kernel failed to start


class WarmPool:
    def __init__(self, size: int, start: Callable[[], Awaitable[Session]]) -> None:
        self.size = size
        self._start = start
        self._ready: deque[Session] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.problem: str | None = None  # why the last start failed, if it did

    def start(self) -> None:
        if self.size > 0:
            self._task = asyncio.create_task(self._fill())

    @property
    def ready(self) -> int:
        return len(self._ready)

    async def take(self) -> Session | None:
        """A ready session, or None if none is ready now."""
        self._wake.set()
        while self._ready:
            session = self._ready.popleft()
            if session.box.alive() and session.ended is None:
                await asyncio.to_thread(session.box.foreground)
                return session
            await session.close("it ended while in the pool")
        return None

    async def _fill(self) -> None:
        while True:
            while len(self._ready) < self.size:
                try:
                    session = await self._start()
                except Exception as exc:  # a start that failed: say why, try again later
                    self.problem = str(exc)
                    log.warning("a pooled kernel did not start: %s", exc)
                    await asyncio.sleep(RETRY)
                    continue
                self.problem = None
                self._ready.append(session)
            self._wake.clear()
            await self._wake.wait()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        while self._ready:
            await self._ready.popleft().close("the server stopped")
