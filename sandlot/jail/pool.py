"""The jail: N slots, each a spawner process with its own uid, cgroups and work dir.

`Jail.start()` sets every layer up or raises JailUnavailable saying which one failed; there is
no degraded mode. `Jail.run(slot, spec)` runs one box in a slot (one run per slot at a time; the
executor decides who gets a slot); `Jail.run_async` does the same on an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from sandlot.errors import JailError, JailUnavailable
from sandlot.jail import box_init, bwrap, placement, wire, workdir
from sandlot.jail.cgroups import CgroupTree, SlotCgroup, remove_stale
from sandlot.jail.privileges import check_capabilities
from sandlot.jail.seccomp import compile_filter
from sandlot.jail.spec import Limits, Outcome, RunSpec
from sandlot.jail.wire import CgroupPlace, SlotConfig
from sandlot.jail.zygotes import preludes_message

log = logging.getLogger("sandlot.jail")

BOX_BUILDERS = ("zygote", "bwrap")
# How long past a run's own wall limit the jail waits for its spawner before declaring it lost.
SPAWNER_MARGIN = 30.0
ETC_TMPFS = "size=64m,mode=0755"  # a box's /etc (a copy of a few MiB of the host's)
SPAWNER_START = 30.0
PROBES_AT_ONCE = 16
# Threads in which an event loop's run waits for a slot in use, or for its spawner to start.
_SLOT_WAITS = ThreadPoolExecutor(thread_name_prefix="sandlot-slot-wait")
SPAWNER_STOP = 3.0  # seconds a spawner has to stop on its own when the jail closes


@dataclass(frozen=True, slots=True)
class JailConfig:
    slots: int = os.cpu_count() or 1
    uid_base: int = 61000
    state_dir: str = "/run/sandlot"
    ro_binds: tuple[str, ...] = ()
    etc_entries: tuple[str, ...] = ()  # host /etc paths boxes need beyond bwrap.HOST_ETC
    disk: int = 256 << 20  # work dir tmpfs per slot
    tmp_size: int = 64 << 20
    shm_size: int = 64 << 20
    max_files: int = 16384  # inodes of the work dir
    fetch_budget: int = 64 << 20
    bwrap: str = "/usr/bin/bwrap"
    boxes: str = "zygote"  # who builds boxes: "zygote" (one ahead of each run) or "bwrap"
    zygote_python: str = sys.executable  # the zygote's interpreter: warm Python scripts run on it
    # A slot's zygote-built box is built in the network namespace of the box before it when
    # that box's run left it exactly as it was made (no packet, socket, flow label or counter
    # of its own: zygote.py's Networks), instead of making one: ~1-2 ms of CPU less per run.
    reuse_netns: bool = True
    # The CPUs each slot's runs are kept to (slot k: cpu_sets[k % len]), () for wherever the
    # kernel puts them: see placement.py.
    cpu_sets: placement.CpuSets = ()
    # Texts many warm Python scripts begin with (the judge's driver): each slot's zygote
    # compiles them once, instead of every script that begins with one compiling it again.
    warm_preludes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        preludes_message(self.warm_preludes)  # too large: said now, not at a slot's first run


class _Slot:
    """The server's end of one slot: its spawner process and the channel to it.

    One run at a time. A reply must answer the request just sent (by id); anything else, and
    any failure to send or receive, drops the spawner, so the next run starts with a fresh one
    and a channel in step.
    """

    def __init__(self, config: SlotConfig, cgroup: SlotCgroup) -> None:
        self.config = config
        self.cgroup = cgroup  # the spawner's own handle is its own; this one is for readings
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.chan: wire.Channel | None = None
        self.problem: str | None = None  # why the last spawner could not start, if it could not
        self._last_id = 0

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the spawner process; `wait_ready` waits until it says it can serve (the jail
        launches every slot's spawner before it waits for any)."""
        ours, theirs = socket.socketpair()
        pkg_parent = str(Path(__file__).resolve().parents[2])
        # -P: this package, from pkg_parent, and never one in the server's working directory
        # (which `-m` would put first: a root process must not import what is found there).
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "sandlot.jail", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            env={"PYTHONPATH": pkg_parent, "PATH": "/usr/bin:/bin"},
        )
        theirs.close()
        self.chan = wire.Channel(ours, wire.ToServer)

    def wait_ready(self) -> None:
        assert self.chan is not None
        index = self.config.index
        try:
            self.chan.send(wire.Start(self.config))
            ready = self.chan.recv(timeout=SPAWNER_START)
        except EOFError:
            self._fail_start(f"slot {index}: spawner exited at start (see the server log)")
        except (OSError, wire.ProtocolError) as exc:  # TimeoutError is an OSError
            self._fail_start(f"slot {index}: spawner did not start ({exc})")
        if not isinstance(ready, wire.Ready):
            self._fail_start(f"slot {index}: spawner said {type(ready).__name__} at start")
        if ready.problem is not None:
            self._fail_start(f"slot {index}: {ready.problem}")
        self.problem = None

    def _fail_start(self, problem: str) -> NoReturn:
        self.stop()
        self.problem = problem
        raise JailUnavailable(problem)

    def run(self, spec: RunSpec) -> Outcome:
        request = self._take(spec, held=False)
        try:
            try:
                assert self.chan is not None
                self.chan.send(request)
                reply = self.chan.recv(timeout=spec.limits.wall_time + SPAWNER_MARGIN)
            except BaseException as exc:
                self._lost(exc)
            return self._answer(request, reply)
        finally:
            self.lock.release()

    async def run_async(self, spec: RunSpec) -> Outcome:
        """`run` on the running event loop: no thread waits on the spawner's socket (a thread
        hand-off each way costs a run two wake-ups). Starting a spawner, or waiting on a slot
        already in use, still happens in a thread.

        Cancelled while its box runs, the run is stopped: the spawner kills the box and answers
        as usual, and this returns the slot in step, a spawner still serving, before the
        cancellation goes on. Only a cancellation mid-message drops the spawner."""
        request = await self._take_async(spec)
        sent = False
        try:
            try:
                assert self.chan is not None
                await self.chan.send_async(request)
                sent = True
                reply = await self.chan.recv_async(spec.limits.wall_time + SPAWNER_MARGIN)
            except asyncio.CancelledError as exc:
                if not sent or self.chan is None or self.chan.mid_frame:
                    self._lost(exc)
                await self._stop(request)
                raise
            except BaseException as exc:
                self._lost(exc)
            return self._answer(request, reply)
        finally:
            self.lock.release()

    async def _stop(self, request: wire.Run) -> None:
        """Have `request`'s box killed, and take its answer: the channel stays in step."""
        assert self.chan is not None
        try:
            await self.chan.send_async(wire.Stop(request.id))
            reply = await self.chan.recv_async(SPAWNER_MARGIN)
        except BaseException as exc:
            self._lost(exc)
        self._answer(request, reply)

    def _take(self, spec: RunSpec, held: bool) -> wire.Run:
        """Take the slot (`held`: it is taken already) and make the request for `spec`; the
        slot stays taken only if this returns."""
        if not held:
            self.lock.acquire()
        try:
            return self._ready_for(spec)
        except BaseException:
            self.lock.release()
            raise

    async def _take_async(self, spec: RunSpec) -> wire.Run:
        """`_take` for the event loop: at once when the slot is free and its spawner serving,
        else in a thread. A caller cancelled while that thread waits gives the slot back once
        the thread has taken it: a slot is never left taken by a run that will not come."""
        held = self.lock.acquire(blocking=False)
        if held and self._serving():
            return self._take(spec, held=True)
        taking = _SLOT_WAITS.submit(self._take, spec, held)
        try:
            # Shielded: the thread always runs to the end, so a slot it took is ours to give back.
            return await asyncio.shield(asyncio.wrap_future(taking))
        except asyncio.CancelledError:
            taking.add_done_callback(self._give_back)
            raise

    def _give_back(self, taken: Future[wire.Run]) -> None:
        if taken.exception() is None:  # it took the slot (else it gave it back itself)
            self.lock.release()

    def _serving(self) -> bool:
        return self.chan is not None and self.proc is not None and self.proc.poll() is None

    def _ready_for(self, spec: RunSpec) -> wire.Run:
        """The request for `spec`, with a spawner to send it to (a fresh one if there is none)."""
        if self.proc is not None and self.proc.poll() is not None:
            # It died between runs: nothing was lost, a fresh one starts; the log tells.
            log.warning(
                "slot %d: spawner (pid %d) exited with %s between runs; starting a fresh one",
                self.config.index, self.proc.pid, self.proc.returncode,
            )  # fmt: skip
            self.stop()
        if self.chan is None:
            self.start()
        self._last_id += 1
        return wire.Run(self._last_id, spec)

    def _lost(self, exc: BaseException) -> NoReturn:
        self.stop()  # whatever happened, the channel cannot be trusted to be in step
        if isinstance(exc, EOFError | OSError | wire.ProtocolError):
            raise JailError(
                f"slot {self.config.index}: spawner lost ({exc or type(exc).__name__})"
            ) from exc
        raise exc

    def _answer(self, request: wire.Run, reply: object) -> Outcome:
        if not isinstance(reply, wire.Done | wire.Failed) or reply.id != request.id:
            self._lost(wire.ProtocolError(f"a reply out of step: {type(reply).__name__}"))
        if isinstance(reply, wire.Failed):
            if reply.fatal:
                self.stop()
            raise JailError(reply.message)
        return reply.outcome

    def hang_up(self) -> None:
        """Close the channel: the spawner then stops its zygote, reaps what that leaves and
        exits."""
        if self.chan is not None:
            self.chan.close()
            self.chan = None

    def stop(self, wait: float = 0.0) -> None:
        """Stop the spawner: hang up, give it `wait` seconds to exit on its own, kill it."""
        self.hang_up()
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait)
            self.proc.kill()
            self.proc.wait()
            self.proc = None


