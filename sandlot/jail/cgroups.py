"""Per-slot cgroups: memory (the memory verdict), pids, and CPU accounting, on cgroup v1 or v2.

One slot's spawner process joins its cgroups once at start-up, so that it never pays a cgroup
migration per run (research/isolation.md §2.3).

- v1: every run the spawner forks inherits the slot's cgroups; the spawner stays in them, so
  limits and readings are taken relative to its own baseline, a run's leftovers are killed by
  pid, and the peak is reset per run (memory.max_usage_in_bytes).
- v2: the spawner and its zygote sit in a leaf of the slot (`spawner/`), and each run in a
  cgroup made for it alone (`run/`), which its box's first process enters as it is built. That
  cgroup's memory.peak is the run's, on every kernel (memory.peak cannot be reset before Linux
  6.12); its cgroup.kill ends the run's processes and nothing else. For zygote-built boxes the
  migration happens when the box is built ahead of its run, off the run's clock.

On cgroup v2 the tree sits in a cgroup the server may manage (cgroupfs.delegate). CPU time
comes from `cpu.stat`, which every v2 cgroup has without the cpu controller.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import JailError, JailUnavailable, SlotBroken
from sandlot.jail import cgroupfs
from sandlot.jail.cgroupfs import LEAF, V2_CONTROLLERS, V2_ENABLE, explained, read, write

V1_CONTROLLERS = ("memory", "pids", "cpuacct")
SPAWNER_LEAF = "spawner"  # v2: a slot's spawner and zygote
RUN_LEAF = "run"  # v2: the processes of a slot's current (or next) run
LIMIT_SLACK = 2 << 20  # a memory limit this close to the one in force is left as it is


@dataclass(slots=True)
class Reading:
    """Counters read before and after a run; the differences describe the run."""

    memory_usage: int
    oom_kills: int
    cpu_ns: int


@dataclass(frozen=True, slots=True)
class RunGroup:
    """The cgroup one run's processes are charged to."""

    cgroup: SlotCgroup
    enter: str = ""  # a cgroup.procs the box's first process writes itself into ("": born there)
    shared: bool = True  # the slot's spawner and zygote are in it too: kept, their CPU subtracted


def _active_swap() -> list[str]:
    lines = Path("/proc/swaps").read_text().splitlines()[1:]
    return [line.split()[0] for line in lines if line.strip()]


def _swap_policy(limit_file: Path, how: str) -> str:
    """How swap is kept within a run's memory limit; fails closed when it cannot be."""
    if limit_file.exists():
        return f"limited ({limit_file.name} {how})"
    active = _active_swap()
    if active:
        raise JailUnavailable(
            f"swap is on ({', '.join(active)}) but {limit_file} is missing, so a run could swap "
            "past its memory limit: enable swap accounting in the kernel (cgroup v1: boot with "
            "swapaccount=1; v2: without cgroup.memory=noswap), or turn swap off (swapoff -a)"
        )
    return f"none active ({limit_file.name} is missing: restart the server after adding swap)"


def _kill_tree(path: Path, version: int) -> None:
    """Kill every process left in a cgroup tree (a closed or dead jail's)."""
    kill = path / "cgroup.kill"
    if version == 2 and kill.exists():
        with contextlib.suppress(OSError):
            write(kill, 1)
        return
    for procs in path.glob("**/cgroup.procs"):
        with contextlib.suppress(OSError):
            for pid in read(procs).split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


def _remove_tree(path: Path) -> None:
    """rmdir a cgroup tree bottom-up, waiting briefly for killed processes to be gone."""
    deadline = time.monotonic() + 2
    dirs = [path, *(p for p in path.rglob("*") if p.is_dir())]
    for child in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
        while True:
            try:
                child.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


