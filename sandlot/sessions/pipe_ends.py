"""Pipe ends the event loop watches, each descriptor ours alone and closed exactly once.

Not asyncio's pipe transports: uvloop's (which uvicorn runs on when it is installed) hand the
descriptor to libuv, which closes it, and then close it again through the file object
(uvloop#763). Between the two closes another thread may have been given that number, in this
server the next live box's pipes, and the second close takes it from under that thread. Watching
the raw descriptor with add_reader and add_writer works the same on every loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

CHUNK = 1 << 16


class PipeEnd:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def closed(self) -> bool:
        return self.fd < 0

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        os.set_blocking(self.fd, False)

    def close(self) -> None:
        if self.fd < 0:
            return
        if self.loop is not None:
            self.loop.remove_reader(self.fd)
            self.loop.remove_writer(self.fd)
        fd, self.fd = self.fd, -1
        os.close(fd)


class ReadEnd(PipeEnd):
    """Hands what it reads to `data`; at the end, `end(None)`, or `end(error)` if reading failed.
    A stream reader paces it (set_transport): it stops reading while the reader is full."""

    def __init__(
        self, fd: int, data: Callable[[bytes], None], end: Callable[[OSError | None], None]
    ) -> None:
        super().__init__(fd)
        self._data, self._end = data, end

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        super().start(loop)
        self.resume_reading()

    def pause_reading(self) -> None:
        if self.loop is not None and not self.closed:
            self.loop.remove_reader(self.fd)

    def resume_reading(self) -> None:
        if self.loop is not None and not self.closed:
            self.loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.close()
            self._end(exc)
            return
        if data:
            self._data(data)
        else:
            self.close()
            self._end(None)


class WriteEnd(PipeEnd):
    """Writes at once what the pipe takes and the rest as it drains. A write that fails (the
    reader is gone) closes it: `error` says why."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd)
        self._pending = bytearray()
        self.error: OSError | None = None

    @property
    def buffered(self) -> int:
        return len(self._pending)

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        view = memoryview(data)
        if not self._pending:
            view = view[self._write(view) :]
        if view and not self.closed:
            if not self._pending:
                assert self.loop is not None
                self.loop.add_writer(self.fd, self._writable)
            self._pending += view

    def _writable(self) -> None:
        del self._pending[: self._write(self._pending)]
        if not self._pending and self.loop is not None and not self.closed:
            self.loop.remove_writer(self.fd)

    def _write(self, data: bytes | bytearray | memoryview) -> int:
        try:
            return os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as exc:
            self.error = exc
            self._pending.clear()
            self.close()
            return 0
