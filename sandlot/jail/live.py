"""Live boxes: boxes that outlive a request (sessions), each with a uid, cgroup and work dir of
its own, none of them a slot's.

A live box is built exactly like a run's box (the same zygote, mount plan, namespaces, uid drop,
capabilities, seccomp), by a zygote of its own that was placed in the box's cgroup before it was
sent anything, so that the box and everything it starts are charged there. Its one program gets
pipes for its stdio, whose other ends the caller holds for as long as the box lives.

What a box holds alone, and what makes it gone when it is closed:
- a uid from a range apart from the slots' (no two live boxes share one; a uid is handed out
  again only once its box's cgroup is empty and removed);
- a cgroup (memory with no swap, pids, CPU accounting) under the jail's;
- its work dir: a size-capped tmpfs, unmounted when it closes; or, with layers (layers.py), a
  writable layer of its own over frozen layers it may share with other boxes (read-only);
- its zygote, whose death (or the server's) kills the box's init, and with it the box's pid
  namespace and every process in it.

With layers, a box's work dir can change under it while it runs: `seal` freezes what the box
wrote and moves the box onto a new writable layer above it, `rebase` moves a box onto a new
writable layer over given frozen layers (what it wrote is dropped). The box's zygote attaches
the new work dir in the box's mount namespace; a process whose working directory (or a
descriptor) is in the old one keeps it, read-only once sealed, until it changes directory.

Live boxes are opened from one long-lived thread of their own: a zygote's parent-death signal
fires when the thread that started it ends, so no worker thread may start one.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import JailError, JailUnavailable
from sandlot.jail import workdir
from sandlot.jail.bwrap import BOX_WORKDIR, BoxLayout
from sandlot.jail.cgroups import Reading, SlotCgroup
from sandlot.jail.layers import Frozen, Layers, Writable, clone_tree, unstack
from sandlot.jail.pool import Jail
from sandlot.jail.seccomp import compile_filter
from sandlot.jail.spec import RunSpec
from sandlot.jail.zygotes import Zygote, box_request, read_all, run_request

# The zygote and the box's init, beyond what the program may start.
LIVE_JAIL_PIDS = 2
GONE_DEADLINE = 5.0  # seconds a killed box's processes may take to leave its cgroup
BACKGROUND_NICE = 19  # a box started ahead (a pool's): the CPU for boxes in use first


@dataclass(frozen=True, slots=True)
class LiveConfig:
    uid_base: int = 62000
    count: int = 64  # uids in the range: live boxes at most at once
    disk: int = 256 << 20  # work dir tmpfs of each box
    max_files: int = 16384  # its inodes
    python: str = ""  # the zygotes' interpreter; warm specs for it run in the zygote itself
    layers: bool = False  # work dirs in layers (overlayfs), which boxes can seal and rebase
    layer_owner: int = 0  # the uid layers store files as (no box's)


@dataclass(slots=True)
class Pipes:
    """The server's ends of a live box's stdio. They belong to whoever opened the box."""

    stdin: int
    stdout: int
    stderr: int


class LiveBox:
    """One live box. `close()` kills it and removes everything it had; it is idempotent."""

    def __init__(
        self, boxes: LiveBoxes, uid: int, cgroup: SlotCgroup, work: Path, pids: int
    ) -> None:
        self._boxes = boxes
        self.uid = uid
        self.cgroup = cgroup
        self.workdir = str(work)
        self._pids = pids
        self._zygote: Zygote | None = None
        self._pidfd = -1
        self._lock = threading.Lock()
        # Held while the work dir changes (and by file access and close, which use it): a
        # thread of its own, so that `alive()` never sees a restack as the box closing.
        self._restack = threading.Lock()
        self.upper: Writable | None = None  # with layers: what the box writes
        self.lowers: tuple[Frozen, ...] = ()  # and what it stacks it on, the top first
        self.closed = False

    # -- state -------------------------------------------------------------------------------

    def alive(self) -> bool:
        """Whether the box's init still runs (its pidfd turns readable when it has ended).
        Not while another thread holds the lock: that is `close()` or `kill()` at work, which
        may close the pidfd meanwhile (and this is asked from the event loop: never wait)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self.closed or self._pidfd < 0:
                return False
            return not select.select([self._pidfd], [], [], 0)[0]
        finally:
            self._lock.release()

    def reading(self) -> Reading:
        """Memory in use, OOM kills and CPU time so far, of everything in the box."""
        return self.cgroup.read()

    def foreground(self) -> None:
        """Every process and thread of the box (and its zygote) at the CPU priority every box
        runs at, whatever it was started at (`LiveBoxes.submit`'s `background`). Also before
        a box is killed: a process at the lowest priority on a busy host would take seconds
        to be scheduled and run its exit."""
        pids: list[int] = []
        with contextlib.suppress(OSError):  # its cgroup is gone: so is everything in it
            pids = self.cgroup.pids()
        for pid in pids:
            with contextlib.suppress(OSError):  # a thread or process that ended meanwhile
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with contextlib.suppress(OSError):
                        os.setpriority(os.PRIO_PROCESS, int(tid), 0)

    def set_memory(self, memory: int) -> None:
        """Change the memory limit (a pooled box is given its session's limit when taken)."""
        self.cgroup.set_limits(memory=memory, pids=self._pids)

    # -- files (the box may change its work dir at any moment: see workdir.py) --------------

    def put_file(self, path: str, data: bytes) -> None:
        with self._restack:
            workdir.put_file(self.workdir, path, data, self.uid, self.uid)

    def get_file(self, path: str, cap: int) -> bytes:
        with self._restack:
            return workdir.get_file(self.workdir, path, cap)

    def read_back(self, names: tuple[str, ...], budget: int) -> dict[str, bytes]:
        with self._restack:
            return workdir.read_back(self.workdir, names, budget)

    # -- layers (with LiveConfig.layers) -----------------------------------------------------

    def seal(self) -> Frozen:
        """Freeze what the box wrote (its writable layer, read-only for good from now on) and
        move the box onto a new writable layer over it: the frozen layer, to stack under other
        boxes. LayerBusy (nothing changed) if a file in the work dir is open for writing."""
        with self._restack:
            upper = self._layered()
            frozen = upper.seal()
            try:
                self._move((frozen, *self.lowers))
            except BaseException:
                upper.unseal()
                raise
            return frozen

    def rebase(self, lowers: tuple[Frozen, ...]) -> None:
        """Move the box onto a new writable layer over `lowers` (the top first); what it wrote
        so far is dropped."""
        with self._restack:
            old = self._layered()
            self._move(lowers)
            old.discard()

    def _layered(self) -> Writable:
        if self.upper is None or self.closed:
            raise JailError("this box has no layers" if not self.closed else "the box is closed")
        return self.upper

    def _move(self, lowers: tuple[Frozen, ...]) -> None:
        """A new writable layer over `lowers`, attached as the box's work dir; the old work dir
        detached on the host (the caller decides what becomes of its writable layer)."""
        layers, zygote = self._boxes.layers, self._zygote
        assert layers is not None
        if zygote is None:
            raise JailError("the box is not running")
        upper = layers.writable()
        try:
            merged = layers.stack(lowers, upper, self.uid)
            try:
                tree = clone_tree(merged)
                try:
                    zygote.attach(BOX_WORKDIR, tree)
                finally:
                    os.close(tree)
            except BaseException:
                unstack(merged)
                raise
        except OSError as exc:
            upper.discard()
            raise JailError(f"cannot move the box onto new layers: {exc}") from exc
        except BaseException:
            upper.discard()
            raise
        unstack(self.workdir)
        self.workdir, self.upper, self.lowers = merged, upper, lowers

    # -- ending ------------------------------------------------------------------------------

    def kill(self) -> None:
        """SIGKILL the box's init: its pid namespace, and every process in it, end with it.
        The work dir stays readable until `close()`."""
        with self._lock:
            if self._pidfd >= 0:
                self.foreground()
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def close(self) -> None:
        with self._restack, self._lock:
            if self.closed:
                return
            self.closed = True
            self.foreground()
            if self._pidfd >= 0:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                select.select([self._pidfd], [], [], GONE_DEADLINE)
                os.close(self._pidfd)
                self._pidfd = -1
            if self._zygote is not None:
                # The zygote reaps the init and says so: then no zombie of the box is left to
                # whoever would inherit it. Its death would take a live init down too.
                self._zygote.sock.settimeout(GONE_DEADLINE)
                with contextlib.suppress(OSError, ValueError):
                    self._zygote.status()
                self._zygote.stop()
                self._zygote = None
        self._boxes._release(self)


