"""The jail on its own: outcomes, nothing left after many runs, no run without every layer."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import hashlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from sandlot.errors import JailError, JailUnavailable
from sandlot.jail import Jail, JailConfig, Limit, Limits, Outcome, RunSpec, placement, wire
from sandlot.jail.privileges import CAPABILITIES
from sandlot.jail.seccomp import DENIED, compile_filter
from tests.conftest import running_server

pytestmark = pytest.mark.root

STATE = f"/run/sandlot-jailtest-{os.getpid()}"
SYS_PIDFD_GETFD = 438


# Processes a slot keeps between runs: the spawner, and with the zygote also the zygote and the
# next run's box, built ahead (its init, which starts the program once the run comes).
RESIDENTS = {"zygote": 3, "bwrap": 1}


@pytest.fixture(scope="module", params=["zygote", "bwrap"])
def jail(request):
    with Jail(JailConfig(slots=2, uid_base=64000, state_dir=STATE, boxes=request.param)) as j:
        yield j
    assert not any(STATE in line for line in Path("/proc/self/mounts").read_text().splitlines())
    Path(STATE).rmdir()


# The two ways into a slot: a blocking call (the CLI, benchmarks), and the event loop's (the
# server's, with no thread waiting on the spawner's socket).
RUN_PATHS: dict[str, Callable[[Jail, int, RunSpec], Outcome]] = {
    "blocking": lambda jail, slot, spec: jail.run(slot, spec),
    "event loop": lambda jail, slot, spec: asyncio.run(jail.run_async(slot, spec)),
}


@pytest.fixture(params=sorted(RUN_PATHS))
def run_via(request) -> Callable[[Jail, int, RunSpec], Outcome]:
    return RUN_PATHS[request.param]


def test_outcome_of_a_plain_run(jail):
    out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", "echo out; echo err >&2; exit 7")))
    assert (out.exit_code, out.signal, out.limit) == (7, None, None)
    assert out.stdout == b"out\n" and out.stderr == b"err\n"
    assert out.wall_time > 0 and out.cpu_time > 0


def test_limits_fire_and_are_named(jail):
    out = jail.run(1, RunSpec(argv=("/bin/sh", "-c", "head -c 5000000 /dev/zero"),
                              limits=Limits(output=1 << 20)))  # fmt: skip
    assert out.limit is Limit.OUTPUT and out.stdout_truncated and len(out.stdout) == 1 << 20
    out = jail.run(1, RunSpec(argv=("/bin/sh", "-c", "while :; do :; done"),
                              limits=Limits(wall_time=30, cpu_time=1)))  # fmt: skip
    assert out.limit is Limit.CPU_TIME  # the CPU limit, not the 30 s wall limit, ended it


# A program that writes past the cap and exits at once races the watch: it may be gone before
# its output is read. Either way the run was cut short by the output limit, and says so.
OVERRUNS = {"stdout": "head -c 5000 /dev/zero", "stderr": "head -c 5000 /dev/zero >&2"}


@pytest.mark.parametrize("stream", sorted(OVERRUNS))
def test_an_output_overrun_is_named_however_the_race_goes(jail, stream):
    small = Limits(output=1000)
    for _ in range(30):
        out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", OVERRUNS[stream]), limits=small))
        assert out.limit is Limit.OUTPUT, out
        assert getattr(out, f"{stream}_truncated") and len(getattr(out, stream)) == 1000
    control = jail.run(0, RunSpec(argv=("/bin/sh", "-c", "head -c 1000 /dev/zero"), limits=small))
    assert (control.limit, control.stdout_truncated, control.exit_code) == (None, False, 0)
    assert len(control.stdout) == 1000


def test_devices_work(jail):
    script = "head -c 4 /dev/zero | od -An -tx1; head -c 8 /dev/urandom | wc -c; echo x > /dev/null"
    out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", script)))
    assert (out.exit_code, out.stdout.split()) == (0, [b"00"] * 4 + [b"8"]), out.stderr


def test_environment_is_only_what_the_run_gives(jail):
    os.environ["SANDLOT_CANARY"] = "leak"
    try:
        out = jail.run(0, RunSpec(argv=("/usr/bin/env",), env={"EXTRA": "1"}))
    finally:
        del os.environ["SANDLOT_CANARY"]
    names = {line.split("=", 1)[0] for line in out.stdout.decode().splitlines()}
    assert names == {"PATH", "HOME", "TMPDIR", "LANG", "USER", "PWD", "EXTRA"}


def test_a_nul_in_argv_or_environment_is_refused_whole(jail):
    """No program can be given a NUL byte: a run whose argv or environment holds one is refused
    with the reason, not cut short at the NUL, and the slot serves on."""
    for spec in (RunSpec(argv=("/bin/echo", "a\0b")),
                 RunSpec(argv=("/usr/bin/env",), env={"X": "a\0b"})):  # fmt: skip
        with pytest.raises(JailError, match=r"(?i)nul"):
            jail.run(0, spec)
    assert jail.run(0, RunSpec(argv=("/bin/echo", "ok"))).stdout == b"ok\n"


@pytest.mark.slow
def test_nothing_accumulates_over_many_runs(jail):
    before = {s.config.index: s.cgroup.read().memory_usage for s in jail.slots}
    for i in range(1000):
        out = jail.run(i % 2, RunSpec(argv=("/bin/sh", "-c", "sleep 0.001 & echo x > f; exit 0"),
                                      files={"in.txt": b"x"}))  # fmt: skip
        assert out.exit_code == 0
    for slot in jail.slots:
        deadline = time.monotonic() + 5  # the next box is built while the slot is idle
        while slot.cgroup.task_count() != RESIDENTS[jail.config.boxes]:
            assert time.monotonic() < deadline, "a run left processes in the slot"
            time.sleep(0.01)
        assert os.listdir(slot.config.layout.workdir) == []
        grown = slot.cgroup.read().memory_usage - before[slot.config.index]
        assert grown < 64 << 20, f"slot memory grew by {grown} bytes over 1000 runs"


def test_a_program_starts_with_no_signal_ignored(jail):
    """Python ignores SIGPIPE and SIGXFSZ, and every process that builds a box is Python's: a
    program must still start as from a shell, killed by a write to a closed pipe (`yes | head`
    ends) and by a file past its size limit. (glibc's two internal signals, 32 and 33, are
    beyond any program's reach and start ignored after a posix_spawn.)"""
    out = jail.run(0, RunSpec(argv=("grep", "^SigIgn:", "/proc/self/status")))
    ignored = int(out.stdout.split()[1], 16)
    assert [sig for sig in range(1, 32) if ignored & (1 << (sig - 1))] == [], out.stdout
    out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", "yes | head -n 2; echo $?")))
    assert (out.stdout, out.stderr) == (b"y\ny\n0\n", b"")  # no "yes: Broken pipe"
    big = RunSpec(argv=("/bin/sh", "-c", "exec head -c 2000 /dev/zero > f"),
                  limits=Limits(file_size=1000))  # fmt: skip
    assert jail.run(0, big).signal == signal.SIGXFSZ


SIGNALS = """
import signal, sys
ignored = int(next(line for line in open("/proc/self/status") if line.startswith("SigIgn:"))
              .split()[1], 16)
print([n for n in range(1, 32) if ignored & (1 << (n - 1))],
      signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


@pytest.mark.parametrize("boxes", ["zygote", "bwrap"])
def test_signals_the_server_ignored_are_no_programs(boxes):
    """A server started under nohup or as a shell's background job inherits SIGHUP, SIGINT and
    SIGQUIT ignored: a program still starts with no signal ignored, and Python (warm or not)
    as from a shell, ignoring SIGPIPE and SIGXFSZ alone, with its KeyboardInterrupt."""
    python = os.path.realpath(sys.executable)
    state = f"{STATE}-signals-{boxes}"
    inherited = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in inherited}
    try:
        jail = Jail(JailConfig(slots=1, uid_base=64100, state_dir=state, boxes=boxes,
                               zygote_python=python)).start()  # fmt: skip
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    try:
        out = jail.run(0, RunSpec(argv=("grep", "^SigIgn:", "/proc/self/status")))
        assert int(out.stdout.split()[1], 16) & 0x7FFFFFFF == 0, out.stdout  # 32, 33: glibc
        for warm in (True, False):
            spec = RunSpec(argv=(python, "main.py"), files={"main.py": SIGNALS.encode()}, warm=warm)
            out = jail.run(0, spec)
            assert out.stdout == b"[13, 25] True\n", (warm, out)
    finally:
        jail.close()
    Path(state).rmdir()


def test_a_box_built_ahead_waits_with_no_privilege(jail):
    """The zygote's box for the next run waits, before any run is handed to it, as its program
    will run: the slot's uid, no capability in any set, no_new_privs, the seccomp filter."""
    if jail.config.boxes != "zygote":
        pytest.skip("bubblewrap builds no box ahead")
    slot = jail.slots[0]
    jail.run(0, RunSpec(argv=("/bin/true",)))
    deadline = time.monotonic() + 5
    while True:  # until the box is built: the filter is the last step of its confinement
        inits = children_named(slot.proc.pid, "sandlot-init")
        status = box_status(inits[0]) if inits else {}
        if status.get("Seccomp", "").strip() == "2":
            break
        assert time.monotonic() < deadline, (
            f"no box was built ahead, or it is not filtered: {status}"
        )
        time.sleep(0.01)
    assert status["Uid"].split() == [str(slot.config.uid)] * 4
    for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[caps], 16) == 0, (caps, status[caps])
    assert (status["NoNewPrivs"].strip(), status["Seccomp"].strip()) == ("1", "2")


