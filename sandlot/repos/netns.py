"""A network namespace whose only way out is one relayed port: what a setup box joins.

The namespace has its loopback and nothing else: no route, no other interface, no resolver. In
it, 127.0.0.1:PORT listens; each connection made there is relayed, byte for byte, to one
address of the host's (the egress proxy), from a source address of this namespace's own, so
that the proxy's log tells whose request it was. Nothing of the box can reach the host's
loopback, the API, metadata addresses or any other host: a connection anywhere else in the
namespace is refused or unreachable, and the proxy decides where a relayed request may go.

The namespace is made by a thread of this process (namespaces are per thread), which then ends:
the namespace lives on through a descriptor and the listening socket. The box joins it by path
(`/proc/PID/fd/N`, RunSpec.network).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import itertools
import os
import selectors
import socket
import struct
import threading

from sandlot.errors import JailError

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
CHUNK = 1 << 16
MAX_CONNECTIONS = 256  # at once, per namespace (npm opens a few dozen)
_libc = ctypes.CDLL(None, use_errno=True)
# Source addresses of relayed connections, one per namespace, in 127.77.0.0/16 (the host's
# loopback range: nothing but the proxy listens there for them).
_sources = itertools.count(1)
_sources_lock = threading.Lock()


def _next_source() -> str:
    with _sources_lock:
        n = next(_sources) % 65024 + 256  # never .0.x: a .0 or .255 host is legal, but odd
    return f"127.77.{n >> 8}.{n & 0xFF}"


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


class RelayedNetwork:
    """A namespace where 127.0.0.1:`port` is relayed to `target` (host, port) of the host."""

    def __init__(self, target: tuple[str, int], port: int = 3128) -> None:
        self.target, self.port = target, port
        self.source = _next_source()
        self.connections = 0
        made: dict[str, object] = {}

        def make() -> None:  # in a thread of its own: unshare moves only this thread
            try:
                if _libc.unshare(CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, os.strerror(err))
                _loopback_up()
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.bind(("127.0.0.1", port))
                listener.listen(MAX_CONNECTIONS)
                made["listener"] = listener
                made["ns"] = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            except OSError as exc:
                made["error"] = exc

        thread = threading.Thread(target=make, name="sandlot-netns")
        thread.start()
        thread.join()
        if "error" in made:
            raise JailError(f"cannot make a network namespace for the box: {made['error']}")
        self.listener: socket.socket = made["listener"]  # type: ignore[assignment]
        self.ns_fd: int = made["ns"]  # type: ignore[assignment]
        self.listener.setblocking(False)
        self._wake_r, self._wake_w = os.pipe()
        self._relay = threading.Thread(target=self._serve, name="sandlot-relay", daemon=True)
        self._relay.start()

    @property
    def path(self) -> str:
        """Where the box's init opens the namespace (RunSpec.network)."""
        return f"/proc/{os.getpid()}/fd/{self.ns_fd}"

    def close(self) -> None:
        """Stop relaying, close every connection (the proxy then logs each) and drop the
        namespace (it goes once no box is in it)."""
        if self._relay.is_alive():
            os.write(self._wake_w, b"x")
            self._relay.join()
        for fd in (self._wake_r, self._wake_w, self.ns_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.listener.close()

    def __enter__(self) -> RelayedNetwork:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the relay ------------------------------------------------------------------------------

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.listener, selectors.EVENT_READ, None)
        sel.register(self._wake_r, selectors.EVENT_READ, "stop")
        pipes: dict[socket.socket, _Pipe] = {}
        try:
            while True:
                for key, _ in sel.select():
                    if key.data == "stop":
                        return
                    if key.data is None:
                        self._accept(sel, pipes)
                    else:
                        key.data.pump(key.fileobj, sel, pipes)
        finally:
            for sock in list(pipes):
                sock.close()
            sel.close()

    def _accept(self, sel: selectors.BaseSelector, pipes: dict[socket.socket, _Pipe]) -> None:
        try:
            inner, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        if len(pipes) >= 2 * MAX_CONNECTIONS:
            inner.close()
            return
        outer = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            outer.bind((self.source, 0))
            outer.connect(self.target)
        except OSError:
            inner.close()
            outer.close()
            return
        self.connections += 1
        pipe = _Pipe(inner, outer)
        for sock in (inner, outer):
            sock.setblocking(False)
            pipes[sock] = pipe
            sel.register(sock, selectors.EVENT_READ, pipe)


class _Pipe:
    """Two sockets relayed to each other. What could not be written yet waits, and its source
    is not read meanwhile, so a slow reader never makes the relay buffer without bound; an end
    of file is passed on as a shutdown once what came before it is written."""

    def __init__(self, a: socket.socket, b: socket.socket) -> None:
        self.peer = {a: b, b: a}
        self.pending = {a: b"", b: b""}  # bytes waiting to be written to that socket
        self.eof = {a: False, b: False}  # that socket has sent all it will

    def pump(self, sock: socket.socket, sel: selectors.BaseSelector,
             pipes: dict[socket.socket, _Pipe]) -> None:  # fmt: skip
        try:
            if self.pending[sock]:
                self._flush(sock)
            elif not self.eof[sock]:
                data = sock.recv(CHUNK)
                if data:
                    self.pending[self.peer[sock]] = data
                    self._flush(self.peer[sock])
                else:
                    self.eof[sock] = True
                    self._flush(self.peer[sock])
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.close(sel, pipes)
            return
        if all(self.eof.values()) and not any(self.pending.values()):
            self.close(sel, pipes)
            return
        for s in self.peer:
            self._interest(s, sel)

    def _flush(self, sock: socket.socket) -> None:
        if self.pending[sock]:
            sent = sock.send(self.pending[sock])
            self.pending[sock] = self.pending[sock][sent:]
        if not self.pending[sock] and self.eof[self.peer[sock]]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)

    def _interest(self, sock: socket.socket, sel: selectors.BaseSelector) -> None:
        events = selectors.EVENT_WRITE if self.pending[sock] else 0
        if not self.eof[sock] and not self.pending[self.peer[sock]]:
            events |= selectors.EVENT_READ
        registered = sock in sel.get_map()
        if events and registered:
            sel.modify(sock, events, self)
        elif events:
            sel.register(sock, events, self)
        elif registered:
            sel.unregister(sock)

    def close(self, sel: selectors.BaseSelector, pipes: dict[socket.socket, _Pipe]) -> None:
        for sock in self.peer:
            if sock in sel.get_map():
                sel.unregister(sock)
            pipes.pop(sock, None)
            sock.close()
