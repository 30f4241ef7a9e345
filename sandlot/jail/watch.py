"""Watching one running box: its stdin fed, its output drained under the cap, its clock kept.

The box ends by itself, or is killed on a limit (wall time, output), when the server says stop
(nobody waits for the run any more: it is then answered as usual, with no limit named), or when
the server goes away.
At its wall time the box's programs are first asked to stop (SIGTERM), and the box is killed
STOP_GRACE seconds later if it has not ended: a runtime that flushes its buffered output on
SIGTERM (Ruby, Racket; Python and Perl as sandlot starts them) keeps what the program wrote
before its time ran out, where a kill alone would lose it.
A box that has been killed and still has not ended after KILL_GRACE seconds means a process the
kernel cannot kill: the slot is then unusable (SlotBroken), never silently reused. While the
slot's task count still falls, the box is dying, only slowly (hundreds of processes of a fork
bomb on a slow or emulated machine): the grace starts again, up to KILL_GIVE_UP in all. When it
does not fall, the box's init may not have had the CPU to act on its kill yet (the bomb's
processes have it all): every process of the box is killed directly, and the grace given once
more.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import time
from collections.abc import Callable

from sandlot.errors import SlotBroken
from sandlot.jail.spec import Limit, Outcome, RunSpec

READ_CHUNK = 1 << 16
DRAIN_GRACE = 1.0  # seconds to wait for pipes to close once the box has ended
STOP_GRACE = 0.5  # seconds between asking a box's programs to stop and killing it
KILL_GRACE = 5.0  # seconds a killed box may take to end without its task count falling
KILL_GIVE_UP = 60.0  # seconds a killed box may take to end, however it falls

Waiter = Callable[[], int]  # returns the wait status of a box's top process
Counter = Callable[[], int]  # returns the tasks in the box's slot
Killer = Callable[[], None]  # SIGKILLs every process of the box's slot but the jail's own
Stopper = Callable[[], None]  # SIGTERMs the box's programs (its processes but its init)
# Reads what the server said mid-run: returns if it said stop, raises ServerGone if it is gone.
Listener = Callable[[], None]


class ServerGone(Exception):
    """The server closed its end of the channel while a run was going on."""


def kill(pidfd: int) -> None:
    """SIGKILL through a pidfd: never another process that reused the pid."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)