def box_status(pid: int) -> dict[str, str]:
    with contextlib.suppress(OSError):
        text = Path(f"/proc/{pid}/status").read_text()
        return dict(line.split(":", 1) for line in text.splitlines())
    return {}


def children_named(ancestor: int, comm: str) -> list[int]:
    """Pids named `comm` anywhere below `ancestor`."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), stat)
    found = []
    for pid, (parent, stat) in parents.items():
        while parent in parents and parent != ancestor:
            parent = parents[parent][0]
        if parent == ancestor and f"({comm})" in stat:
            found.append(pid)
    return found


def test_a_missing_program_is_the_runs_failure(jail):
    out = jail.run(0, RunSpec(argv=("./nothing-here",)))
    assert out.exit_code not in (0, None) and b"nothing-here" in out.stderr


def test_each_run_gets_the_box_its_spec_describes(jail):
    """A box built ahead for one mount plan is never handed to a run that asks for another."""
    look = RunSpec(argv=("/bin/sh", "-c", "ls /opt/sandlot/python/bin/python3"))
    more = dataclasses.replace(look, ro_binds=("/opt/sandlot/python",))
    seen = [jail.run(0, look), jail.run(0, more), jail.run(0, look)]
    assert [out.exit_code == 0 for out in seen] == [False, True, False]


def test_missing_bubblewrap_refuses_to_start():
    with pytest.raises(JailUnavailable, match="bubblewrap not found"):
        Jail(JailConfig(slots=1, bwrap="/nonexistent/bwrap", boxes="bwrap",
                        state_dir=STATE + "-x")).start()  # fmt: skip


def test_unknown_box_builder_refuses_to_start():
    with pytest.raises(JailUnavailable, match="boxes must be one of zygote, bwrap"):
        Jail(JailConfig(slots=1, boxes="chroot", state_dir=STATE + "-y")).start()


def test_server_without_isolation_runs_nothing():
    env = {"SANDLOT_BOXES": "bwrap", "SANDLOT_BWRAP": "/nonexistent/bwrap"}
    with running_server(env=env) as srv:
        health = httpx.get(srv.url + "/health")
        assert health.status_code == 503
        assert "bubblewrap not found" in health.json()["isolation"]["problem"]
        r = httpx.post(srv.url + "/run_code", json={"code": "print(1)", "language": "python"})
        assert r.status_code == 503
        assert "runs no code" in r.json()["detail"]


def test_a_dead_spawner_is_replaced(jail):
    slot = jail.slots[0]
    assert slot.proc is not None
    slot.proc.kill()
    slot.proc.wait()
    out = jail.run(0, RunSpec(argv=("/bin/echo", "back")))
    assert out.stdout == b"back\n"
    assert slot.proc.poll() is None


def commands(pids: list[int]) -> list[str]:
    names = []
    for pid in pids:
        with contextlib.suppress(OSError):
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
    return names


def test_killing_the_spawner_mid_run_kills_the_box(jail, run_via):
    slot = jail.slots[1]
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(run_via, jail, 1, RunSpec(argv=("/bin/sleep", "30")))
        deadline = time.monotonic() + 10
        while "sleep" not in commands(slot.cgroup.pids()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slot.proc is not None
        slot.proc.kill()
        with pytest.raises(JailError, match="spawner lost"):
            future.result(timeout=20)
    deadline = time.monotonic() + 10
    while slot.cgroup.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slot.cgroup.pids() == [], "the box outlived its spawner"
    assert jail.run(1, RunSpec(argv=("/bin/true",))).exit_code == 0


def _steal_channel(slot) -> socket.socket:
    """The spawner's end of a slot's channel, duplicated into this process (pidfd_getfd): what
    an attacker holding that descriptor could write, the server would read."""
    fd_number = int(Path(f"/proc/{slot.proc.pid}/cmdline").read_bytes().split(b"\0")[-2])
    pidfd = os.pidfd_open(slot.proc.pid)
    try:
        fd = ctypes.CDLL(None, use_errno=True).syscall(SYS_PIDFD_GETFD, pidfd, fd_number, 0)
        assert fd >= 0, os.strerror(ctypes.get_errno())
    finally:
        os.close(pidfd)
    return socket.socket(fileno=fd)


def test_a_reply_out_of_step_is_never_taken_for_a_result(jail, run_via):
    """A forged reply to an earlier request, waiting in the channel, makes the next run fail
    and the slot start afresh; the run after that is answered by its own result."""
    assert jail.run(0, RunSpec(argv=("/bin/echo", "one"))).stdout == b"one\n"
    slot = jail.slots[0]
    old = slot.proc.pid
    forged = wire.Done(slot._last_id, Outcome(exit_code=0, stdout=b"forged\n"))
    with _steal_channel(slot) as stolen:
        wire.Channel(stolen, wire.ToSpawner).send(forged)
    with pytest.raises(JailError, match="out of step"):
        run_via(jail, 0, RunSpec(argv=("/bin/echo", "two")))
    out = jail.run(0, RunSpec(argv=("/bin/echo", "three")))
    assert out.stdout == b"three\n"
    assert slot.proc.pid != old


def test_garbage_on_the_channel_resets_the_slot(jail, run_via):
    jail.run(1, RunSpec(argv=("/bin/true",)))
    slot = jail.slots[1]
    with _steal_channel(slot) as stolen:
        stolen.sendall(b"\0\0\0\x05garbage")
    with pytest.raises(JailError, match="spawner lost"):
        run_via(jail, 1, RunSpec(argv=("/bin/echo", "x")))
    assert jail.run(1, RunSpec(argv=("/bin/echo", "y"))).stdout == b"y\n"


def test_a_frame_claiming_more_than_any_message_resets_the_slot(jail, run_via):
    jail.run(1, RunSpec(argv=("/bin/true",)))
    with _steal_channel(jail.slots[1]) as stolen:
        stolen.sendall(wire.HEADER.pack(wire.MAX_FRAME + 1))
    with pytest.raises(JailError, match="larger than any message"):
        run_via(jail, 1, RunSpec(argv=("/bin/echo", "x")))
    assert jail.run(1, RunSpec(argv=("/bin/echo", "y"))).stdout == b"y\n"


def test_frames_larger_than_a_socket_holds_cross_both_ways(jail, run_via):
    """8 MiB of files in and 4 MiB of output back, in one run each way, whichever way the run
    came in; and the blocking way still works on the socket the event loop's way left."""
    files = {"big": os.urandom(8 << 20)}
    spec = RunSpec(argv=("/bin/sh", "-c", "sha256sum big; head -c 4194304 /dev/zero"),
                   files=files, limits=Limits(output=8 << 20))  # fmt: skip
    out = run_via(jail, 0, spec)
    digest = hashlib.sha256(files["big"]).hexdigest().encode()
    assert out.stdout.startswith(digest) and len(out.stdout) == len(digest + b"  big\n") + (4 << 20)
    assert jail.run(0, RunSpec(argv=("/bin/echo", "after"))).stdout == b"after\n"


