"""Per-slot cgroups: memory (the memory verdict), pids, and CPU accounting.

One slot's spawner process joins its cgroups once at start-up; every run it forks inherits them,
so no run pays a cgroup migration (research/isolation.md §2.3). The spawner itself stays in the
group, so limits and readings are taken relative to its own baseline.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import JailUnavailable

V1_CONTROLLERS = ("memory", "pids", "cpuacct")
LIMIT_SLACK = 2 << 20  # a memory limit this close to the one in force is left as it is


@dataclass(slots=True)
class Reading:
    """Counters read before and after a run; the differences describe the run."""

    memory_usage: int
    oom_kills: int
    cpu_ns: int


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, superopts = right.split(" ", 2)
        if fstype in ("cgroup", "cgroup2"):
            found.append((left.split()[4], fstype, set(superopts.split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and '' for the v2 hierarchy."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _write(path: Path, value: str | int) -> None:
    path.write_text(str(value))


class SlotCgroup:
    """The cgroups of one slot. Subclasses speak cgroup v1 or v2."""

    version: int

    def dirs_by_key(self) -> dict[str, str]:
        """Where the slot's cgroups are: per v1 controller, or "" for the v2 directory."""
        raise NotImplementedError

    def join(self, pid: int) -> None:
        raise NotImplementedError

    def set_limits(self, memory: int, pids: int) -> None:
        raise NotImplementedError

    def read(self) -> Reading:
        raise NotImplementedError

    def reset_peak(self) -> None:
        raise NotImplementedError

    def peak(self) -> int:
        raise NotImplementedError

    def pids(self) -> list[int]:
        raise NotImplementedError

    def task_count(self) -> int:
        """Tasks charged to the slot, zombies not yet reaped included."""
        raise NotImplementedError

    def remove(self) -> None:
        raise NotImplementedError


def open_slot(version: int, dirs: dict[str, str]) -> SlotCgroup:
    """The cgroups of a slot from where they are (what `SlotCgroup.dirs_by_key` gave)."""
    if version == 1:
        return CgroupV1({key: Path(d) for key, d in dirs.items()})
    return CgroupV2(Path(dirs[""]))


class CgroupV1(SlotCgroup):
    version = 1

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs
        self.memsw = (dirs["memory"] / "memory.memsw.limit_in_bytes").exists()
        self._limits: tuple[int, int] | None = None

    def dirs_by_key(self) -> dict[str, str]:
        return {key: str(d) for key, d in self.dirs.items()}

    def join(self, pid: int) -> None:
        for d in self.dirs.values():
            _write(d / "cgroup.procs", pid)

    def set_limits(self, memory: int, pids: int) -> None:
        # Runs of a slot mostly ask for the same limits: a few file writes saved per run.
        if self._limits is not None:
            last_memory, last_pids = self._limits
            if last_pids == pids and abs(last_memory - memory) < LIMIT_SLACK:
                return
        self._limits = (memory, pids)
        mem = self.dirs["memory"]
        # memsw must stay >= the plain limit, so the order depends on the direction of the change.
        current = int((mem / "memory.limit_in_bytes").read_text())
        files = (
            ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
            if self.memsw
            else ["memory.limit_in_bytes"]
        )
        for name in files if memory <= current else reversed(files):
            _write(mem / name, memory)
        _write(self.dirs["pids"] / "pids.max", pids)

    def read(self) -> Reading:
        mem = self.dirs["memory"]
        oom = 0
        for line in (mem / "memory.oom_control").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                oom = int(value)
        return Reading(
            memory_usage=int((mem / "memory.usage_in_bytes").read_text()),
            oom_kills=oom,
            cpu_ns=int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()),
        )

    def reset_peak(self) -> None:
        _write(self.dirs["memory"] / "memory.max_usage_in_bytes", 0)

    def peak(self) -> int:
        return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())

    def pids(self) -> list[int]:
        return [int(p) for p in (self.dirs["pids"] / "cgroup.procs").read_text().split()]

    def task_count(self) -> int:
        return int((self.dirs["pids"] / "pids.current").read_text())

    def remove(self) -> None:
        for d in self.dirs.values():
            _rmdir(d)