class Jail:
    def __init__(self, config: JailConfig | None = None) -> None:
        self.config = config or JailConfig()
        self.instance = f"{os.getpid()}-{secrets.token_hex(3)}"
        self.slots: list[_Slot] = []
        self.cgroups: CgroupTree | None = None
        self.cgroup_version = 0
        self.cgroup_info: dict[str, object] = {}  # what the cgroup layer got, for /health
        self.state = Path(self.config.state_dir) / self.instance
        self.box_init = ""  # the path of the boxes' init, once built

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> Jail:
        try:
            self._start()
        except JailUnavailable:
            self.close()
            raise
        except OSError as exc:
            self.close()
            raise JailUnavailable(f"cannot set up the jail: {exc}") from exc
        return self

    def _start(self) -> None:
        cfg = self.config
        if os.geteuid() != 0:
            raise JailUnavailable(
                "the jail must be started as root (it drops every run to a per-slot uid)"
            )
        check_capabilities()
        if cfg.boxes not in BOX_BUILDERS:
            raise JailUnavailable(f"boxes must be one of {', '.join(BOX_BUILDERS)}: {cfg.boxes!r}")
        if cfg.boxes == "bwrap":
            check_bwrap(cfg.bwrap)
        allowed = tuple(placement.allowed_cpus())
        problem = placement.outside(cfg.cpu_sets, allowed)
        if problem is not None:
            raise JailUnavailable(problem)
        clean_stale(cfg.state_dir)
        bpf = compile_filter()
        self.box_init = box_init.build_box_init()
        self.cgroups = CgroupTree(self.instance)
        self.cgroup_version = self.cgroups.version
        Path(cfg.state_dir).mkdir(mode=0o711, parents=True, exist_ok=True)
        os.chmod(cfg.state_dir, 0o711)
        self.state.mkdir(mode=0o711)
        etc = self.state / "etc"
        uids = [cfg.uid_base + i for i in range(cfg.slots)]
        self.make_etc(etc, uids)
        for index, uid in enumerate(uids):
            work = self.state / f"slot-{index}"
            work.mkdir(mode=0o700)
            options = f"size={cfg.disk},nr_inodes={cfg.max_files},mode=0700,uid={uid},gid={uid}"
            try:
                workdir.mount_tmpfs(str(work), options)
            except OSError as exc:
                raise JailUnavailable(f"cannot mount the work dir of slot {index}: {exc}") from exc
            root = self.state / f"root-{index}"
            root.mkdir(mode=0o700)
            layout = bwrap.BoxLayout(
                bwrap=cfg.bwrap,
                workdir=str(work),
                root_dir=str(root),
                etc_dir=str(etc),
                ro_binds=cfg.ro_binds,
                tmp_size=cfg.tmp_size,
                shm_size=cfg.shm_size,
            )
            cgroup = self.cgroups.create(index)
            slot = _Slot(
                SlotConfig(
                    index=index,
                    uid=uid,
                    gid=uid,
                    layout=layout,
                    cgroup=CgroupPlace(cgroup.version, cgroup.dirs_by_key()),
                    seccomp=bpf,
                    fetch_budget=cfg.fetch_budget,
                    workdir_options=options,
                    boxes=cfg.boxes,
                    zygote_python=cfg.zygote_python,
                    box_init=self.box_init,
                    reuse_netns=cfg.reuse_netns,
                    warm_preludes=cfg.warm_preludes,
                    cpus=cfg.cpu_sets[index % len(cfg.cpu_sets)] if cfg.cpu_sets else (),
                    all_cpus=allowed if cfg.cpu_sets else (),
                ),
                cgroup,
            )
            self.slots.append(slot)
            slot.launch()
        # The spawners start, and then prove their slots, side by side: a server with N slots
        # is ready in about the time of one.
        for slot in self.slots:
            slot.wait_ready()
        self.cgroup_info = self.cgroups.info()
        with ThreadPoolExecutor(min(len(self.slots), PROBES_AT_ONCE)) as probes:
            for problem in probes.map(self._probe, self.slots):
                if problem is not None:
                    raise JailUnavailable(f"the probe run failed: {problem}")

    def _probe(self, slot: _Slot) -> str | None:
        """One real run in a slot proves every layer works before anything is accepted; what
        failed, if it did not."""
        probe = RunSpec(argv=("/bin/sh", "-c", "echo ok"), limits=Limits(wall_time=20))
        try:
            out = slot.run(probe)
        except JailError as exc:
            return str(exc)
        if out.stdout != b"ok\n" or out.exit_code != 0:
            said = out.stderr.decode(errors="replace").strip() or f"exit {out.exit_code}"
            return f"{self.config.boxes} said {said}"
        return None

    def make_etc(self, path: Path, uids: list[int]) -> None:
        """A box's /etc at `path`, on a tmpfs of its own: the state dir may be on a disk (not
        every /run is a tmpfs), where its thousand small files would cost a second per start."""
        path.mkdir(mode=0o755)
        try:
            workdir.mount_tmpfs(str(path), ETC_TMPFS)
        except OSError as exc:
            raise JailUnavailable(f"cannot mount the boxes' /etc: {exc}") from exc
        bwrap.make_etc(path, uids, self.config.etc_entries)

    def close(self) -> None:
        for slot in self.slots:
            slot.hang_up()  # all at once: every spawner stops its own
        for slot in self.slots:
            slot.stop(wait=SPAWNER_STOP)
        self.slots = []
        # Every mount under the state dir, the live boxes' too: a layer above that did not get
        # to close its own (a forced stop) leaves nothing mounted.
        workdir.unmount_all(str(self.state))
        if self.state.exists():
            shutil.rmtree(self.state, ignore_errors=True)
        if self.cgroups is not None:
            self.cgroups.remove()
            self.cgroups = None

    def __enter__(self) -> Jail:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def problem(self) -> str | None:
        """Why a slot can serve no runs, if one cannot (its spawner failed to start afresh)."""
        return next((slot.problem for slot in self.slots if slot.problem), None)

    # -- runs ----------------------------------------------------------------------------------

    def run(self, slot: int, spec: RunSpec) -> Outcome:
        return self._slot(slot).run(spec)

    async def run_async(self, slot: int, spec: RunSpec) -> Outcome:
        """`run` for a caller on an event loop (the server)."""
        return await self._slot(slot).run_async(spec)

    def _slot(self, slot: int) -> _Slot:
        if not self.slots:
            raise JailUnavailable("the jail is not started")
        return self.slots[slot]


def check_bwrap(path: str) -> None:
    if not os.access(path, os.X_OK):
        raise JailUnavailable(
            f"bubblewrap not found at {path}: install it (apt-get install bubblewrap)"
        )
    max_userns = Path("/proc/sys/user/max_user_namespaces")
    if max_userns.exists() and max_userns.read_text().strip() == "0":
        raise JailUnavailable(
            "unprivileged user namespaces are disabled (user.max_user_namespaces=0)"
        )


def clean_stale(state_dir: str) -> None:
    """Unmount and remove what a jail of a dead server left behind (it was killed hard)."""
    root = Path(state_dir)
    if root.is_dir():
        for inst in root.iterdir():
            pid = inst.name.split("-", 1)[0]
            if pid.isdigit() and os.path.exists(f"/proc/{pid}"):
                continue
            workdir.unmount_all(str(inst))
            shutil.rmtree(inst, ignore_errors=True)
    remove_stale()