def test_a_slot_in_use_makes_the_event_loops_run_wait_its_turn(jail):
    """Two callers on one slot (the server's admission never does this, a mistake might): the
    second waits for the first instead of interleaving frames, and each gets its own result."""

    async def second() -> Outcome:
        return await jail.run_async(1, RunSpec(argv=("/bin/echo", "second")))

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(jail.run, 1, RunSpec(argv=("/bin/sh", "-c", "sleep 1; echo first")))
        while not jail.slots[1].lock.locked():
            time.sleep(0.01)
        assert asyncio.run(second()).stdout == b"second\n"
        assert first.result(timeout=30).stdout == b"first\n"


def test_a_run_cancelled_while_it_waits_for_its_slot_leaves_the_slot_free(jail):
    """An event loop's run cancelled while it waits for a slot another caller holds (a loop
    shutting down): once the holder is done, the slot is free for the next caller, not kept
    forever by the thread that waited for it."""

    async def cancelled() -> None:
        task = asyncio.ensure_future(jail.run_async(1, RunSpec(argv=("/bin/echo", "never"))))
        await asyncio.sleep(0.2)  # it is waiting for the slot in a thread
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    slot = jail.slots[1]
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(jail.run, 1, RunSpec(argv=("/bin/sh", "-c", "sleep 1; echo first")))
        while not slot.lock.locked():
            time.sleep(0.01)
        asyncio.run(cancelled())
        assert first.result(timeout=30).stdout == b"first\n"
    deadline = time.monotonic() + 10
    while slot.lock.locked():
        assert time.monotonic() < deadline, "the slot stayed taken"
        time.sleep(0.01)
    assert jail.run(1, RunSpec(argv=("/bin/echo", "next"))).stdout == b"next\n"


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 0.0])
def test_limits_must_be_finite_and_positive(value):
    with pytest.raises(ValueError, match="finite and positive"):
        Limits(wall_time=value)


def test_a_seccomp_rule_that_cannot_compile_refuses_to_start():
    with pytest.raises(JailUnavailable, match="does not know the syscall 'no_such_call'"):
        compile_filter((*DENIED, "no_such_call"))