class LiveBoxes:
    """The live boxes of one jail: their uid range, state dir, /etc and seccomp filter."""

    def __init__(self, jail: Jail, config: LiveConfig) -> None:
        self.jail = jail
        self.config = config
        self._free: list[int] = []
        self._lock = threading.Lock()
        self._live: set[LiveBox] = set()
        self._thread: ThreadPoolExecutor | None = None
        self._bpf = b""
        self.state = Path()
        self.layers: Layers | None = None
        self.layers_problem: str | None = "layers are off (LiveConfig.layers)"

    def start(self) -> LiveBoxes:
        jail, cfg = self.jail, self.config
        if jail.cgroups is None:
            raise JailUnavailable("the jail is not started")
        slots = range(jail.config.uid_base, jail.config.uid_base + jail.config.slots)
        live = range(cfg.uid_base, cfg.uid_base + cfg.count)
        if slots.start < live.stop and live.start < slots.stop:
            raise JailUnavailable(
                f"the live boxes' uids {live.start}-{live.stop - 1} overlap the slots' "
                f"{slots.start}-{slots.stop - 1}: choose another session_uid_base"
            )
        self._bpf = compile_filter()
        self.state = jail.state / "live"
        try:
            self.state.mkdir(mode=0o711)
            (self.state / "root").mkdir(mode=0o700)
            jail.make_etc(self.state / "etc", list(live))
        except OSError as exc:
            raise JailUnavailable(f"cannot set up the live boxes' state: {exc}") from exc
        self._free = list(live)
        if cfg.layers:
            layers = Layers(self.state / "layers", cfg.layer_owner, cfg.disk, cfg.max_files)
            try:
                self.layers = layers.start(probe_uid=live.start)
                self.layers_problem = None
            except JailUnavailable as exc:  # sessions go on without; what needs layers says why
                self.layers_problem = str(exc)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-boxes")
        return self

    def close(self) -> None:
        """Close every live box (the server is stopping)."""
        for box in list(self._live):
            box.close()
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        if self.layers is not None:
            self.layers.close()
            self.layers = None

    @property
    def free(self) -> int:
        return len(self._free)

    def open(self, spec: RunSpec, lowers: tuple[Frozen, ...] = ()) -> tuple[LiveBox, Pipes]:
        """A new box running spec.argv with its stdio on pipes; blocks until it is built.
        `spec.files` are written into its work dir first; `spec.limits` hold its memory, pids
        and rlimits (its wall time is the caller's to keep). With layers, its work dir is a
        writable layer over `lowers` (the top first)."""
        return self.submit(spec, lowers).result()

    def submit(
        self, spec: RunSpec, lowers: tuple[Frozen, ...] = (), background: bool = False
    ) -> Future[tuple[LiveBox, Pipes]]:
        """`open`, as a future (asyncio waits for it with asyncio.wrap_future). `background`:
        the box runs at the lowest CPU priority until `LiveBox.foreground` (a box started
        ahead of its use must not slow down those in use)."""
        if self._thread is None:
            raise JailUnavailable("the live boxes are not started")
        if lowers and self.layers is None:
            raise JailUnavailable(f"a box cannot stack layers: {self.layers_problem}")
        return self._thread.submit(self._open, spec, lowers, background)

    def _open(
        self, spec: RunSpec, lowers: tuple[Frozen, ...], background: bool = False
    ) -> tuple[LiveBox, Pipes]:
        with self._lock:
            if not self._free:
                raise JailError(f"all {self.config.count} uids of live boxes are in use")
            uid = self._free.pop(0)
        assert self.jail.cgroups is not None
        work = self.state / f"work-{uid}"
        try:
            cgroup = self.jail.cgroups.child(f"live-{uid}")
        except JailUnavailable as exc:
            with self._lock:
                self._free.append(uid)
            raise JailError(str(exc)) from exc
        box = LiveBox(self, uid, cgroup, work, spec.limits.pids + LIVE_JAIL_PIDS)
        with self._lock:
            self._live.add(box)
        try:
            box.set_memory(spec.limits.memory)
            if self.layers is not None:
                box.upper = self.layers.writable()
                box.workdir = self.layers.stack(lowers, box.upper, uid)
                box.lowers = lowers
            else:
                self._mount_work(work, uid)
            workdir.write_files(box.workdir, spec.files, uid, uid)
            pipes = self._start(box, spec, background)
        except BaseException:
            box.close()
            raise
        return box, pipes

    def _mount_work(self, work: Path, uid: int) -> None:
        cfg = self.config
        options = f"size={cfg.disk},nr_inodes={cfg.max_files},mode=0700,uid={uid},gid={uid}"
        try:
            work.mkdir(mode=0o700)
        except OSError as exc:
            raise JailError(f"cannot make a live box's work dir: {exc}") from exc
        try:
            workdir.mount_tmpfs(str(work), options)
        except OSError as exc:
            raise JailError(f"cannot mount a live box's work dir: {exc.strerror}") from exc

    def _start(self, box: LiveBox, spec: RunSpec, background: bool) -> Pipes:
        jail = self.jail
        layout = BoxLayout(
            bwrap=jail.config.bwrap,
            workdir=box.workdir,
            root_dir=str(self.state / "root"),
            etc_dir=str(self.state / "etc"),
            ro_binds=jail.config.ro_binds,
            tmp_size=jail.config.tmp_size,
            shm_size=jail.config.shm_size,
        )
        script = spec.warm and spec.argv[0] == self.config.python
        request: dict[str, object] = {
            "box": box_request(layout, box.uid, spec),
            "run": run_request(spec, script),
        }
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        setup_r, setup_w = os.pipe()  # EOF: the box is built; bytes: why it could not be
        theirs = (in_r, out_w, err_w, setup_w)
        ours = (in_w, out_r, err_r)
        try:
            try:
                box._zygote = Zygote(
                    self.config.python, self.jail.box_init, self._bpf, join=box.cgroup.join
                )
                if background:  # before the box exists: all it starts inherits it
                    os.setpriority(os.PRIO_PROCESS, box._zygote.pid, BACKGROUND_NICE)
                box._pidfd, _ = box._zygote.start(request, theirs)
            finally:
                for fd in theirs:
                    os.close(fd)
            failure = read_all(setup_r)
        except BaseException as exc:
            for fd in ours:
                os.close(fd)
            if isinstance(exc, OSError):
                raise JailError(f"cannot start a live box: {exc}") from exc
            raise
        finally:
            os.close(setup_r)
        if failure:
            for fd in ours:
                os.close(fd)
            raise JailError(f"cannot build a live box: {failure.decode(errors='replace')}")
        for fd in ours:
            os.set_inheritable(fd, False)
        return Pipes(stdin=in_w, stdout=out_r, stderr=err_r)

    def _release(self, box: LiveBox) -> None:
        """Wait until nothing of the box runs, then remove its cgroup and work dir and give its
        uid back. A box that cannot be emptied keeps its uid: it is never handed out again."""
        deadline = time.monotonic() + GONE_DEADLINE
        empty = False
        while time.monotonic() < deadline:
            try:
                left = box.cgroup.pids()
            except FileNotFoundError:
                left = []
            if not left:
                empty = True
                break
            for pid in left:  # a zygote killed mid-start may leave its child briefly
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            box.cgroup.remove()
        work = Path(box.workdir)
        if box.upper is not None:
            unstack(box.workdir)
            box.upper.discard()
        elif os.path.ismount(work):
            with contextlib.suppress(OSError):
                workdir.unmount(str(work))
        with contextlib.suppress(OSError):
            work.rmdir()
        with self._lock:
            self._live.discard(box)
            if empty and not work.exists():
                self._free.append(box.uid)