class SlotCgroup(ABC):
    """The cgroups of one slot. Subclasses speak cgroup v1 or v2."""

    version: int

    @abstractmethod
    def dirs_by_key(self) -> dict[str, str]:
        """Where the slot's cgroups are: per v1 controller, or "" for the v2 directory."""
        ...

    @abstractmethod
    def join(self, pid: int) -> None: ...

    _limits: tuple[int, int] | None = None  # the limits in force, once written whole

    def set_limits(self, memory: int, pids: int) -> None:
        """Memory (bytes) and pids for what runs next; JailError if the kernel refuses them."""
        # Runs of a slot mostly ask for the same limits: a few file writes saved per run.
        if self._limits is not None:
            last_memory, last_pids = self._limits
            if last_pids == pids and abs(last_memory - memory) < LIMIT_SLACK:
                return
        self._limits = None  # a write that fails leaves them unknown: the next run writes all
        try:
            self._write_limits(memory, pids)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                held = self.read().memory_usage
                raise JailError(
                    f"cannot limit memory to {memory >> 20} MiB: what its cgroup holds already, "
                    f"{held >> 20} MiB, is more and the kernel cannot reclaim it"
                ) from exc
            raise JailError(f"cannot set the limits of memory and pids: {exc}") from exc
        self._limits = (memory, pids)

    @abstractmethod
    def _write_limits(self, memory: int, pids: int) -> None: ...

    @abstractmethod
    def read(self) -> Reading: ...

    def file_cache(self) -> int:
        """Page cache charged here that the kernel may reclaim (files read, not tmpfs): on v1 a
        slot's cgroup keeps it from run to run, and a run may not count it as room of its own.
        A v2 run's cgroup is new for each run: nothing is there before it."""
        return 0

    @abstractmethod
    def reset_peak(self) -> None: ...

    @abstractmethod
    def peak(self) -> int: ...

    @abstractmethod
    def pids(self) -> list[int]: ...

    @abstractmethod
    def task_count(self) -> int:
        """Tasks charged to the slot, zombies not yet reaped included."""
        ...

    @abstractmethod
    def remove(self) -> None:
        """rmdir the group (it must be empty: a live box's, once its processes are gone)."""
        ...

    def kill(self, keep: set[int]) -> None:
        """SIGKILL every process in the group but those of `keep`."""
        for p in self.pids():
            if p not in keep:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p, signal.SIGKILL)

    def run_group(self) -> RunGroup:
        """Where the slot's next run is charged: here, beside the spawner (v1)."""
        return RunGroup(self)

    def end_run(self, group: RunGroup) -> None:  # noqa: B027 - v1's run group is the slot
        """Forget a run's group once its processes are gone and reaped."""


def open_slot(version: int, dirs: dict[str, str]) -> SlotCgroup:
    """The cgroups of a slot from where they are (what `SlotCgroup.dirs_by_key` gave)."""
    if version == 1:
        return CgroupV1({key: Path(d) for key, d in dirs.items()})
    return SlotV2(Path(dirs[""]))


class CgroupV1(SlotCgroup):
    version = 1

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs
        self.memsw = (dirs["memory"] / "memory.memsw.limit_in_bytes").exists()

    def dirs_by_key(self) -> dict[str, str]:
        return {key: str(d) for key, d in self.dirs.items()}

    def join(self, pid: int) -> None:
        for d in self.dirs.values():
            write(d / "cgroup.procs", pid)

    def _write_limits(self, memory: int, pids: int) -> None:
        mem = self.dirs["memory"]
        # memsw must stay >= the plain limit, so the order depends on the direction of the change.
        current = int(read(mem / "memory.limit_in_bytes"))
        files = (
            ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
            if self.memsw
            else ["memory.limit_in_bytes"]
        )
        for name in files if memory <= current else reversed(files):
            write(mem / name, memory)
        write(self.dirs["pids"] / "pids.max", pids)

    def read(self) -> Reading:
        mem = self.dirs["memory"]
        oom = 0
        for line in read(mem / "memory.oom_control").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                oom = int(value)
        return Reading(
            memory_usage=int(read(mem / "memory.usage_in_bytes")),
            oom_kills=oom,
            cpu_ns=int(read(self.dirs["cpuacct"] / "cpuacct.usage")),
        )

    def file_cache(self) -> int:
        stat = read(self.dirs["memory"] / "memory.stat").split()
        return sum(int(stat[stat.index(key) + 1]) for key in ("active_file", "inactive_file"))

    def reset_peak(self) -> None:
        write(self.dirs["memory"] / "memory.max_usage_in_bytes", 0)

    def peak(self) -> int:
        return int(read(self.dirs["memory"] / "memory.max_usage_in_bytes"))

    def pids(self) -> list[int]:
        return [int(p) for p in read(self.dirs["pids"] / "cgroup.procs").split()]

    def task_count(self) -> int:
        return int(read(self.dirs["pids"] / "pids.current"))

    def remove(self) -> None:
        for d in self.dirs.values():
            _rmdir(d)