FREEZER = Path("/sys/fs/cgroup/freezer")


@pytest.mark.skipif(not FREEZER.is_dir(), reason="needs the cgroup v1 freezer to hold a process")
def test_a_run_whose_processes_survive_breaks_the_slot_until_they_are_gone(jail):
    """A process that outlives every kill (frozen here) fails its run, and the slot serves no
    run, with the reason in Jail.problem, until it is gone."""
    slot = jail.slots[1]
    frozen = FREEZER / f"sandlot-test-{os.getpid()}"
    frozen.mkdir()
    try:
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(
                jail.run, 1, RunSpec(argv=("/bin/sleep", "60"), limits=Limits(wall_time=2))
            )
            deadline = time.monotonic() + 10
            while not (sleepers := [p for p in slot.cgroup.pids()
                                    if "sleep" in commands([p])]):  # fmt: skip
                assert time.monotonic() < deadline, "the run never started"
                time.sleep(0.05)
            (frozen / "cgroup.procs").write_text(str(sleepers[0]))
            (frozen / "freezer.state").write_text("FROZEN")
            with pytest.raises(JailError, match="survived"):
                future.result(timeout=60)
        with pytest.raises(JailError, match="survived"):
            jail.run(1, RunSpec(argv=("/bin/true",)))
        assert jail.problem is not None and "survived" in jail.problem
    finally:
        (frozen / "freezer.state").write_text("THAWED")
        deadline = time.monotonic() + 10
        while (frozen / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)
        frozen.rmdir()
    assert jail.run(1, RunSpec(argv=("/bin/echo", "back"))).stdout == b"back\n"
    assert jail.problem is None


# Runs that leave something in their network namespace: what each leaves, if it were handed on.
NET_LEAVERS = {
    "a connection closed both ways, a listener, a datagram socket and an abstract name": """
import socket
kept = []
for family, addr in ((socket.AF_INET, ("127.0.0.1", 5555)), (socket.AF_INET6, ("::1", 5555))):
    srv = socket.socket(family)
    srv.bind(addr)
    srv.listen()
    cli = socket.create_connection(addr[:2])
    conn, _ = srv.accept()
    conn.sendall(b"x" * 100000)
    conn.close()  # the server side closes first: its port would sit in TIME_WAIT
    cli.recv(1 << 20)
    cli.close()
    kept.append(srv)  # and one left listening when the run ends
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 5556))
abstract = socket.socket(socket.AF_UNIX)
abstract.bind("\\0sandlot-probe")
abstract.listen()
""",
    "a connection left half closed, with data unread": """
import socket
srv = socket.socket()
srv.bind(("127.0.0.1", 5555))
srv.listen()
cli = socket.create_connection(("127.0.0.1", 5555))
conn, _ = srv.accept()
cli.sendall(b"unread" * 1000)
cli.shutdown(socket.SHUT_WR)  # FIN_WAIT on one side, data queued on the other, then killed
""",
    "a datagram to a port nobody listens on": """
import socket
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9))
socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b"x", ("::1", 9))
""",
    "connections to addresses with no route": """
import socket
for family, addr in ((socket.AF_INET, ("10.1.2.3", 80)), (socket.AF_INET6, ("2001:db8::1", 80))):
    try:
        socket.socket(family).connect(addr)
    except OSError:
        pass  # refused before any packet: only a counter moved
""",
    "an IPv6 flow label, which outlives its socket": """
import socket, struct
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
# struct in6_flowlabel_req: ::1, label 0x12345, IPV6_FL_A_GET with IPV6_FL_F_CREATE, shared
# exclusively, 60 s to linger and expire
request = socket.inet_pton(socket.AF_INET6, "::1") + struct.pack("!I", 0x12345)
s.setsockopt(socket.IPPROTO_IPV6, 32, request + struct.pack("=BBHHHI", 0, 1, 1, 60, 60, 0))
""",
    "a unix socket with a name, in flight to itself": """
import array, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\\0sandlot-in-flight")
s.connect("\\0sandlot-in-flight")
s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))])
""",
}
# Runs that leave nothing there: the next box is built in the same network namespace.
NET_QUIET = {
    "nothing at all": "print('quiet')",
    "a unix socket pair and a file": "import socket; a, b = socket.socketpair(); a.send(b'x'); "
    "b.recv(1); open('f', 'w').write('x')",
}

NET_LOOKER = """
import json, os, socket
net = {name: open(f"/proc/net/{name}").read()
       for name in ("dev", "snmp", "snmp6", "netstat", "ip6_flowlabel", "igmp", "igmp6",
                    "mcfilter", "mcfilter6", "anycast6", "tcp", "tcp6", "udp", "udp6", "raw",
                    "raw6", "unix", "packet")}
net["sockets"] = open("/proc/net/sockstat").readline()
binds = {}
for family, kind, addr in ((socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 5555)),
                           (socket.AF_INET6, socket.SOCK_STREAM, ("::1", 5555)),
                           (socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 5556)),
                           (socket.AF_UNIX, socket.SOCK_STREAM, "\\0sandlot-probe"),
                           (socket.AF_UNIX, socket.SOCK_DGRAM, "\\0sandlot-in-flight")):
    s = socket.socket(family, kind)  # no SO_REUSEADDR: a TIME_WAIT entry would refuse it
    try:
        s.bind(addr)
        binds[str(addr)] = "ok"
    except OSError as e:
        binds[str(addr)] = str(e)
    s.close()
print(json.dumps({"net": net, "binds": binds, "host": socket.gethostname(),
                  "namespace": os.readlink("/proc/self/ns/net")}))
"""


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_network_namespace_is_handed_on_only_as_it_was_made(warm):
    """A slot's box is built in the network namespace of the box before it only when that run
    left it exactly as it was made: after any run that sent a packet, left a socket, a name, a
    flow label or a membership, or moved a counter, the next run sees what a new box shows; after
    a run that did none of these, the same namespace serves again."""
    python = os.path.realpath(sys.executable)
    state = f"{STATE}-net-{warm}"

    def run(jail: Jail, code: str) -> Outcome:
        spec = RunSpec(argv=(python, "main.py"), files={"main.py": code.encode()}, warm=warm)
        out = jail.run(0, spec)
        assert out.exit_code == 0, out.stderr.decode()
        return out

    def look(jail: Jail) -> tuple[str, dict]:
        seen = json.loads(run(jail, NET_LOOKER).stdout)
        assert set(seen["binds"].values()) == {"ok"}, seen["binds"]
        assert seen["host"] == "sandlot"
        return seen.pop("namespace"), seen

    with Jail(JailConfig(slots=1, uid_base=64100, state_dir=state,
                         zygote_python=python)) as jail:  # fmt: skip
        namespace, new = look(jail)
        assert "sockets: used 0" in new["net"]["sockets"], new["net"]["sockets"]
        for what, code in NET_QUIET.items():
            run(jail, code)
            assert look(jail) == (namespace, new), f"not handed on after {what}"
        for what, code in NET_LEAVERS.items():
            run(jail, code)
            then, seen = look(jail)
            differ = {k: v for k, v in seen["net"].items() if new["net"][k] != v}
            assert seen == new, f"{what}: the next run saw it: {differ} {seen['binds']}"
            assert then != namespace, f"{what}: the namespace was handed on"
            namespace = then
    Path(state).rmdir()


