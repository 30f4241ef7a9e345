"""The compile cache: same language, compile command and sources give the same build.

Content-addressed, bounded in bytes (least recently used goes first), and single-flight: two
identical submissions arriving together compile once.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sandlot.jail import Outcome


@dataclass(slots=True)
class Build:
    outcome: Outcome  # the compile step as it ran (files emptied)
    artifacts: dict[str, bytes]

    @property
    def size(self) -> int:
        return (
            sum(len(v) for v in self.artifacts.values())
            + len(self.outcome.stdout)
            + len(self.outcome.stderr)
        )


def build_key(language: str, argv: tuple[str, ...], files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for part in (language, *argv):
        h.update(part.encode() + b"\0")
    for name in sorted(files):
        h.update(name.encode() + b"\0" + len(files[name]).to_bytes(8, "little") + files[name])
    return h.hexdigest()


class CompileCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._builds: OrderedDict[str, Build] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[tuple[Build, bool]]] = {}
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    async def get_or_build(
        self, key: str, build: Callable[[], Awaitable[Build]], keep: Callable[[Build], bool]
    ) -> tuple[Build, bool]:
        """The build for key and whether it came from the cache; `keep` says if it may be stored."""
        if key in self._builds:
            self._builds.move_to_end(key)
            self.hits += 1
            return self._builds[key], True
        if key in self._inflight:
            try:
                done, _ = await asyncio.shield(self._inflight[key])
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # this caller was cancelled
                # The build's own caller was (its client went away): build it here instead.
                return await self.get_or_build(key, build, keep)
            self.hits += 1
            return done, True
        self.misses += 1
        future: asyncio.Future[tuple[Build, bool]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await build()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # a waiter may not exist; don't warn about it
            raise
        finally:
            del self._inflight[key]
        future.set_result((result, False))
        if keep(result):
            self._store(key, result)
        return result, False

    def _store(self, key: str, build: Build) -> None:
        if build.size > self.max_bytes:
            return
        self._builds[key] = build
        self.bytes += build.size
        while self.bytes > self.max_bytes:
            _, old = self._builds.popitem(last=False)
            self.bytes -= old.size