class CgroupV2(SlotCgroup):
    """One v2 cgroup: a run's, or a live box's."""

    version = 2

    def __init__(self, path: Path) -> None:
        self.path = path

    def dirs_by_key(self) -> dict[str, str]:
        return {"": str(self.path)}

    def join(self, pid: int) -> None:
        write(self.path / "cgroup.procs", pid)

    def _write_limits(self, memory: int, pids: int) -> None:
        write(self.path / "memory.max", memory)
        write(self.path / "pids.max", pids)

    def read(self) -> Reading:
        events = read(self.path / "memory.events").split()
        stat = read(self.path / "cpu.stat").split()
        return Reading(
            memory_usage=int(read(self.path / "memory.current")),
            oom_kills=int(events[events.index("oom_kill") + 1]) if "oom_kill" in events else 0,
            cpu_ns=int(stat[stat.index("usage_usec") + 1]) * 1000,
        )

    def reset_peak(self) -> None:
        """Nothing to do: a run's cgroup is made for it, so its memory.peak is the run's."""

    def peak(self) -> int:
        try:
            return int(read(self.path / "memory.peak"))
        except FileNotFoundError:  # Linux < 5.19: what it holds now, a lower bound (/health)
            return int(read(self.path / "memory.current"))

    def pids(self) -> list[int]:
        return [int(p) for p in read(self.path / "cgroup.procs").split()]

    def kill(self, keep: set[int]) -> None:
        if keep or not (self.path / "cgroup.kill").exists():  # cgroup.kill: Linux >= 5.14
            super().kill(keep)
            return
        write(self.path / "cgroup.kill", 1)  # also what forks while it is killed

    def task_count(self) -> int:
        return int(read(self.path / "pids.current"))

    def remove(self) -> None:
        _rmdir(self.path)


class SlotV2(CgroupV2):
    """A slot on cgroup v2: the spawner and zygote in one leaf, each run in a fresh one (the
    module's docstring says why). Readings here cover the whole slot; a run's are its group's."""

    def join(self, pid: int) -> None:
        write(self.path / SPAWNER_LEAF / "cgroup.procs", pid)

    def pids(self) -> list[int]:
        return [int(p) for procs in self.path.glob("*/cgroup.procs") for p in read(procs).split()]

    def run_group(self) -> RunGroup:
        leaf = self.path / RUN_LEAF
        try:
            if leaf.exists():  # a spawner that died mid-run left it: end what is in it
                _kill_tree(leaf, 2)
                _remove_tree(leaf)
            leaf.mkdir()
            if (leaf / "memory.swap.max").exists():
                write(leaf / "memory.swap.max", 0)
        except OSError as exc:
            raise SlotBroken(f"cannot make a cgroup for the run: {exc}") from exc
        return RunGroup(CgroupV2(leaf), enter=str(leaf / "cgroup.procs"), shared=False)

    def end_run(self, group: RunGroup) -> None:
        try:
            group.cgroup.remove()
        except OSError as exc:  # its processes are gone (swept): only a kernel problem is left
            raise SlotBroken(f"cannot remove the run's cgroup: {exc}") from exc


