"""The per-slot spawner: a small single-threaded process that runs one box at a time.

It joins its slot's cgroups once (on v2 a run gets a cgroup of its own: cgroups.py), becomes a
child subreaper (bwrap leaves its inner init to be reaped by someone), and then serves runs sent
by the jail over a socket: write the files, have the slot's zygote start the run in a box (or
fork, drop to the slot uid and exec bwrap), drain output under caps, enforce the wall clock, kill
and sweep whatever is left, read files back, wipe the work dir, report an Outcome, and have the
zygote build the next box.

Run as `python -m sandlot.jail FD`; FD carries the frames of `wire.py`, first a Start with the
slot's config. The spawner holds nothing a box can reach: a box gets its stdio and, for
bubblewrap, the seccomp filter, and no other descriptor.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import socket
import sys
import time
import traceback

from sandlot.errors import JailError, SlotBroken
from sandlot.jail import bwrap, placement, wire, workdir
from sandlot.jail.cgroups import RunGroup, SlotCgroup, open_slot
from sandlot.jail.seccomp import filter_fd
from sandlot.jail.spec import Limit, Outcome, RunSpec
from sandlot.jail.watch import ServerGone, Waiter, Watch, kill
from sandlot.jail.wire import SlotConfig
from sandlot.jail.zygotes import Zygote, box_request, read_all, rlimits, run_request

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
# Processes a run needs beyond the program's own: per path, bwrap and its init, or the box's
# init; and in a cgroup the run shares with its slot (v1), the spawner and the zygote too.
RUN_PIDS = 2
SHUTDOWN_REAP = 2.0  # seconds the spawner waits, when it stops, for its zygote's box to go
JAIL_PIDS = RUN_PIDS + 2
SWEEP_GRACE = 0.2
SWEEP_DEADLINE = 5.0
STOP_READ = 5.0  # seconds to read a stop whose first bytes have come

_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int) -> None:
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class Stages:
    """Wall time per stage of one run, and what the zygote says its box cost in CPU, for the
    cost breakdown (bench/breakdown.py)."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.stages[name] = now - self._last
        self._last = now