class CgroupV2(SlotCgroup):
    version = 2

    def __init__(self, path: Path) -> None:
        self.path = path
        self._peak_base = 0

    def dirs_by_key(self) -> dict[str, str]:
        return {"": str(self.path)}

    def join(self, pid: int) -> None:
        _write(self.path / "cgroup.procs", pid)

    def set_limits(self, memory: int, pids: int) -> None:
        _write(self.path / "memory.max", memory)
        if (self.path / "memory.swap.max").exists():
            _write(self.path / "memory.swap.max", 0)
        _write(self.path / "pids.max", pids)

    def read(self) -> Reading:
        events = dict(
            line.split() for line in (self.path / "memory.events").read_text().splitlines()
        )
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return Reading(
            memory_usage=int((self.path / "memory.current").read_text()),
            oom_kills=int(events.get("oom_kill", 0)),
            cpu_ns=int(stat["usage_usec"]) * 1000,
        )

    def reset_peak(self) -> None:
        # memory.peak cannot be reset on older kernels; without it the peak is a high-water mark
        # of the slot and only an upper bound for this run.
        self._peak_base = int((self.path / "memory.current").read_text())

    def peak(self) -> int:
        peak_file = self.path / "memory.peak"
        return int(peak_file.read_text()) if peak_file.exists() else self._peak_base

    def pids(self) -> list[int]:
        return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]

    def task_count(self) -> int:
        return int((self.path / "pids.current").read_text())

    def remove(self) -> None:
        _rmdir(self.path)


def _rmdir(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.rmdir()


class CgroupTree:
    """The cgroups of one jail instance: a parent group with one child per slot."""

    def __init__(self, instance: str) -> None:
        self.instance = instance
        mounts = _mounts()
        own = _own_paths()
        v1 = {}
        for point, fstype, opts in mounts:
            for ctrl in V1_CONTROLLERS:
                if fstype == "cgroup" and ctrl in opts and ctrl not in v1:
                    v1[ctrl] = Path(point) / own.get(ctrl, "/").lstrip("/") / f"sandlot-{instance}"
        if all(c in v1 for c in V1_CONTROLLERS):
            self.version = 1
            self.roots: dict[str, Path] = v1
            return
        for point, fstype, _ in mounts:
            if fstype != "cgroup2":
                continue
            base = Path(point) / own.get("", "/").lstrip("/")
            controllers = set((Path(point) / "cgroup.controllers").read_text().split())
            if {"memory", "pids", "cpu"} <= controllers:
                self.version = 2
                self.roots = {"": base / f"sandlot-{instance}"}
                return
        raise JailUnavailable(
            "no usable cgroups: need the memory, pids and cpuacct controllers (cgroup v1) or a "
            "cgroup v2 hierarchy with memory, pids and cpu enabled; mounts seen: "
            + ", ".join(f"{p} ({t})" for p, t, _ in mounts)
        )

    def create(self, slot: int) -> SlotCgroup:
        return self.child(f"slot-{slot}")

    def child(self, name: str) -> SlotCgroup:
        """A child group of the jail's, named (a slot's, or a live box's)."""
        try:
            if self.version == 1:
                dirs = {}
                for ctrl, root in self.roots.items():
                    d = root / name
                    d.mkdir(parents=True, exist_ok=True)
                    dirs[ctrl] = d
                mem_root = self.roots["memory"]
                if (mem_root / "memory.use_hierarchy").exists():
                    # The slot's limit must also count what its children use.
                    with contextlib.suppress(OSError):
                        _write(mem_root / "memory.use_hierarchy", 1)
                return CgroupV1(dirs)
            root = self.roots[""]
            root.mkdir(parents=True, exist_ok=True)
            _write(root / "cgroup.subtree_control", "+memory +pids +cpu")
            d = root / name
            d.mkdir(exist_ok=True)
            return CgroupV2(d)
        except OSError as exc:
            raise JailUnavailable(f"cannot create the cgroup {name}: {exc}") from exc

    def remove(self) -> None:
        for root in self.roots.values():
            if root.exists():
                for child in root.iterdir():
                    if child.is_dir():
                        _rmdir(child)
                _rmdir(root)


def remove_stale(alive: set[str] | None = None) -> list[str]:
    """Remove cgroups left by jail instances whose server is gone; returns what was removed."""
    removed = []
    own = _own_paths()
    for point, fstype, opts in _mounts():
        key = "" if fstype == "cgroup2" else next((c for c in V1_CONTROLLERS if c in opts), None)
        if key is None:
            continue
        parent = Path(point) / own.get(key, "/").lstrip("/")
        for d in parent.glob("sandlot-*"):
            instance = d.name.removeprefix("sandlot-")
            pid = instance.split("-", 1)[0]
            if (alive and instance in alive) or (pid.isdigit() and os.path.exists(f"/proc/{pid}")):
                continue
            try:
                for child in d.iterdir():
                    if child.is_dir():
                        child.rmdir()
                d.rmdir()
                removed.append(str(d))
            except OSError:
                pass
    return removed