def _rmdir(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.rmdir()


# -- the tree -----------------------------------------------------------------------------------


class CgroupTree:
    """The cgroups of one jail instance: a parent group with one child per slot."""

    def __init__(self, instance: str) -> None:
        self.instance = instance
        found = cgroupfs.mounts()
        own = cgroupfs.own_paths()
        v1 = {}
        for m in found:
            for ctrl in V1_CONTROLLERS:
                if m.fstype == "cgroup" and ctrl in m.options and ctrl not in v1:
                    v1[ctrl] = cgroupfs.located(m, own.get(ctrl, "/")) / f"sandlot-{instance}"
        self.delegation = "the server's own cgroup"
        self.swap = ""
        self.peak_file = True  # v2: memory.peak exists (Linux >= 5.19)
        if all(c in v1 for c in V1_CONTROLLERS):
            self.version = 1
            self.roots: dict[str, Path] = v1
            return
        unified = next((m for m in found if m.fstype == "cgroup2"), None)
        if unified is None:
            raise JailUnavailable(
                "no usable cgroups: need the memory, pids and cpuacct controllers of cgroup v1, "
                "or cgroup v2 with memory and pids; cgroup mounts seen: "
                + (", ".join(f"{m.point} ({m.fstype})" for m in found) or "none")
                + " (mount cgroup2 at /sys/fs/cgroup)"
            )
        self.version = 2
        base, self.delegation = cgroupfs.delegate(unified, instance)
        self.roots = {"": base / f"sandlot-{instance}"}

    @property
    def controllers(self) -> tuple[str, ...]:
        return V1_CONTROLLERS if self.version == 1 else V2_CONTROLLERS

    def create(self, slot: int) -> SlotCgroup:
        name = f"slot-{slot}"
        group = self.child(name)
        if not isinstance(group, CgroupV2):
            return group
        # The slot holds no process itself, so that it may enable controllers for its leaves.
        try:
            control = group.path / "cgroup.subtree_control"
            with explained(control, "write"):
                write(control, V2_ENABLE)
            with explained(group.path / SPAWNER_LEAF, "create"):
                (group.path / SPAWNER_LEAF).mkdir(exist_ok=True)
        except OSError as exc:
            raise JailUnavailable(f"cannot create the cgroup {name}: {exc}") from exc
        return SlotV2(group.path)

    def child(self, name: str) -> SlotCgroup:
        """A child group of the jail's, named (a slot's, or a live box's)."""
        try:
            if self.version == 1:
                return self._create_v1(name)
            root = self.roots[""]
            new = not root.exists()
            with explained(root, "create"):
                root.mkdir(exist_ok=True)
            if new:
                control = root / "cgroup.subtree_control"
                with explained(control, "write"):
                    write(control, V2_ENABLE)
            d = root / name
            with explained(d, "create"):
                d.mkdir(exist_ok=True)
            if not self.swap:
                self.swap = _swap_policy(d / "memory.swap.max", "= 0")
                self.peak_file = (d / "memory.peak").exists()
            if (d / "memory.swap.max").exists():
                with explained(d / "memory.swap.max", "write"):
                    write(d / "memory.swap.max", 0)
            return CgroupV2(d)
        except OSError as exc:
            raise JailUnavailable(f"cannot create the cgroup {name}: {exc}") from exc

    def _create_v1(self, name: str) -> CgroupV1:
        dirs = {}
        for ctrl, root in self.roots.items():
            d = root / name
            with explained(d, "create"):
                d.mkdir(parents=True, exist_ok=True)
            dirs[ctrl] = d
        mem_root = self.roots["memory"]
        if (mem_root / "memory.use_hierarchy").exists():
            # The slot's limit must also count what its children use.
            with contextlib.suppress(OSError):
                write(mem_root / "memory.use_hierarchy", 1)
        if not self.swap:
            memsw = dirs["memory"] / "memory.memsw.limit_in_bytes"
            self.swap = _swap_policy(memsw, "= the memory limit")
        return CgroupV1(dirs)

    def info(self) -> dict[str, object]:
        """What the jail got, for /health."""
        if self.version == 1:
            peak = "per run"
        elif self.peak_file:
            peak = "per run (each run in a cgroup of its own)"
        else:
            peak = "a lower bound: what a run holds at its end (memory.peak needs Linux >= 5.19)"
        return {
            "version": self.version,
            "controllers": list(self.controllers),
            "cpu_time": "cpuacct.usage" if self.version == 1 else "cpu.stat (usage_usec)",
            "swap": self.swap,
            "memory_peak": peak,
            "delegation": self.delegation,
            "tree": str(self.roots.get("memory") or self.roots[""]),
        }

    def remove(self) -> None:
        for root in self.roots.values():
            if root.exists():
                _kill_tree(root, self.version)
                with contextlib.suppress(OSError):
                    _remove_tree(root)


def remove_stale(alive: set[str] | None = None) -> list[str]:
    """Remove cgroups left by jail instances whose server is gone; returns what was removed.

    Processes still in such a tree (a box that outlived everything) are killed first."""
    removed = []
    own = cgroupfs.own_paths()
    for m in cgroupfs.mounts():
        if m.fstype == "cgroup2":
            key: str | None = ""
        else:
            key = next((c for c in V1_CONTROLLERS if c in m.options), None)
        if key is None or key not in own:
            continue
        try:
            parent = cgroupfs.located(m, own[key])
        except JailUnavailable:
            continue
        if m.fstype == "cgroup2" and parent.name == LEAF:
            parent = parent.parent  # the jail's trees sit beside the leaf the server is in
        for d in parent.glob("sandlot-*"):
            instance = d.name.removeprefix("sandlot-")
            pid = instance.split("-", 1)[0]
            if not d.is_dir() or d.suffix == ".scope":
                continue  # systemd's scope of a server: systemd removes it when it empties
            if (alive and instance in alive) or (pid.isdigit() and os.path.exists(f"/proc/{pid}")):
                continue
            _kill_tree(d, 2 if m.fstype == "cgroup2" else 1)
            try:
                _remove_tree(d)
                removed.append(str(d))
            except OSError:
                pass
    return removed
