"""The server's end of an agent's pipes, in asyncio: ops out, checked events in, stderr drained.

Reading is paced by the caller (a stream reader with a bounded buffer stops reading the pipe
when it is full, so a flood waits in the box, not in the server). A frame over the cap, a frame
that is not an event, or a pipe that closes ends the link with AgentGone and the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, NoReturn

from sandlot.jail.live import Pipes
from sandlot.sessions import events
from sandlot.sessions.box import frames

READ_BUFFER = 1 << 20
WRITE_BUFFER_MAX = 16 << 20  # ops waiting for an agent that does not read: it is stuck
STDERR_TAIL = 2048  # bytes of the agent's stderr kept, to say why it died


class AgentGone(Exception):
    """The agent exited, closed its pipe, or sent what is not an event."""


class AgentSilent(AgentGone):
    """The agent said nothing for longer than it may: the link is out of step for good."""


class _Tail(asyncio.Protocol):
    """Drains a pipe, keeping only its last bytes."""

    def __init__(self) -> None:
        self.tail = b""

    def data_received(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-STDERR_TAIL:]


class AgentLink:
    def __init__(self, pipes: Pipes) -> None:
        self._pipes = pipes
        self._reader = asyncio.StreamReader(limit=READ_BUFFER)
        self._transports: list[asyncio.BaseTransport] = []
        self._out: asyncio.WriteTransport | None = None
        self._stderr: _Tail | None = None
        self.gone: str | None = None

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        pipes, opened = self._pipes, []
        try:
            for fd, mode in ((pipes.stdout, "rb"), (pipes.stderr, "rb"), (pipes.stdin, "wb")):
                opened.append(os.fdopen(fd, mode, buffering=0))
        except BaseException:
            for fd in (pipes.stdout, pipes.stderr, pipes.stdin)[len(opened) :]:
                os.close(fd)
            for f in opened:
                f.close()
            raise
        stdout, stderr, stdin = opened
        reader = self._reader
        t, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdout)
        self._transports.append(t)
        t, self._stderr = await loop.connect_read_pipe(_Tail, stderr)
        self._transports.append(t)
        self._out, _ = await loop.connect_write_pipe(asyncio.Protocol, stdin)
        self._transports.append(self._out)

    def close(self) -> None:
        for t in self._transports:
            t.close()
        self._transports = []

    @property
    def stderr_tail(self) -> str:
        return self._stderr.tail.decode(errors="replace") if self._stderr else ""

    def send(self, op: dict[str, Any]) -> None:
        if self.gone is not None or self._out is None or self._out.is_closing():
            raise AgentGone(self.gone or "the agent's pipe is closed")
        if self._out.get_write_buffer_size() > WRITE_BUFFER_MAX:
            self._fail("the agent stopped reading")
        self._out.write(frames.encode(op))

    async def recv(self, timeout: float | None) -> dict[str, Any]:
        """The next event; AgentGone if there is none to come, TimeoutError after timeout."""
        if self.gone is not None:
            raise AgentGone(self.gone)
        try:
            async with asyncio.timeout(timeout):
                header = await self._reader.readexactly(frames.HEADER.size)
                (size,) = frames.HEADER.unpack(header)
                if size > frames.MAX_FRAME:
                    self._fail(f"the agent sent a frame of {size} bytes")
                body = await self._reader.readexactly(size)
        except TimeoutError:
            self._fail(f"the agent said nothing for {timeout:g} s", AgentSilent)
        except asyncio.IncompleteReadError:
            self._fail("the agent exited")
        except (asyncio.LimitOverrunError, OSError) as exc:
            self._fail(f"the agent's pipe failed: {exc}")
        try:
            return events.parse(body)
        except events.BadEvent as exc:
            self._fail(f"the agent sent a bad event: {exc}")

    def _fail(self, reason: str, kind: type[AgentGone] = AgentGone) -> NoReturn:
        self.gone = reason
        with contextlib.suppress(Exception):
            self.close()
        raise kind(reason)
