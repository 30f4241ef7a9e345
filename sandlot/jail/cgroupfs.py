"""The cgroup filesystem: where it is mounted, this process's cgroups, and on cgroup v2 a cgroup
the jail may manage.

cgroup v2 lets a cgroup enable controllers for its children only while it holds no process
itself (the root excepted). So `delegate` first makes sure the server may write below its own
cgroup: under systemd, that cgroup is a unit delegated to it, or else systemd makes it a scope
of its own with Delegate=yes; without systemd (a container whose /sys/fs/cgroup is its own
subtree, a plain host) it is the server's. Then every process in it moves into a leaf
(`server/`), and memory and pids are enabled for its children: the jail's tree among them.
Set-up failures say which file and what to do (`explained`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import JailUnavailable

V2_CONTROLLERS = ("memory", "pids")  # CPU time comes from cpu.stat, which needs no controller
_V2_NEEDED = frozenset(V2_CONTROLLERS)
V2_ENABLE = " ".join(f"+{c}" for c in V2_CONTROLLERS)
LEAF = "server"  # v2: where the processes of the cgroup the jail manages live
# What a failed set-up write most likely means, by errno.
_HINTS = {
    errno.EROFS: "the cgroup filesystem is mounted read-only (in a container, give it a "
    "writable /sys/fs/cgroup with its own cgroup namespace, e.g. docker run --cgroupns=private "
    "--privileged)",
    errno.EACCES: "the server may not write there: run it as root, in a cgroup delegated to it",
    errno.EPERM: "the server may not write there: run it as root, in a cgroup delegated to it",
    errno.EBUSY: "the cgroup still holds processes, and cgroup v2 enables controllers for the "
    "children of a cgroup without processes only",
    errno.ENOENT: "the file is missing: the controller is not enabled for this cgroup",
    errno.EOPNOTSUPP: "the cgroup is threaded; the server needs a domain cgroup",
}


@dataclass(frozen=True, slots=True)
class Mount:
    point: Path
    fstype: str
    root: str  # the hierarchy's path shown at the mount point ('/' unless bind-mounted deeper)
    options: frozenset[str]


def mounts() -> list[Mount]:
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, superopts = right.split(" ", 2)
        if fstype in ("cgroup", "cgroup2"):
            fields = left.split()
            found.append(Mount(Path(fields[4]), fstype, fields[3], frozenset(superopts.split(","))))
    return found


def own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and '' for the v2 hierarchy."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def located(mount: Mount, path: str) -> Path:
    """Where the cgroup `path` (as /proc/self/cgroup names it) is under `mount`."""
    rel = os.path.relpath(path, mount.root)
    if rel == ".." or rel.startswith("../"):
        raise JailUnavailable(
            f"this process's cgroup {path} is not under {mount.point} (which shows {mount.root} "
            "of the hierarchy): mount the cgroup filesystem so that it shows the server's cgroup"
        )
    return mount.point if rel == "." else mount.point / rel


# A run reads and writes a dozen cgroup files: with os calls each costs a quarter of what
# pathlib's open() and its buffered file do (13 against 50 µs here).


def read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def write(path: Path, value: str | int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


@contextlib.contextmanager
def explained(path: Path, doing: str):
    """Set-up failures as JailUnavailable naming the file and the likely fix."""
    try:
        yield
    except OSError as exc:
        hint = _HINTS.get(exc.errno or 0, "")
        raise JailUnavailable(
            f"cannot {doing} {path}: {exc.strerror or exc}" + (f"; {hint}" if hint else "")
        ) from exc


def _under_systemd() -> bool:
    return Path("/run/systemd/system").is_dir()  # what sd_booted() checks


def _delegated(cgroup: Path) -> bool:
    """systemd (>= 251) marks the cgroup of a unit with Delegate=yes."""
    for name in ("trusted.delegate", "user.delegate"):
        with contextlib.suppress(OSError):
            if os.getxattr(cgroup, name) == b"1":
                return True
    return False


def _controllers(cgroup: Path, file: str) -> set[str]:
    with explained(cgroup / file, "read"):
        return set((cgroup / file).read_text().split())


def _systemd_scope(mount: Mount, instance: str) -> Path:
    """Have systemd move this process into a new scope delegated to it; returns that cgroup."""
    unit = f"sandlot-{instance}.scope"
    call = [
        "--timeout=30", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))",
        unit, "fail", "4", "PIDs", "au", "1", str(os.getpid()), "Delegate", "b", "true",
        "CollectMode", "s", "inactive-or-failed", "Description", "s", "sandlot server", "0",
    ]  # fmt: skip
    try:
        done = subprocess.run(["busctl", *call], capture_output=True, text=True, timeout=30)
        error = done.stderr.strip() or f"busctl exited with {done.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        done, error = None, str(exc)
    if done is None or done.returncode != 0:
        raise JailUnavailable(
            f"the server's cgroup is not delegated to it, and systemd could not make it a "
            f"delegated scope ({unit}) over D-Bus: {error}. Install dbus, or start the server "
            "in a delegated cgroup (`systemd-run --scope -p Delegate=yes make serve`, or a "
            "unit with Delegate=yes)"
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        path = own_paths().get("", "")
        if path.endswith(f"/{unit}"):
            return located(mount, path)
        time.sleep(0.02)
    raise JailUnavailable(f"systemd made {unit} but did not move the server into it")


def _kill_dead_scopes(slice_dir: Path) -> None:
    """Kill what is left in the scopes of servers that died (systemd removes a scope once it
    is empty; a process that outlived its server would keep it)."""
    for scope in slice_dir.glob("sandlot-*.scope"):
        pid = scope.name.removeprefix("sandlot-").split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            with contextlib.suppress(OSError):
                write(scope / "cgroup.kill", 1)


def _move_into_leaf(cgroup: Path) -> None:
    """Move every process of `cgroup` into its leaf, so that it may enable controllers."""
    leaf = cgroup / LEAF
    with explained(leaf, "create"):
        leaf.mkdir(exist_ok=True)
    for _ in range(50):  # processes may fork while they are moved
        with explained(cgroup / "cgroup.procs", "read"):
            pids = (cgroup / "cgroup.procs").read_text().split()
        if not pids:
            return
        for pid in pids:
            try:
                write(leaf / "cgroup.procs", pid)
            except ProcessLookupError:
                pass  # it exited
            except OSError as exc:
                with explained(leaf / "cgroup.procs", f"move process {pid} into"):
                    raise exc
    raise JailUnavailable(f"processes keep appearing in {cgroup}/cgroup.procs; cannot empty it")


def delegate(mount: Mount, instance: str) -> tuple[Path, str]:
    """A v2 cgroup that enables memory and pids for its children, to hold the jail's tree, and
    how it was obtained."""
    own = located(mount, own_paths().get("", "/"))
    if own.name == LEAF and _controllers(own.parent, "cgroup.subtree_control") >= _V2_NEEDED:
        return own.parent, "the cgroup an earlier server set up"
    how = "the server's own cgroup"
    if _under_systemd() and own != mount.point and not _delegated(own):
        # A session or a unit systemd manages: writing below it is not ours to do. A scope of
        # our own is (a unit's limits then no longer cover the server; Delegate=yes keeps it in).
        own = _systemd_scope(mount, instance)
        how = f"a systemd scope of its own ({own.name}, Delegate=yes)"
        _kill_dead_scopes(own.parent)
    have = _controllers(own, "cgroup.controllers")
    missing = [c for c in V2_CONTROLLERS if c not in have]
    if missing:
        fix = (
            f"enable them for it from its parent (echo '+memory +pids' > "
            f"{own.parent}/cgroup.subtree_control), or start the server where they are "
            "delegated (a systemd unit with Delegate=yes; a container with its own cgroup "
            "namespace)"
            if own != mount.point
            else "the kernel does not offer them here: see /proc/cgroups and the kernel "
            "command line (cgroup_disable=)"
        )
        raise JailUnavailable(
            f"{own}/cgroup.controllers lists {' '.join(sorted(have)) or 'nothing'}: the "
            f"{' and '.join(missing)} controller{'s' * (len(missing) > 1)} of cgroup v2 "
            f"{'are' if len(missing) > 1 else 'is'} not available to the server; {fix}"
        )
    control = own / "cgroup.subtree_control"
    if not _controllers(own, "cgroup.subtree_control") >= _V2_NEEDED:
        try:
            write(control, V2_ENABLE)
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                with explained(control, "write"):
                    raise
            _move_into_leaf(own)  # the root may hold processes; any other cgroup may not
            with explained(control, "write"):
                write(control, V2_ENABLE)
            how += f", its processes moved into {LEAF}/"
    return own, how
