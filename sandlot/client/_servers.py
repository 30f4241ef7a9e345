"""Which server takes the next request. No I/O: the clients lease a URL per attempt.

Least outstanding requests among the servers that are up, ties taken in turn so that equal
servers share the load. A server that could not be reached is drained (it gets no new requests)
for a cooldown and then tried again; while every server is down, the one that went down first
is tried, so that a request never waits for nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(slots=True)
class _Server:
    url: str
    outstanding: int = 0
    down_until: float = 0.0  # a monotonic time; up when it has passed


class Servers:
    def __init__(
        self,
        urls: Sequence[str],
        cooldown: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not urls:
            raise ValueError("give at least one server URL")
        self._servers = [_Server(url.rstrip("/")) for url in urls]
        self._cooldown = cooldown
        self._clock = clock
        self._turn = 0
        self._lock = threading.Lock()  # a sync client may be shared by threads

    @property
    def urls(self) -> list[str]:
        return [s.url for s in self._servers]

    def only(self) -> str:
        """The URL of the one server (what lives on one server, a snapshot, needs its URL)."""
        if len(self._servers) != 1:
            raise ValueError("several servers: say which holds it (url=...)")
        return self._servers[0].url

    def outstanding(self) -> dict[str, int]:
        return {s.url: s.outstanding for s in self._servers}

    def is_up(self, url: str) -> bool:
        return self._find(url).down_until <= self._clock()

    @contextmanager
    def lease(self) -> Iterator[str]:
        """A server's URL for one attempt, counted as outstanding until the attempt ends."""
        with self._lock:
            server = self._pick()
            server.outstanding += 1
        try:
            yield server.url
        finally:
            with self._lock:
                server.outstanding -= 1

    def down(self, url: str) -> None:
        """`url` could not be reached: drain it for the cooldown."""
        with self._lock:
            self._find(url).down_until = self._clock() + self._cooldown

    def up(self, url: str) -> None:
        """`url` answered: it takes requests again."""
        with self._lock:
            self._find(url).down_until = 0.0

    def _pick(self) -> _Server:
        now = self._clock()
        n = len(self._servers)
        up = [i for i, s in enumerate(self._servers) if s.down_until <= now]
        if not up:
            return min(self._servers, key=lambda s: s.down_until)
        best = min(up, key=lambda i: (self._servers[i].outstanding, (i - self._turn) % n))
        self._turn = (best + 1) % n
        return self._servers[best]

    def _find(self, url: str) -> _Server:
        return next(s for s in self._servers if s.url == url.rstrip("/"))