class Spawner:
    def __init__(self, config: SlotConfig, chan: wire.Channel, slot: SlotCgroup) -> None:
        self.config = config
        self.chan = chan
        self.slot = slot
        self.zygote: Zygote | None = None
        self._next: RunGroup | None = None  # the group the box built ahead is in

    # -- one run -------------------------------------------------------------------------------

    def run(self, run_id: int, spec: RunSpec) -> Outcome:
        cfg = self.config
        clock = Stages()
        self._wipe()
        group, self._next = self._next or self.slot.run_group(), None
        try:
            workdir.write_files(cfg.layout.workdir, spec.files, cfg.uid, cfg.gid)
            clock.lap("files")
            outcome = self._run_box(run_id, spec, clock, group)
        finally:
            self._wipe()
        self.slot.end_run(group)  # not on a failure: the next group is made once that is cleared
        clock.lap("wipe")
        # Nothing else runs in this slot: a box may wait; but not one holding what was this
        # run's alone (its directories, its network).
        if cfg.boxes == "zygote" and not spec.binds and spec.network is None:
            self._next = self.slot.run_group()
            self._prepare_next(spec, self._next)
        clock.lap("prepare")
        outcome.stages = {**clock.stages, **{f"cpu_{k}": v for k, v in clock.cpu.items()}}
        return outcome

    def _wipe(self) -> None:
        """Empty the work dir; if a run left what cannot be walked (a tree thousands deep),
        mount it afresh; if even that fails the slot is unusable."""
        path = self.config.layout.workdir
        try:
            workdir.wipe(path)
        except (OSError, RecursionError) as exc:
            try:
                workdir.remount(path, self.config.workdir_options)
            except OSError as again:
                raise SlotBroken(
                    f"cannot empty the work dir ({exc}) nor mount it afresh ({again})"
                ) from again
            self._drop_zygote()  # a box it built ahead binds the old work dir

    def check_clean(self) -> str | None:
        """Why this slot cannot serve, if a previous spawner left something behind."""
        try:
            self._sweep(RunGroup(self.slot))
            self._wipe()
        except SlotBroken as exc:
            return str(exc)
        if not os.path.ismount(self.config.layout.workdir):
            return f"the work dir {self.config.layout.workdir} is not mounted"
        return None

    def _run_box(self, run_id: int, spec: RunSpec, clock: Stages, group: RunGroup) -> Outcome:
        cfg, limits = self.config, spec.limits
        cg = group.cgroup
        if self.zygote is not None:
            try:
                self.zygote.settle()  # what the last box held in /tmp is not this run's
            except OSError:
                self._drop_zygote()  # its end takes that box's mounts with it
        before = cg.read()
        pids = limits.pids + (JAIL_PIDS if group.shared else RUN_PIDS)
        # The limit is the run's memory on top of what is resident here, the slot's page cache
        # (v1) not counted: the kernel reclaims that cache before the run may use more, where a
        # run could otherwise use its limit plus every file earlier runs read.
        cache = cg.file_cache()
        limit = before.memory_usage - cache + limits.memory
        cg.set_limits(memory=limit, pids=pids)
        if before.memory_usage > limit:
            cache = cg.file_cache()  # what the limit left of it
        cg.reset_peak()
        baseline = cg.peak()
        own_cpu = _own_cpu() if group.shared else 0.0
        clock.lap("limits")
        pidfd, wait_status, (out_r, err_r, in_w), started = self._start_box(spec, clock, group)
        try:
            watch = Watch(
                pidfd, wait_status, spec, started, (out_r, err_r, in_w), self.chan.fileno(),
                lambda: self._heard(run_id), cg.task_count, lambda: self._kill_all(group),
                lambda: self._ask_to_stop(group),
            )  # fmt: skip
            status, outcome = watch.run()
        except BaseException:
            if self._zygote_builds(spec):  # it may still owe a status: start afresh, in step
                self._drop_zygote()
            raise
        finally:
            for fd in (out_r, err_r, pidfd):
                os.close(fd)
        outcome.wall_time = time.monotonic() - started
        clock.lap("run")
        self._sweep(group)
        clock.lap("sweep")
        after = cg.read()
        own_ns = int((_own_cpu() - own_cpu) * 1e9) if group.shared else 0
        outcome.cpu_time = max(0, after.cpu_ns - before.cpu_ns - own_ns) / 1e9
        # A run that grows evicts the slot's cache as it goes, which the peak of the whole
        # cgroup does not show: what it evicted counts as the run's (a run that reads files
        # adds cache of its own, so this is a lower bound).
        evicted = max(0, cache - cg.file_cache()) if cache else 0
        outcome.memory_peak = max(0, cg.peak() - baseline) + evicted
        _decode_status(status, outcome)
        if outcome.limit is None:
            if after.oom_kills > before.oom_kills:
                outcome.limit = Limit.MEMORY
            elif outcome.signal == signal.SIGXCPU:
                outcome.limit = Limit.CPU_TIME
        clock.lap("account")
        if spec.fetch:
            outcome.files = workdir.read_back(cfg.layout.workdir, spec.fetch, cfg.fetch_budget)
            clock.lap("fetch")
        return outcome

    def _heard(self, run_id: int) -> None:
        """The server spoke while run `run_id` was going on: it may only say stop to that run
        (a frame of a few bytes, sent whole); anything else, or its hanging up, is ServerGone."""
        try:
            message = self.chan.recv(timeout=STOP_READ)
        except (EOFError, OSError, wire.ProtocolError):
            raise ServerGone from None
        if not isinstance(message, wire.Stop) or message.id != run_id:
            raise ServerGone

    def _start_box(
        self, spec: RunSpec, clock: Stages, group: RunGroup
    ) -> tuple[int, Waiter, tuple[int, int, int], float]:
        """Start the run's box: its pidfd, how to wait for it, our ends of its stdout, stderr
        and stdin, and when its clock started; JailError, with nothing left, if the box could
        not be built."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe()
        setup_r, setup_w = os.pipe()  # EOF: the box is built; bytes: why it could not be
        ends = (in_r, out_w, err_w, setup_w)
        try:
            start = self._start_zygote if self._zygote_builds(spec) else self._start_bwrap
            pidfd, wait_status, cost = start(spec, ends, group)
        finally:
            for fd in ends:
                os.close(fd)
        clock.lap("start")
        clock.cpu.update(cost)
        started = time.monotonic()
        failure = read_all(setup_r)
        os.close(setup_r)
        clock.lap("setup")
        if failure:
            kill(pidfd)
            wait_status()
            for fd in (out_r, err_r, in_w, pidfd):
                os.close(fd)
            self._sweep(group)
            raise JailError(f"cannot build the box: {failure.decode(errors='replace')}")
        return pidfd, wait_status, (out_r, err_r, in_w), started

    def _start_bwrap(
        self, spec: RunSpec, ends: tuple[int, ...], group: RunGroup
    ) -> tuple[int, Waiter, dict]:
        """Fork and exec bwrap; returns a pidfd of the box's top process and how to wait for it."""
        sc_fd = filter_fd(self.config.seccomp)
        argv = bwrap.command(self.config.layout, spec, sc_fd)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child execs or exits
            self._child(argv, ends, sc_fd, spec, group.enter)
        os.close(sc_fd)
        return os.pidfd_open(pid), lambda: os.waitpid(pid, 0)[1], {}

    def _cpus(self, spec: RunSpec) -> tuple[int, ...]:
        """The CPUs the run's program is to use where they are not its slot's, if any."""
        return self.config.all_cpus if spec.any_cpu else ()

    def _zygote_builds(self, spec: RunSpec) -> bool:
        """bubblewrap can join no network namespace: such runs, and runs with binds of their
        own, are always built by the zygote."""
        return (
            self.config.boxes == "zygote"
            or bool(spec.binds)
            or spec.network is not None
            or (spec.warm and spec.argv[0] == self.config.zygote_python)
        )

    def _zygote(self) -> Zygote:
        if self.zygote is None or not self.zygote.alive():
            self._drop_zygote()
            cfg = self.config
            self.zygote = Zygote(cfg.zygote_python, cfg.box_init, cfg.seccomp,
                                 preludes=cfg.warm_preludes)  # fmt: skip
        return self.zygote

    def _box(self, spec: RunSpec, group: RunGroup) -> dict[str, object]:
        # One box at a time in a slot: a box may be built in its predecessor's network namespace.
        cfg = self.config
        return box_request(cfg.layout, cfg.uid, spec, reuse_net=cfg.reuse_netns, cgroup=group.enter)

    def _start_zygote(
        self, spec: RunSpec, ends: tuple[int, ...], group: RunGroup
    ) -> tuple[int, Waiter, dict]:
        """Have the zygote start the run in a box; the pidfd comes from the zygote, which reaps."""
        cfg = self.config
        run = run_request(spec, spec.warm and spec.argv[0] == cfg.zygote_python, self._cpus(spec))
        zygote = self._zygote()
        try:
            pidfd, cost = zygote.start({"box": self._box(spec, group), "run": run}, ends)
            return pidfd, zygote.status, cost
        except (OSError, ValueError, KeyError) as exc:
            self._drop_zygote()
            raise JailError(f"the zygote failed: {exc}") from exc

    def _prepare_next(self, spec: RunSpec, group: RunGroup) -> None:
        """The next run most likely wants the same box (a judge's test cases, a client's
        repeated requests): build it now, off the next run's clock."""
        try:
            self._zygote().prepare(self._box(spec, group))
        except OSError:
            self._drop_zygote()  # the next run starts a fresh zygote

    def shutdown(self) -> None:
        """Stop the zygote and reap what it leaves: the box it built ahead dies with it and
        comes to us, the subreaper. Nothing of the slot is left a zombie for whoever reaps
        orphans on this machine (a container's init may never do it)."""
        self._drop_zygote()
        deadline = time.monotonic() + SHUTDOWN_REAP
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                time.sleep(0.005)

    def _drop_zygote(self) -> None:
        if self.zygote is not None:
            self.zygote.stop()
            self.zygote = None

    def _child(
        self, argv: list[str], ends: tuple[int, ...], sc_fd: int, spec: RunSpec, enter: str
    ) -> None:  # pragma: no cover - runs in the forked child only
        in_r, out_w, err_w, setup_w = ends
        try:
            if enter:  # the run's own cgroup, before bwrap forks anything
                with open(enter, "w") as f:
                    f.write("0")
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            # bwrap passes on whatever it inherits: it must inherit only stdio and the filter
            # (which it reads and closes); setup_w is close-on-exec.
            _close_all_but({0, 1, 2, sc_fd, setup_w})
            os.set_inheritable(sc_fd, True)
            with open("/proc/self/oom_score_adj", "w") as f:
                # Make the box, never a spawner that shares its memory cgroup, the OOM victim.
                f.write("1000")
            for name, (soft, hard) in rlimits(spec.limits).items():
                resource.setrlimit(getattr(resource, name), (soft, hard))
            if cpus := self._cpus(spec):
                os.sched_setaffinity(0, cpus)
            os.setgroups([])
            os.setresgid(self.config.gid, self.config.gid, self.config.gid)
            os.setresuid(self.config.uid, self.config.uid, self.config.uid)
            # A uid change clears the parent-death signal; arm it again so that bwrap (and with
            # --die-with-parent, the whole box) dies if the spawner does.
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() == 1:
                os._exit(127)
            # Ignored by Python (SIGPIPE, SIGXFSZ), or by whoever started the server (nohup, a
            # shell's background job): an exec keeps them ignored, a program starts with none.
            for sig in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:
                if signal.getsignal(sig) == signal.SIG_IGN:
                    signal.signal(sig, signal.SIG_DFL)
            os.execve(argv[0], argv, {})  # setup_w is close-on-exec: EOF tells the spawner
        except BaseException as exc:
            try:
                os.write(setup_w, f"{type(exc).__name__}: {exc}".encode())
            finally:
                os._exit(127)

    def _own_pids(self, group: RunGroup) -> set[int]:
        if not group.shared:
            return set()
        return {os.getpid()} | ({self.zygote.pid} if self.zygote else set())

    def _kill_all(self, group: RunGroup) -> None:
        """SIGKILL every process of the run's group but the spawner and its zygote."""
        group.cgroup.kill(self._own_pids(group))

    def _ask_to_stop(self, group: RunGroup) -> None:
        """SIGTERM what runs in the box (its processes, but its init): the time is up."""
        keep = self._own_pids(group)
        for pid in group.cgroup.pids():
            if pid in keep:
                continue
            try:
                pidfd = os.pidfd_open(pid)
            except OSError:
                continue  # ended since
            try:
                if _a_boxs_program(pid):  # checked after the pidfd pins the process
                    signal.pidfd_send_signal(pidfd, signal.SIGTERM)
            except OSError:
                pass
            finally:
                os.close(pidfd)

    def _sweep(self, group: RunGroup) -> None:
        """Reap bwrap's orphans and make sure nothing of the run is left in its group.

        Killing bwrap takes its pid namespace down with everything in it; the kill loop here is
        the backstop for anything that lingers past a short grace.
        """
        keep = self._own_pids(group)
        start = time.monotonic()
        while True:
            _reap()
            left = [p for p in group.cgroup.pids() if p not in keep]
            if not left and group.cgroup.task_count() <= len(keep):
                return  # only the spawner and its zygotes: every run process ended and was reaped
            waited = time.monotonic() - start
            if waited > SWEEP_DEADLINE:
                raise SlotBroken(f"processes {left} survived the run")
            if waited > SWEEP_GRACE:
                group.cgroup.kill(keep)
            time.sleep(0.001)

    # -- the loop ------------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer runs until the server goes away or the slot breaks."""
        while True:
            try:
                request = self.chan.recv()
            except (EOFError, OSError, wire.ProtocolError):
                return
            if isinstance(request, wire.Stop):
                continue  # the run it names had ended before the stop came
            if not isinstance(request, wire.Run):
                return
            reply: wire.Done | wire.Failed
            try:
                reply = wire.Done(request.id, self.run(request.id, request.spec))
            except ServerGone:
                return
            except SlotBroken as exc:
                reply = wire.Failed(request.id, f"slot {self.config.index}: {exc}", fatal=True)
            except JailError as exc:
                reply = wire.Failed(request.id, str(exc), fatal=False)
            except OSError as exc:
                reply = wire.Failed(request.id, f"slot {self.config.index}: {exc}", fatal=False)
            except Exception as exc:  # a bug: say so, and let a fresh spawner take over
                traceback.print_exc()
                reply = wire.Failed(
                    request.id, f"slot {self.config.index}: spawner failed: {exc!r}", fatal=True
                )
            if isinstance(reply, wire.Failed):
                print(f"sandlot slot {self.config.index}: {reply.message}", file=sys.stderr)
            self.chan.send(reply)
            if isinstance(reply, wire.Failed) and reply.fatal:
                return


