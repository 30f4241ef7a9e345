"""The server's end of an agent's pipes, in asyncio: ops out, checked events in, stderr drained.

Reading is paced by the caller (a stream reader with a bounded buffer stops reading the pipe
when it is full, so a flood waits in the box, not in the server). A frame over the cap, a frame
that is not an event, or a pipe that closes ends the link with AgentGone and the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, NoReturn, cast

from sandlot.jail import Pipes
from sandlot.sessions import events
from sandlot.sessions.box import frames
from sandlot.sessions.pipe_ends import ReadEnd, WriteEnd

READ_BUFFER = 1 << 20
WRITE_BUFFER_MAX = 16 << 20  # ops waiting for an agent that does not read: it is stuck
STDERR_TAIL = 2048  # bytes of the agent's stderr kept, to say why it died


class AgentGone(Exception):
    """The agent exited, closed its pipe, or sent what is not an event."""


class AgentSilent(AgentGone):
    """The agent said nothing for longer than it may: the link is out of step for good."""


class AgentLink:
    def __init__(self, pipes: Pipes) -> None:
        self._reader = asyncio.StreamReader(limit=READ_BUFFER)
        self._stdout = ReadEnd(pipes.stdout, self._reader.feed_data, self._stdout_ended)
        self._stderr = ReadEnd(pipes.stderr, self._keep_stderr, lambda _: None)
        self._stdin = WriteEnd(pipes.stdin)
        self._ends = (self._stdout, self._stderr, self._stdin)
        self._tail = b""
        self.gone: str | None = None

    def open(self) -> None:
        """Start reading and writing, on the running event loop."""
        loop = asyncio.get_running_loop()
        try:
            # it pauses reading while it is full (a transport by duck typing: pause/resume)
            self._reader.set_transport(cast(asyncio.ReadTransport, self._stdout))
            for end in self._ends:
                end.start(loop)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the pipes; a `recv` waiting (or to come) ends as at the agent's exit."""
        for end in self._ends:
            end.close()
        self._reader.feed_eof()

    def _stdout_ended(self, error: OSError | None) -> None:
        if error is None:
            self._reader.feed_eof()
        else:
            self._reader.set_exception(error)

    def _keep_stderr(self, data: bytes) -> None:
        self._tail = (self._tail + data)[-STDERR_TAIL:]

    @property
    def stderr_tail(self) -> str:
        return self._tail.decode(errors="replace")

    def send(self, op: dict[str, Any]) -> None:
        if self.gone is not None:
            raise AgentGone(self.gone)
        if self._stdin.closed:
            error = self._stdin.error
            raise AgentGone(f"the agent's pipe is closed ({error.strerror})" if error else
                            "the agent's pipe is closed")  # fmt: skip
        if self._stdin.buffered > WRITE_BUFFER_MAX:
            self._fail("the agent stopped reading")
        self._stdin.write(frames.encode(op))

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
