"""The messages between the server and a slot's spawner, and the frames that carry them.

A frame is a 4-byte big-endian length and a msgpack body, decoded by msgspec into one of the
typed messages below: plain data, validated on receipt, never code (the server is root, and what
it reads must not be able to run anything in it). Every reply names the request it answers, so
a reply out of step is detected, never taken for the next caller's result.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from typing import Any

import msgspec

from sandlot.jail.bwrap import BoxLayout
from sandlot.jail.spec import Outcome, RunSpec

HEADER = struct.Struct(">I")
# A run's frame holds its files (the request's, at most 64 MiB by default) and an outcome its
# output and fetched files (capped per run); larger frames mean the other side is broken.
MAX_FRAME = 1 << 30


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame of the expected messages."""


class CgroupPlace(msgspec.Struct, frozen=True):
    """Where a slot's cgroups are: one directory per v1 controller, or the v2 directory."""

    version: int
    dirs: dict[str, str]


class SlotConfig(msgspec.Struct, frozen=True):
    index: int
    uid: int
    gid: int
    layout: BoxLayout
    cgroup: CgroupPlace
    seccomp: bytes
    fetch_budget: int
    workdir_options: str  # tmpfs options of the work dir, to mount it afresh when a wipe fails
    # "zygote": every box is built by the slot's zygote, the next one ahead of its run;
    # "bwrap": bubblewrap per run (Python still runs in the zygote when the spec is warm).
    boxes: str
    zygote_python: str  # warm specs whose interpreter this is run in the zygote
    box_init: str  # the zygote's init of each box (box_init.py)
    reuse_netns: bool = True  # see JailConfig
    warm_preludes: tuple[str, ...] = ()  # see JailConfig
    cpus: tuple[int, ...] = ()  # what this slot's processes are kept to (placement.py)
    all_cpus: tuple[int, ...] = ()  # what a run that may use any CPU gets (RunSpec.any_cpu)


# -- server -> spawner ---------------------------------------------------------------------------


class Start(msgspec.Struct, frozen=True, tag="start"):
    config: SlotConfig


class Run(msgspec.Struct, frozen=True, tag="run"):
    id: int
    spec: RunSpec


class Stop(msgspec.Struct, frozen=True, tag="stop"):
    """Kill run `id`'s box now (nobody waits for it any more); it is answered as usual."""

    id: int


# -- spawner -> server ---------------------------------------------------------------------------


class Ready(msgspec.Struct, frozen=True, tag="ready"):
    pid: int
    problem: str | None = None  # the slot cannot serve: why


class Done(msgspec.Struct, frozen=True, tag="done"):
    id: int
    outcome: Outcome


class Failed(msgspec.Struct, frozen=True, tag="failed"):
    id: int
    message: str
    fatal: bool  # the spawner can serve no more runs and exits after saying so


ToSpawner = Start | Run | Stop
ToServer = Ready | Done | Failed


class Channel:
    """One end of a stream socket that sends and receives framed messages of known types."""

    def __init__(self, sock: socket.socket, accepts: Any) -> None:  # a Struct type or a union
        self.sock = sock
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(accepts)
        # A frame's first bytes were taken but not its last: an async receive cancelled now
        # leaves the channel out of step.
        self.mid_frame = False

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: msgspec.Struct) -> None:
        self.sock.settimeout(None)  # blocking: the async side leaves it non-blocking
        self.sock.sendall(self._frame(message))

    async def send_async(self, message: msgspec.Struct) -> None:
        self.sock.setblocking(False)
        await asyncio.get_running_loop().sock_sendall(self.sock, self._frame(message))

    def recv(self, timeout: float | None = None) -> object:
        """The next message; EOFError if the other side closed, ProtocolError if it sent
        garbage, TimeoutError if nothing whole arrived in time."""
        deadline = None if timeout is None else time.monotonic() + timeout
        size = self._size(self._read(HEADER.size, deadline))
        return self._decode(self._read(size, deadline))

    async def recv_async(self, timeout: float | None = None) -> object:
        """`recv` on the running event loop, with no thread waiting on the socket."""
        try:
            async with asyncio.timeout(timeout):
                size = self._size(await self._read_async(HEADER.size))
                body = await self._read_async(size)
        except TimeoutError:
            raise TimeoutError("no answer in time") from None
        self.mid_frame = False
        return self._decode(body)

    def _frame(self, message: msgspec.Struct) -> bytes:
        body = self._encoder.encode(message)
        return HEADER.pack(len(body)) + body

    @staticmethod
    def _size(header: bytes) -> int:
        (size,) = HEADER.unpack(header)
        if size > MAX_FRAME:
            raise ProtocolError(f"a frame of {size} bytes is larger than any message")
        return size

    def _decode(self, body: bytes) -> object:
        try:
            return self._decoder.decode(body)
        except (msgspec.DecodeError, ValueError, TypeError) as exc:
            raise ProtocolError(f"not a valid message: {exc}") from exc

    def _read(self, size: int, deadline: float | None) -> bytes:
        buf = bytearray()
        while len(buf) < size:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no answer in time")
                self.sock.settimeout(left)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(min(size - len(buf), 1 << 20))
            except TimeoutError:
                raise TimeoutError("no answer in time") from None
            if not chunk:
                raise EOFError("the other side closed the channel")
            buf += chunk
        return bytes(buf)

    async def _read_async(self, size: int) -> bytes:
        self.sock.setblocking(False)
        loop = asyncio.get_running_loop()
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            n = await loop.sock_recv_into(self.sock, view[got : got + (1 << 20)])
            if not n:
                raise EOFError("the other side closed the channel")
            got += n
            self.mid_frame = True
        return bytes(buf)

    def close(self) -> None:
        self.sock.close()