def _close_all_but(keep: set[int]) -> None:
    low = 0
    for fd in sorted(keep):
        if fd > low:  # an empty range is not a no-op: closerange(0, 0) closes every fd
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _keep_to(cpus: tuple[int, ...]) -> str | None:
    """Keep this spawner, and so its zygote and every box (they inherit it), to `cpus`."""
    if not cpus:
        return None
    try:
        os.sched_setaffinity(0, cpus)
    except OSError as exc:
        return f"cannot keep the slot to CPUs {placement.describe_cpu_sets((cpus,))}: {exc}"
    return None


def _own_cpu() -> float:
    """The spawner's own CPU seconds, which a cgroup it shares with a run also counts."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _a_boxs_program(pid: int) -> bool:
    """In a box's pid namespace and not its init: a program (never bwrap's outer process, nor
    the spawner's or a zygote's, which live in ours)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("NSpid:"):
                ids = line.split()[1:]
                return len(ids) > 1 and ids[-1] != "1"
    return False


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _decode_status(status: int, outcome: Outcome) -> None:
    """bwrap reports a program killed by signal N as exit status 128+N, as a shell does."""
    if os.WIFSIGNALED(status):  # bwrap itself was killed: by us, on a limit
        outcome.signal = os.WTERMSIG(status)
        return
    code = os.WEXITSTATUS(status)
    if code > 128 and code - 128 < signal.NSIG:
        outcome.signal = code - 128
    else:
        outcome.exit_code = code


def main() -> None:
    fd = int(sys.argv[1])
    os.set_inheritable(fd, False)  # nothing this process starts may inherit the channel
    chan = wire.Channel(socket.socket(fileno=fd), wire.ToSpawner)
    start = chan.recv()
    if not isinstance(start, wire.Start):
        return
    config = start.config
    _libc.prctl(PR_SET_NAME, b"sandlot-spawner", 0, 0, 0)  # for ps and top
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    cgroup = open_slot(config.cgroup.version, config.cgroup.dirs)
    cgroup.join(os.getpid())
    spawner = Spawner(config, chan, cgroup)
    problem = spawner.check_clean() or _keep_to(config.cpus)
    chan.send(wire.Ready(os.getpid(), problem))
    if problem is None:
        spawner.serve()
    spawner.shutdown()
    sys.stderr.flush()
    os._exit(0)  # nothing is left to finalise: the jail waits for this exit when it closes