def test_a_network_namespaces_state_is_read_as_far_as_needed(monkeypatch):
    """Without IPv6 (ipv6.disable=1) its files are not there: their state is None, the same
    every time, so namespaces are still handed on. Compared with a state, reading stops at the
    first file that differs (the loopback's counters, after any run that used the network)."""
    from sandlot.jail import zygote

    monkeypatch.setattr(zygote, "NET_STATE", (*zygote.NET_STATE, "no-such-file"))
    quiet = subprocess.Popen(["unshare", "--net", "sleep", "60"])  # a namespace nothing uses
    try:
        ours, theirs = "/proc/self/ns/net", f"/proc/{quiet.pid}/ns/net"
        deadline = time.monotonic() + 10
        while os.readlink(theirs) == os.readlink(ours) and time.monotonic() < deadline:
            time.sleep(0.01)  # until unshare has made it
        fd = os.open(theirs, os.O_RDONLY)
        state = zygote.net_state(fd)
        assert zygote.net_state(fd, state) == state
        assert zygote.net_state(fd, [b"other"] * len(state)) == state[:1]
        os.close(fd)
    finally:
        quiet.kill()
        quiet.wait()
    assert state[-1] is None and len(state) == len(zygote.NET_STATE)
    assert state[zygote.NET_STATE.index("sockstat")].startswith(b"sockets: used ")


def test_a_slot_makes_a_network_namespace_per_box_when_told_not_to_reuse_one():
    python = os.path.realpath(sys.executable)
    state = f"{STATE}-net-off"
    spec = RunSpec(argv=(python, "-c", "import os; print(os.readlink('/proc/self/ns/net'))"))
    with Jail(JailConfig(slots=1, uid_base=64100, state_dir=state, reuse_netns=False)) as jail:
        seen = {jail.run(0, spec).stdout for _ in range(3)}
    assert len(seen) == 3, seen
    Path(state).rmdir()


ENDINGS = {
    "a thread outlives the main code": "import threading, time\n"
    "threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()\n"
    "print('main')\n",
    "exit functions, no threading": "import atexit\natexit.register(print, 'bye')\nprint('main')\n",
    "both, and an exit code": "import atexit, sys, threading\natexit.register(print, 'bye')\n"
    "threading.Thread(target=print, args=('thread',)).start()\nsys.exit(3)\n",
    "nothing imported": "print('main')\n",
}


def warm_as_cold(name: str, scripts: dict[str, str], **config) -> dict[str, tuple]:
    """Each script as main.py, warm and cold in a jail of its own: what the cold run gave
    (exit code, stdout, stderr), once shown equal to the warm run's."""
    python = os.path.realpath(sys.executable)
    state = f"{STATE}-{name}"
    seen = {}
    with Jail(JailConfig(slots=1, uid_base=64100, state_dir=state, zygote_python=python,
                         **config)) as jail:  # fmt: skip
        for what, code in scripts.items():
            runs = [jail.run(0, RunSpec(argv=(python, "main.py"), files={"main.py": code.encode()},
                                        warm=warm))
                    for warm in (True, False)]  # fmt: skip
            warm, cold = ((o.exit_code, o.stdout, o.stderr) for o in runs)
            assert warm == cold, what
            seen[what] = cold
    Path(state).rmdir()
    return seen


def test_a_warm_script_ends_as_the_interpreter_would():
    """A warm script's process ends the way `python main.py` does: it waits for the threads the
    script left running and runs its exit functions, though it imports neither module itself
    when the script did not."""
    for name, (_, stdout, _) in warm_as_cold("ends", ENDINGS).items():
        assert stdout.startswith(b"main\n") or name.startswith("both"), stdout


