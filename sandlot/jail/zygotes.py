"""The spawner's side of a zygote (zygote.py): starting one, and the requests it understands.

A zygote is a root helper, stdlib only, that builds boxes with mount syscalls from a plan and
starts a program in one: a slot's spawner keeps one to build each run's box ahead; a live box
(a session) has one of its own. Requests are JSON (see zygote.py's protocol).
"""

from __future__ import annotations

import json
import math
import os
import resource
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandlot.jail import bwrap
from sandlot.jail.bwrap import BoxLayout
from sandlot.jail.spec import Limits, RunSpec

ZYGOTE = str(Path(__file__).with_name("zygote.py"))
# The zygote's code comes on a descriptor and is compiled under a name that is no path: its
# frames are below every warm script's, whose command line is the zygote's, and no traceback,
# warning, stack or command line a script can print may name the server's files.
BOOT = ("import sys; exec(compile(open(int(sys.argv.pop(1)), 'rb').read(), "
        "'<sandlot zygote>', 'exec'))")  # fmt: skip
PRELUDES_MAX = 1 << 17  # bytes of the preludes' message: one datagram, which zygote.py reads


class Zygote:
    """A root helper (zygote.py) that builds boxes with mount syscalls, one ahead of its run."""

    def __init__(
        self, interpreter: str, init: str, bpf: bytes, join: Callable[[int], None] | None = None,
        preludes: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        """`init`: the program each box starts as (box_init.py builds it). `join` places the
        zygote (by pid) before it is sent anything, so that every box it builds starts there: a
        live box's cgroup (a slot's spawner is in its cgroups already). `preludes`: texts many
        of its scripts begin with, which it compiles once (see zygote.py)."""
        said = preludes_message(preludes)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        source = os.open(ZYGOTE, os.O_RDONLY | os.O_CLOEXEC)
        try:
            self.proc = subprocess.Popen(
                [interpreter, "-I", "-S", "-c", BOOT, str(source), str(theirs.fileno()), init],
                pass_fds=[source, theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env={},
            )  # fmt: skip
        finally:
            os.close(source)
            theirs.close()
        self.pid = self.proc.pid
        self.sock = ours
        self.owed = False  # a box's release, said after its status
        self._status: int | None = None  # the run's, if it came in place of another answer
        try:
            if join is not None:
                join(self.pid)
            self.sock.send(bpf)
            self.sock.send(said)
        except BaseException:
            self.stop()
            raise

    def alive(self) -> bool:
        return self.proc.poll() is None

    def prepare(self, box: dict[str, object]) -> None:
        """Have the next box built now, while this slot waits for its next run."""
        self.sock.send(json.dumps({"prepare": box}).encode())

    def start(self, request: dict[str, object], fds: tuple[int, ...]) -> tuple[int, dict]:
        """Send a run; returns a pidfd of its top process (opened by the zygote, its parent)
        and the CPU seconds its box cost to build (`init`, `confine`; none if it failed)."""
        self.settle()
        socket.send_fds(self.sock, [json.dumps(request).encode()], list(fds))
        message, pidfds, _, _ = socket.recv_fds(self.sock, 4096, 1)
        reply = json.loads(message) if message else {}
        if len(pidfds) != 1 or "pid" not in reply:
            for fd in pidfds:
                os.close(fd)
            raise OSError(reply.get("error") or "the zygote did not start the run")
        return pidfds[0], reply.get("cpu", {})

    def status(self) -> int:
        status = self._status if self._status is not None else int(self._recv()["status"])
        self._status = None
        self.owed = True
        return status

    def attach(self, path: str, tree: int) -> None:
        """Put the detached mount `tree` at `path` in the box of the run under way, in place of
        what was there; OSError if the zygote could not, or the run has ended."""
        socket.send_fds(self.sock, [json.dumps({"attach": path}).encode()], [tree])
        reply = self._recv()
        if "status" in reply:  # the run ended first: its status, for whoever asks for it
            self._status = int(reply["status"])
            reply = {"error": "the run has ended"}
        if not reply.get("attached"):
            raise OSError(reply.get("error") or "the zygote did not attach the mount")

    def settle(self) -> None:
        """Wait until the last run's box is gone with its mounts (what it held in /tmp is then
        no longer in the slot's memory): the zygote drops them after it sends the status, so
        that the run is answered before their teardown, not after."""
        if self.owed:
            if not self._recv().get("released"):
                raise OSError("the zygote did not release the last box")
            self.owed = False

    def _recv(self) -> dict[str, Any]:
        message = self.sock.recv(4096)
        if not message:
            raise OSError("the zygote exited")
        return json.loads(message)

    def stop(self) -> None:
        self.proc.kill()  # before the hang-up, which could find a message it had not read
        self.sock.close()
        self.proc.wait()


def preludes_message(preludes: tuple[str, ...]) -> bytes:
    message = json.dumps(list(preludes)).encode()
    if len(message) > PRELUDES_MAX:
        raise ValueError(f"warm_preludes: {len(message)} bytes as JSON, more than the "
                         f"{PRELUDES_MAX} a zygote reads")  # fmt: skip
    return message


def box_request(
    layout: BoxLayout, uid: int, spec: RunSpec, reuse_net: bool = False, cgroup: str = ""
) -> dict[str, object]:
    """What the zygote builds for a run: the mount plan, in a root of its own, for a uid.

    `reuse_net`: the box may be built in the network namespace of the zygote's box before it,
    when that box's run left no trace in it (zygote.py's Networks), which saves making one;
    only for boxes that never run at the same time as another of that zygote's (a slot's
    runs). `cgroup`: the cgroup.procs the box's init
    enters before it builds anything (the run's own cgroup), or "" to stay in the zygote's."""
    return {
        "root": layout.root_dir,
        "plan": bwrap.plan(layout, spec),
        "uid": uid,
        "hostname": bwrap.HOSTNAME,
        "reuse_net": reuse_net,
        "cgroup": cgroup,
        "net": spec.network or "",
    }


def run_request(spec: RunSpec, script: bool, cpus: tuple[int, ...] = ()) -> dict[str, object]:
    """How the zygote starts the program in its box (`script`: in its own warm interpreter;
    `cpus`: what it may use instead of what the box inherits, if any)."""
    return {
        "cwd": bwrap.BOX_WORKDIR,
        "env": bwrap.environment(spec),
        "argv": spec.argv[1:] if script else spec.argv,
        "script": script,
        "rlimits": rlimits(spec.limits),
        "cpus": list(cpus),
    }


def read_all(fd: int) -> bytes:
    """Everything until EOF; for a box's setup-error pipe, EOF alone means it was built."""
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    return b"".join(chunks)


def rlimits(limits: Limits) -> dict[str, tuple[int, int]]:
    """The rlimits of a box, never above the spawner's own hard limits (raising one needs
    CAP_SYS_RESOURCE, which root may lack in a container)."""
    cpu = max(1, math.ceil(limits.cpu_time))
    wanted = {
        "RLIMIT_CPU": (cpu, cpu + 1),  # soft < hard: SIGXCPU first, so the verdict is clear
        "RLIMIT_NOFILE": (limits.open_files, limits.open_files),
        "RLIMIT_FSIZE": (limits.file_size, limits.file_size),
        "RLIMIT_CORE": (0, 0),
    }
    out = {}
    for name, (soft, hard) in wanted.items():
        _, ceiling = resource.getrlimit(getattr(resource, name))
        if ceiling != resource.RLIM_INFINITY:
            hard = min(hard, ceiling)
        out[name] = (min(soft, hard), hard)
    return out