class Watch:
    def __init__(
        self, pidfd: int, wait_status: Waiter, spec: RunSpec, started: float,
        fds: tuple[int, int, int], server_fd: int, heard: Listener, tasks: Counter,
        kill_all: Killer, ask_to_stop: Stopper,
    ) -> None:  # fmt: skip
        self.pidfd, self.wait_status, self.server_fd = pidfd, wait_status, server_fd
        self.heard = heard
        self.tasks, self.kill_all, self.ask_to_stop = tasks, kill_all, ask_to_stop
        self.asked = False  # its programs were asked to stop
        self.tasks_left = 0  # when last counted, since the kill
        self.killed_all = False
        self.cap = spec.limits.output
        self.out_r, self.err_r, self.in_w = fds
        self.outcome = Outcome()
        self.status: int | None = None
        self.deadline = started + spec.limits.wall_time
        self.killed_at = math.inf  # when the kill was sent, or the task count last fell
        self.kill_sent = math.inf
        self.drain_until = math.inf
        self.streams = {self.out_r: bytearray(), self.err_r: bytearray()}
        self.stdin = memoryview(spec.stdin)
        self.poller = select.poll()
        for fd in (pidfd, server_fd, *self.streams):
            self.poller.register(fd, select.POLLIN)
        if self.stdin:
            os.set_blocking(self.in_w, False)
            self.poller.register(self.in_w, select.POLLOUT)
        else:
            self._close_stdin()

    def run(self) -> tuple[int, Outcome]:
        """Until the box has ended and its output is read; the wait status and the outcome."""
        try:
            while self.streams or self.status is None:
                timeout = self._tick(time.monotonic())
                if timeout is None:
                    break
                for fd, event in self.poller.poll(timeout):
                    self._handle(fd, event)
        finally:
            self._close_stdin()
        for fd, buf in self.streams.items():  # still held open from outside the box
            self._keep(fd, bytes(buf))
        assert self.status is not None
        return self.status, self.outcome

    def _tick(self, now: float) -> float | None:
        """Act on the clocks; the poll timeout in ms (-1: none), or None to stop watching."""
        if self.status is None:
            if now >= self.deadline and not self.asked:
                self._ask(now, Limit.WALL_TIME)
            elif now >= self.deadline:
                self._hit(Limit.WALL_TIME)
            if now >= self.killed_at + KILL_GRACE:
                left = self.tasks()
                stuck = left >= self.tasks_left
                if (stuck and self.killed_all) or now >= self.kill_sent + KILL_GIVE_UP:
                    raise SlotBroken(
                        f"a box survived SIGKILL for {now - self.kill_sent:.0f} s "
                        f"({left} tasks left in its slot)"
                    )
                if stuck:
                    self.kill_all()
                    self.killed_all = True
                self.tasks_left, self.killed_at = left, now
            wake = min(self.deadline, self.killed_at + KILL_GRACE)
        elif now >= self.drain_until:
            return None  # something outside the box still holds a pipe; the sweep ends it
        else:
            wake = self.drain_until
        return -1 if wake == math.inf else max(0.0, wake - now) * 1000

    def _handle(self, fd: int, event: int) -> None:
        if fd == self.pidfd:
            self.poller.unregister(fd)
            self.status = self.wait_status()
            self.drain_until = time.monotonic() + DRAIN_GRACE
        elif fd == self.server_fd:
            try:
                self.heard()
            except ServerGone:
                kill(self.pidfd)
                raise
            self.poller.unregister(fd)  # it said stop: it now waits for the answer
            self._hit(None)
        elif fd == self.in_w:
            self._feed(event)
        else:
            self._drain(fd)

    def _ask(self, now: float, limit: Limit) -> None:
        """The limit is reached: the programs are asked to stop, and killed after a grace."""
        if self.outcome.limit is None:
            self.outcome.limit = limit
        self.asked = True
        self.ask_to_stop()
        self.deadline = now + STOP_GRACE

    def _hit(self, limit: Limit | None) -> None:
        """A limit was reached (None: the server said stop): the first one is the run's, even
        when the box has already ended by itself (a program that writes past the cap and exits
        at once is often gone before its output is read); a box still running is killed."""
        if self.outcome.limit is None:
            self.outcome.limit = limit
        if self.status is None and self.killed_at == math.inf:
            kill(self.pidfd)
            self.killed_at = self.kill_sent = time.monotonic()
            self.tasks_left = self.tasks()
        self.deadline = math.inf

    def _feed(self, event: int) -> None:
        try:
            self.stdin = self.stdin[os.write(self.in_w, self.stdin[:READ_CHUNK]) :]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            self.stdin = self.stdin[:0]
        if not self.stdin or event & (select.POLLERR | select.POLLHUP):
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.in_w >= 0:
            with contextlib.suppress(KeyError):
                self.poller.unregister(self.in_w)
            os.close(self.in_w)
            self.in_w = -1

    def _drain(self, fd: int) -> None:
        chunk = os.read(fd, READ_CHUNK)
        if not chunk:
            self.poller.unregister(fd)
            self._keep(fd, bytes(self.streams.pop(fd)))
            return
        buf = self.streams[fd]
        room = self.cap - len(buf)
        if len(chunk) <= room:
            buf += chunk
            return
        buf += chunk[: max(0, room)]
        if fd == self.out_r:
            self.outcome.stdout_truncated = True
        else:
            self.outcome.stderr_truncated = True
        self._hit(Limit.OUTPUT)

    def _keep(self, fd: int, data: bytes) -> None:
        if fd == self.out_r:
            self.outcome.stdout = data
        else:
            self.outcome.stderr = data