HUMANEVAL_GUARD = """\
import builtins, os, shutil, subprocess, sys
builtins.exit = builtins.quit = None
for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid",
             "fork", "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink",
             "fchmod", "fchown", "chmod", "chown", "chroot", "lchown", "getcwd", "chdir"):
    setattr(os, name, None)
shutil.rmtree = shutil.move = shutil.chown = subprocess.Popen = None
for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
    sys.modules[name] = None
"""
NO_BUILTINS = """\
import builtins, sys
put, names = setattr, [n for n in dir(builtins) if not n.startswith("__")]
for name in names:
    put(builtins, name, None)
sys.stdout.write("hello\\n")
"""
# Scripts that rebind what a process ends with (as the guards SandboxFusion and human-eval put
# before a program do, and worse): each ends warm exactly as it does in `python main.py`.
REBINDS = {
    "SandboxFusion's guard": "import os, sys\nexit = None\nos._exit = None\nsys.exit = None\n"
    "print('hello')\n",
    "os._exit a lambda": "import os\nos._exit = lambda status: None\nprint('hello')\n",
    "os._exit a lambda, then an error": "import os\nos._exit = lambda status: None\n"
    "raise ValueError('wrong')\n",
    "human-eval's guard": HUMANEVAL_GUARD + "print('hello')\n",
    "human-eval's guard, then a failed assert": HUMANEVAL_GUARD + "assert 1 == 2\n",
    "no built-in left, then sys.exit(3)": NO_BUILTINS + "sys.exit(3)\n",
    "no built-in left, then an error": NO_BUILTINS + "{}['key']\n",
    "sys.excepthook None": "import sys\nsys.excepthook = None\nraise ValueError('x')\n",
    "sys.excepthook gone": "import sys\ndel sys.excepthook\nraise ValueError('x')\n",
    "sys.excepthook fails": "import sys\ndef hook(*exc):\n    raise KeyError('hook')\n"
    "sys.excepthook = hook\nraise ValueError('x')\n",
    "sys.excepthook exits": "import sys\ndef hook(*exc):\n    raise SystemExit(4)\n"
    "sys.excepthook = hook\nraise ValueError('x')\n",
    "an exit status past a C long": "raise SystemExit(2**100)\n",
    "an exit status of a subclass of int": "class Code(int):\n    def __and__(self, other):\n"
    "        return 0\nraise SystemExit(Code(7))\n",
    "an exit message whose str fails": "class Message:\n    def __str__(self):\n"
    "        raise RuntimeError('no')\nraise SystemExit(Message())\n",
    "a module posing as threading": "import sys, types\n"
    "sys.modules['threading'] = types.SimpleNamespace(_shutdown=None)\nprint('hello')\n",
    "a stdout whose flush fails": "import sys\nclass Out:\n    def write(self, text):\n"
    "        return len(text)\n    def flush(self):\n        raise RuntimeError('no')\n"
    "    def __repr__(self):\n        return 'Out'\nsys.stdout = Out()\n",
    "stdout and stderr gone": "import sys\nsys.stdout = sys.stderr = None\nraise ValueError('x')\n",
    "a plain script after them all": "print('after')\n",
}


def test_a_warm_script_ends_as_python_does_whatever_names_it_rebinds():
    """A warm script's end (its exit status, exit functions, threads, the report of an error)
    looks up no name the script could rebind: SandboxFusion's guard (`exit`, `os._exit` and
    `sys.exit` set to None) and the like end as they do in `python main.py`, and the zygote's
    fork never returns to the zygote's loop (the next script in the slot runs as usual)."""
    seen = warm_as_cold("rebinds", REBINDS)
    assert seen["SandboxFusion's guard"] == (0, b"hello\n", b"")
    assert seen["os._exit a lambda"] == (0, b"hello\n", b"")
    assert seen["human-eval's guard"] == (0, b"hello\n", b"")
    assert seen["human-eval's guard, then a failed assert"][0] == 1
    assert seen["no built-in left, then sys.exit(3)"][:2] == (3, b"hello\n")
    assert seen["sys.excepthook exits"][0] == 4
    assert seen["an exit status past a C long"][0] == 255
    assert seen["a stdout whose flush fails"][0] == 120
    assert seen["a plain script after them all"] == (0, b"after\n", b"")
    for what, (_, stdout, stderr) in seen.items():
        assert b"sandlot" not in stdout + stderr, what


NULS = {
    "a NUL in a line": "print(1)\0print(2)\nprint(3)\n",
    "a NUL before the last newline": "print('main')\nx = 1\0\n",
    "a NUL at the end": "print('main')\n\0",
}


def test_a_warm_script_with_a_nul_byte_runs_as_python_reads_it():
    """CPython reads a file with a NUL byte by rules of its own (a syntax error, or the file
    cut short), which compile() does not share: a warm script holding one runs as a cold one."""
    seen = warm_as_cold("nuls", NULS)
    assert b"SyntaxError" in seen["a NUL in a line"][2]


PRELUDE = 'print("prelude ran")\n\n\ndef fails():\n    raise ValueError("in the prelude")\n'
AFTER_PRELUDE = {
    "a traceback through it": PRELUDE + "fails()\n",
    "a syntax error after it, before any of it runs": PRELUDE + "def broken(:\n    pass\n",
    "the first string after it is no docstring": PRELUDE
    + '"text"\nprint(__doc__, fails.__code__.co_filename == __file__)\n'
    + "print(fails.__code__.co_firstlineno)\n",
    "only its first line": 'print("prelude ran")\nprint(__file__)\n',
}


def test_a_script_that_begins_with_a_prelude_runs_as_if_compiled_whole():
    """The zygote compiles the preludes it is given once (the judge's driver), and a script that
    begins with one runs exactly as `python main.py` runs it: tracebacks, line numbers, file
    names, syntax errors (nothing runs), and no docstring taken from the rest."""
    seen = warm_as_cold("preludes", AFTER_PRELUDE, warm_preludes=(PRELUDE,))
    assert b'main.py", line 5, in fails' in seen["a traceback through it"][2]
    assert seen["a syntax error after it, before any of it runs"][:2] == (1, b"")
    assert seen["the first string after it is no docstring"][1] == b"prelude ran\nNone True\n4\n"


def test_a_box_that_cannot_be_built_says_why_and_the_zygote_serves_on(tmp_path):
    """The reason a box's template fails (here a bind of a path that is not there) reaches the
    run that asked for it, and the next box is built as usual."""
    from sandlot.jail import box_init
    from sandlot.jail.bwrap import BoxLayout
    from sandlot.jail.seccomp import compile_filter
    from sandlot.jail.zygotes import Zygote, box_request

    work, root, etc = (tmp_path / name for name in ("work", "root", "etc"))
    for d in (work, root, etc):
        d.mkdir()
    layout = BoxLayout(bwrap="", workdir=str(work), root_dir=str(root), etc_dir=str(etc),
                       ro_binds=(), tmp_size=1 << 20, shm_size=1 << 20)  # fmt: skip
    zygote = Zygote(sys.executable, box_init.build_box_init(), compile_filter())
    try:
        good = box_request(layout, 65534, RunSpec(argv=("/bin/true",)))
        bad = {**good, "plan": [["ro-bind", "/nonexistent-sandlot", "/x"], *good["plan"]]}
        pipes = [os.pipe() for _ in range(4)]
        ends = (pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1])
        run = {
            "cwd": "/",
            "env": {},
            "argv": ["/bin/true"],
            "script": False,
            "rlimits": {},
            "cpus": [],
        }
        with pytest.raises(OSError, match="No such file or directory"):
            zygote.start({"box": bad, "run": run}, ends)
        pidfd, _ = zygote.start({"box": good, "run": run}, ends)
        assert os.waitstatus_to_exitcode(zygote.status()) == 0
        os.close(pidfd)
        for r, w in pipes:
            os.close(r)
            os.close(w)
    finally:
        zygote.stop()


CONTAINED_RUNS = """
import json, sys
from sandlot.jail import Jail, JailConfig, RunSpec
python, state, boxes = sys.argv[1:]
config = JailConfig(slots=1, uid_base=64100, state_dir=state, boxes=boxes, zygote_python=python,
                    ro_binds=(python.rsplit("/", 2)[0],))
script = {"main.py": b"import os; print('warm', os.getuid())"}
with Jail(config) as jail:
    outs = [jail.run(0, RunSpec(argv=(python, "main.py"), files=script, warm=True)),
            jail.run(0, RunSpec(argv=("/bin/sh", "-c", "echo exec $(id -u)")))]
print(json.dumps([[o.exit_code, o.stdout.decode(), o.stderr.decode()] for o in outs]))
"""


@pytest.mark.parametrize("boxes", ["zygote", "bwrap"])
def test_the_jail_needs_no_capability_beyond_those_it_names(boxes):
    """In a container the server has exactly CAPABILITIES (no CAP_SYS_PTRACE, for one, which
    reaching into a confined box's init would need): a warm Python script, a program in the
    zygote's box and bubblewrap's all run with a bounding set of only those."""
    python = "/opt/sandlot/python/bin/python3"
    if not os.access(python, os.X_OK):
        pytest.skip("the sandbox runtime is not installed (make setup)")
    caps = ",".join(f"+{name.removeprefix('CAP_').lower()}" for name, _, _ in CAPABILITIES)
    state = f"{STATE}-contained"
    done = subprocess.run(
        ["setpriv", f"--bounding-set=-all,{caps}", "--inh-caps=-all", "--",
         sys.executable, "-c", CONTAINED_RUNS, python, state, boxes],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (warm, warm_out, warm_err), (code, out, err) = json.loads(done.stdout.splitlines()[-1])
    assert (warm, warm_out) == (0, "warm 64100\n"), warm_err
    assert (code, out) == (0, "exec 64100\n"), err
    Path(state).rmdir()


@pytest.mark.parametrize("boxes", ["zygote", "bwrap"])
def test_a_slots_runs_are_kept_to_its_cpus(boxes):
    """Kept to CPUs (`slot_cpus`), every process of a slot's runs may use its slot's CPUs and
    no other: a program its box's init starts, and a warm script forked from the zygote; a run
    that may use any CPU (a compiler) gets every one the jail may use."""
    python = os.path.realpath(sys.executable)
    allowed = placement.allowed_cpus()
    sets = placement.spread(2, allowed)
    state = f"{STATE}-cpus"
    lister = RunSpec(argv=("/bin/sh", "-c", "grep Cpus_allowed_list: /proc/self/status"))
    looker = RunSpec(argv=(python, "main.py"), warm=True, files={
        "main.py": b"import os; print(sorted(os.sched_getaffinity(0)))"})  # fmt: skip

    def seen(jail: Jail, slot: int, spec: RunSpec) -> tuple[list[int], list[int]]:
        listed = jail.run(slot, spec).stdout.decode().split()[-1]
        looked = json.loads(
            jail.run(slot, dataclasses.replace(looker, any_cpu=spec.any_cpu)).stdout
        )
        return [c for cs in placement.parse_cpu_sets(listed) or () for c in cs], looked

    with Jail(JailConfig(slots=2, uid_base=64100, state_dir=state, zygote_python=python,
                         cpu_sets=sets, boxes=boxes)) as jail:  # fmt: skip
        for slot, cpus in enumerate(sets):
            assert seen(jail, slot, lister) == (list(cpus), list(cpus))
            wide = dataclasses.replace(lister, any_cpu=True)
            assert seen(jail, slot, wide) == (allowed, allowed)
            assert seen(jail, slot, lister) == (list(cpus), list(cpus)), "the next box was wide"
            # A program may widen itself (placement, not a limit), but not the next run.
            widen = f"import os; os.sched_setaffinity(0, {allowed}); print('wide')".encode()
            assert jail.run(slot, dataclasses.replace(looker, files={"main.py": widen})).ok
            assert jail.run(
                slot,
                RunSpec(
                    argv=("/bin/sh", "-c", f"taskset -pc {allowed[0]}-{allowed[-1]} $$ >/dev/null")
                ),
            ).ok
            assert seen(jail, slot, lister) == (list(cpus), list(cpus)), "a run widened the next"
    Path(state).rmdir()


def test_a_jail_without_cpus_leaves_runs_where_the_kernel_puts_them(jail):
    out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", "grep Cpus_allowed_list: /proc/self/status")))
    assert out.stdout.decode().split()[-1] == placement.describe_cpu_sets(
        (tuple(placement.allowed_cpus()),)
    )


def test_cpus_the_server_may_not_use_refuse_to_start():
    beyond = max(placement.allowed_cpus()) + 1
    with pytest.raises(JailUnavailable, match=f"slot_cpus names CPU {beyond}, which this server"):
        Jail(JailConfig(slots=1, cpu_sets=((beyond,),), state_dir=STATE + "-c")).start()


def test_what_a_run_left_in_its_scratch_is_not_the_next_runs_memory(jail):
    """A run fills /dev/shm and ends: its box's memory is gone before the next run's limit is
    set (the zygote drops a box's mounts once it has answered, and the next run waits for it),
    so a run at 96 MiB cannot use 128 because the one before left 56 in its /dev/shm."""
    python = "/opt/sandlot/python/bin/python3"
    if not os.access(python, os.X_OK):
        pytest.skip("the sandbox runtime is not installed (make setup)")
    fill = RunSpec(argv=("/bin/sh", "-c", "head -c 58720256 /dev/zero > /dev/shm/fill"))
    hog = RunSpec(argv=(python, "-c", "x = b'1' * (128 << 20)"),
                  ro_binds=(str(Path(python).parents[1]),),
                  limits=Limits(memory=96 << 20, wall_time=30))  # fmt: skip
    for _ in range(3):
        assert jail.run(0, fill).exit_code == 0
        out = jail.run(0, hog)
        assert out.limit is Limit.MEMORY, out


def test_a_slots_page_cache_is_no_room_for_a_run(jail):
    """On cgroup v1 a slot's cgroup keeps the page cache of every file its runs read: a run must
    not get that as memory beyond its limit. With the slot holding more cache than the limit, a
    hog is stopped at the limit and says so; a small run after it reports a small peak."""
    if jail.cgroup_version != 1:
        pytest.skip("a v2 run has a cgroup of its own, with no earlier run's cache in it")
    python = "/opt/sandlot/python/bin/python3"
    if not os.access(python, os.X_OK):
        pytest.skip("the sandbox runtime is not installed (make setup)")
    slot = jail.slots[1]
    with tempfile.TemporaryDirectory(dir="/var/tmp") as cached:  # on a disk: page cache
        big = Path(cached) / "big"
        with big.open("wb") as f:
            f.write(os.urandom(1 << 20) * 384)
            f.flush()
            os.fsync(f.fileno())
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # to be charged anew
        os.chmod(cached, 0o755)
        before = slot.cgroup.read().memory_usage
        jail.run(1, RunSpec(argv=("sh", "-c", f"cat {big} > /dev/null"), ro_binds=(cached,)))
        assert slot.cgroup.read().memory_usage - before > 256 << 20, "the read was not charged"
        runtime = (str(Path(python).parents[1]),)
        hog = RunSpec(argv=(python, "-c", "x = b'1' * (320 << 20)"), ro_binds=runtime,
                      limits=Limits(memory=128 << 20, wall_time=30))  # fmt: skip
        out = jail.run(1, hog)
        assert out.limit is Limit.MEMORY or out.exit_code != 0, out
        assert 100 << 20 < out.memory_peak <= 140 << 20, out.memory_peak
        small = jail.run(1, dataclasses.replace(hog, argv=(python, "-c", "print(1)")))
        assert small.stdout == b"1\n" and small.memory_peak < 64 << 20, small.memory_peak


def test_unmount_all_detaches_nested_mounts_and_odd_names(tmp_path):
    """What a jail leaves mounted is found from the kernel's table, not from names it expects:
    nested mounts, and a name with a space and a newline (escaped in mountinfo), all go."""
    from sandlot.jail import workdir

    top = tmp_path / "state"
    odd = top / "a b\nc"
    inner = odd / "inner"
    beside = tmp_path / "state-beside"  # shares the prefix, is not below it
    for d in (odd, beside):
        d.mkdir(parents=True)
    workdir.mount_tmpfs(str(odd), "size=1m")
    inner.mkdir()
    workdir.mount_tmpfs(str(inner), "size=1m")
    workdir.mount_tmpfs(str(beside), "size=1m")
    try:
        workdir.unmount_all(str(top))
        assert not os.path.ismount(odd) and not os.path.ismount(inner)
        assert os.path.ismount(beside)
    finally:
        workdir.unmount_all(str(tmp_path))
    assert not os.path.ismount(beside)


def test_preludes_too_large_for_a_zygote_are_refused_when_configured():
    from sandlot.executor.guards import PY_PRELUDES
    from sandlot.jail.zygotes import PRELUDES_MAX

    with pytest.raises(ValueError, match=rf"warm_preludes: .* more than the {PRELUDES_MAX} a zyg"):
        JailConfig(warm_preludes=("x = 1\n" * (PRELUDES_MAX // 6 + 1),))
    assert JailConfig(warm_preludes=("x = 1\n" * 100,)).warm_preludes
    assert JailConfig(warm_preludes=PY_PRELUDES).warm_preludes  # the judge's drivers fit


def test_preludes_as_large_as_a_zygote_takes_reach_it():
    """The preludes' message is one datagram: one near the limit gets through whole."""
    from sandlot.jail.zygotes import PRELUDES_MAX

    padding = "#" + "x" * 99 + "\n"
    big = PRELUDE + padding * ((PRELUDES_MAX - 2000) // len(padding))
    seen = warm_as_cold("big preludes", {"after it": big + "fails()\n"}, warm_preludes=(big,))
    assert b"in the prelude" in seen["after it"][2]


def test_a_runs_own_bind_is_writable_and_the_next_run_does_not_see_it(jail, tmp_path):
    own = tmp_path / "own"
    own.mkdir(mode=0o777)
    own.chmod(0o777)
    (own / "given").write_text("from the host\n")
    spec = RunSpec(argv=("/bin/sh", "-c", "cat /repo/given && echo made > /repo/made"),
                   binds=((str(own), "/repo"),))  # fmt: skip
    out = jail.run(0, spec)
    assert (out.exit_code, out.stdout) == (0, b"from the host\n")
    assert (own / "made").read_text() == "made\n"
    out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", "ls /repo")))  # the template has no trace
    assert out.exit_code != 0 and b"No such file" in out.stderr


def test_a_runs_bind_cannot_cover_what_the_box_has_itself():
    from sandlot.jail.bwrap import box_path

    assert box_path("/repo") == "/repo"
    for bad in ("/", "repo", "/usr/lib", "/etc", "/tmp/x", "/sandbox", "/proc", "/a/../b", "/a//b"):
        with pytest.raises(ValueError):
            box_path(bad)


def test_a_run_joins_the_network_namespace_it_is_given(jail):
    from sandlot.repos.netns import RelayedNetwork

    with socket.socket() as target:  # a host service the namespace relays to, and only it
        target.bind(("127.0.0.1", 0))
        target.listen(4)
        with RelayedNetwork(target.getsockname(), port=3128) as net:
            probe = (
                "import socket\n"
                "for port in (3128, 8080):\n"
                "    try:\n"
                "        socket.create_connection(('127.0.0.1', port), 5).close()\n"
                "        print(port, 'ok')\n"
                "    except OSError as e: print(port, e.errno)\n"
            )
            out = jail.run(0, RunSpec(argv=("/usr/bin/python3", "-c", probe), network=net.path))
            conn, peer = target.accept()
            conn.close()
        assert out.stdout.split(b"\n")[:2] == [b"3128 ok", b"8080 111"], out
        assert peer[0] == net.source  # relayed, from the namespace's own source address
    out = jail.run(0, RunSpec(argv=("/usr/bin/python3", "-c", probe)))  # a box of its own
    assert out.stdout.startswith(b"3128 111")
