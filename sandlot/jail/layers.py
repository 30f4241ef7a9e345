"""A live box's work dir in layers (overlayfs): frozen layers, read-only, under one writable
layer of the box's own. Freezing what a box wrote then costs the same whatever its size, and
any number of boxes share the bytes of the layers below theirs.

- A writable layer is a size-capped tmpfs of its own (`upper/`, and overlayfs' `work/`),
  charged to the memory of the box that writes it, as a plain work dir is.
- Sealing it remounts that tmpfs read-only: from then on nothing (its box, a process holding a
  descriptor, the host) can change it, so any number of boxes may stack it. The kernel refuses
  (EBUSY: `LayerBusy`) while a file on it is open for writing.
- Files are stored as one uid, `owner`, whichever box wrote them; a box sees them as its own
  uid through idmapped mounts of its layers (mount_setattr's MOUNT_ATTR_IDMAP), so that a box
  of another uid (a fork) may change, chmod and remove what an earlier box wrote, by copy-up.
- A frozen layer is in memory (a sealed tmpfs) until a store copies it to disk (`copy_layer`);
  overlayfs stacks either the same way.

Layers reach overlayfs as descriptors (/proc/self/fd/N): no host path of a layer is written in
the overlay's options, which a box can read in its /proc/self/mountinfo.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from sandlot.errors import JailError, JailUnavailable
from sandlot.jail import workdir

# open_tree(2), move_mount(2) (Linux 5.2) and mount_setattr(2) (5.12): the same numbers on every
# architecture, as every system call added since 5.1.
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
OPEN_TREE_CLONE, AT_EMPTY_PATH, AT_FDCWD = 1, 0x1000, -100
MOVE_MOUNT_F_EMPTY_PATH = 4
MOUNT_ATTR_IDMAP = 0x00100000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
# Layers one box may stack: each lower costs overlayfs a lookup per path it resolves, and their
# descriptors' names must fit the one page mount(2) takes as options.
MAX_LAYERS = 64
USERNS_DEADLINE = 5.0  # seconds a helper may take to enter its user namespace

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class LayerBusy(JailError):
    """A writable layer cannot be sealed: a file on it is open for writing."""


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]  # fmt: skip


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def clone_tree(path: str) -> int:
    """A detached copy of the mount at `path` (a bind of that directory alone), as a
    descriptor: attached nowhere, it goes when the descriptor and every user of it do."""
    fd = _libc.syscall(SYS_OPEN_TREE, AT_FDCWD, os.fsencode(path), OPEN_TREE_CLONE | os.O_CLOEXEC)
    return _check(fd, f"open_tree {path}")


def idmapped(path: str, userns: int) -> int:
    """A detached copy of `path` whose files show with the ids the user namespace maps them
    to (and are written with the ids they map from)."""
    fd = clone_tree(path)
    attr = _MountAttr(MOUNT_ATTR_IDMAP, 0, 0, userns)
    try:
        _check(_libc.syscall(SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH, ctypes.byref(attr),
                             ctypes.sizeof(attr)), f"idmapping {path}")  # fmt: skip
    except BaseException:
        os.close(fd)
        raise
    return fd


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str) -> None:
    enc = [None if v is None else v.encode() for v in (source, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mounting {target}")


def used_bytes(path: str) -> int:
    """Bytes in use on the file system of `path` (a layer's tmpfs: what the layer holds)."""
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class Frozen:
    """A layer no one writes again: `path` is its directory, in a sealed tmpfs (`memory`, the
    tmpfs's mount point, while it is there) or on disk."""

    def __init__(self, id: str, path: str, size: int, memory: str | None = None) -> None:
        self.id = id
        self.path = path
        self.size = size
        self.memory = memory

    def __repr__(self) -> str:
        return f"Frozen({self.id}, {self.size} bytes, {'memory' if self.memory else 'disk'})"

    def moved_to(self, path: str) -> None:
        """It is on disk at `path` now: boxes stacked from now on read it there, and its tmpfs
        goes once the boxes that stacked it before have."""
        self.path = path
        self.drop()

    def drop(self) -> None:
        """Detach its tmpfs (if it is in memory): its memory is freed once no box stacks it."""
        if self.memory is not None:
            workdir.unmount_all(self.memory)
            with contextlib.suppress(OSError):
                os.rmdir(self.memory)
            self.memory = None


class Writable:
    """A box's writable layer: a tmpfs at `path` holding `upper/` (what the box writes) and
    `work/` (overlayfs' own)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.id = os.path.basename(path)

    @property
    def upper(self) -> str:
        return f"{self.path}/upper"

    def used(self) -> int:
        return used_bytes(self.path)

    def seal(self) -> Frozen:
        """Make it read-only for good and return it as a frozen layer; LayerBusy (and nothing
        changed) if a file on it is open for writing."""
        try:
            _mount(None, self.path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "")
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                raise LayerBusy(
                    "a process in the session holds a file of its work dir open for writing; "
                    "close it (or end that process) and try again"
                ) from None
            raise JailError(f"cannot seal a layer: {exc}") from exc
        return Frozen(self.id, self.upper, self.used(), memory=self.path)

    def unseal(self) -> None:
        """Writable again (a seal whose box could not be moved onto a new layer is undone)."""
        _mount(None, self.path, None, MS_REMOUNT | MS_NOSUID | MS_NODEV, "")

    def discard(self) -> None:
        """Detach its tmpfs: its memory is freed once no box uses it."""
        workdir.unmount_all(self.path)
        with contextlib.suppress(OSError):
            os.rmdir(self.path)


class Layers:
    """The layers of one jail's live boxes: writable ones under `root`, the overlays that stack
    them under `root/merged`, and a user namespace per box uid for the idmapped mounts."""

    def __init__(self, root: Path, owner: int, size: int, files: int) -> None:
        self.root = root
        self.owner = owner
        self.size = size
        self.files = files
        self._userns: dict[int, int] = {}
        self.empty = str(root / "empty")  # the bottom of every stack (overlayfs needs a lower)

    def start(self, probe_uid: int) -> Layers:
        """Make its directories and stack a sealed layer as `probe_uid` would see it: what this
        kernel does not support (overlayfs, idmapped mounts of tmpfs or of overlay's layers) is
        said now, as JailUnavailable, not at a session's first snapshot."""
        try:
            for d in (self.root, self.root / "merged", Path(self.empty)):
                d.mkdir(mode=0o700 if d != Path(self.empty) else 0o755)
        except OSError as exc:
            raise JailUnavailable(f"cannot make the layers' directory: {exc}") from exc
        try:
            first = self.writable()
            frozen = first.seal()
            second = self.writable()
            with self.stacked([frozen], second, probe_uid):
                pass
            second.discard()
            frozen.drop()
        except (OSError, JailError) as exc:
            self.close()
            raise JailUnavailable(
                f"layers (overlayfs over idmapped tmpfs) do not work: {exc}"
            ) from exc
        return self

    def close(self) -> None:
        for fd in self._userns.values():
            os.close(fd)
        self._userns = {}
        workdir.unmount_all(str(self.root))

    def writable(self) -> Writable:
        path = self.root / secrets.token_hex(8)
        path.mkdir(mode=0o700)
        options = f"size={self.size},nr_inodes={self.files},mode=0700"
        try:
            workdir.mount_tmpfs(str(path), options)
            upper = path / "upper"
            upper.mkdir(mode=0o700)
            os.chown(upper, self.owner, self.owner)
            (path / "work").mkdir(mode=0o700)
        except OSError as exc:
            Writable(str(path)).discard()
            raise JailError(f"cannot make a writable layer: {exc}") from exc
        return Writable(str(path))

    def stack(self, lowers: Sequence[Frozen], upper: Writable, uid: int) -> str:
        """An overlay of `upper` over `lowers` (the first on top) as `uid` sees it, mounted at
        a new path under `root/merged`, which it returns (named after the uid, so that the
        host's mount table says whose it is, as a plain work dir's does)."""
        if len(lowers) > MAX_LAYERS:
            raise JailError(f"a box stacks at most {MAX_LAYERS} layers, not {len(lowers)}")
        target = self.root / "merged" / f"work-{uid}-{secrets.token_hex(8)}"
        target.mkdir(mode=0o700)
        userns = self.userns(uid)
        fds: list[int] = []
        try:
            fds = [idmapped(layer.path, userns) for layer in lowers]
            fds.append(clone_tree(self.empty))
            fds.append(idmapped(upper.path, userns))
            paths = [f"/proc/self/fd/{fd}" for fd in fds[:-1]]
            top = f"/proc/self/fd/{fds[-1]}"
            options = f"lowerdir={':'.join(paths)},upperdir={top}/upper,workdir={top}/work"
            _mount("overlay", str(target), "overlay", MS_NOSUID | MS_NODEV, options)
        except OSError as exc:
            with contextlib.suppress(OSError):
                target.rmdir()
            raise JailError(f"cannot stack a box's layers: {exc}") from exc
        finally:
            for fd in fds:  # the overlay holds its own copies of the layers' mounts
                os.close(fd)
        return str(target)

    @contextlib.contextmanager
    def stacked(self, lowers: Sequence[Frozen], upper: Writable, uid: int) -> Iterator[str]:
        target = self.stack(lowers, upper, uid)
        try:
            yield target
        finally:
            unstack(target)

    def userns(self, uid: int) -> int:
        """A user namespace mapping `owner` to `uid` (and root to root, as overlayfs writes
        whiteouts as root), kept for the idmapped mounts of every box of that uid."""
        if uid not in self._userns:
            self._userns[uid] = make_userns(f"0 0 1\n{self.owner} {uid} 1\n")
        return self._userns[uid]


def unstack(target: str) -> None:
    """Detach a box's overlay (it goes once nothing in the box uses it) and its mount point."""
    workdir.unmount_all(target)
    with contextlib.suppress(OSError):
        os.rmdir(target)


def make_userns(mapping: str) -> int:
    """A user namespace with `mapping` as its uid and gid maps, by descriptor: entered by a
    helper (`unshare --user`, waiting on its stdin) that is gone once the maps are written. A
    process, not this one: a threaded process cannot unshare a user namespace."""
    own = os.readlink("/proc/self/ns/user")
    helper = subprocess.Popen(
        [shutil.which("unshare") or "/usr/bin/unshare", "--user", "--", "/bin/cat"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + USERNS_DEADLINE
        while os.readlink(f"/proc/{helper.pid}/ns/user") == own:
            if helper.poll() is not None or time.monotonic() > deadline:
                raise JailUnavailable("cannot make a user namespace for idmapped mounts")
            time.sleep(0.0005)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{helper.pid}/{name}", "w") as f:
                f.write(mapping)
        return os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise JailUnavailable(f"cannot make a user namespace for idmapped mounts: {exc}") from exc
    finally:
        helper.kill()
        helper.wait()
        if helper.stdin is not None:
            helper.stdin.close()


def copy_layer(src: str, dst: Path) -> int:
    """Copy the frozen layer `src` to `dst` (absent; made whole or not at all), keeping what
    overlayfs reads in it: owners, modes, links, whiteouts (0:0 devices) and its trusted.*
    attributes. Returns the bytes it holds on disk."""
    partial = dst.with_name(f".{dst.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        done = subprocess.run(
            [shutil.which("cp") or "/usr/bin/cp", "-a", "--no-target-directory", src, str(partial)],
            capture_output=True, text=True, env={"LC_ALL": "C"},
        )  # fmt: skip
        if done.returncode != 0:
            raise OSError(done.stderr.strip()[-500:] or f"cp exited {done.returncode}")
        size = disk_usage(partial)
        os.rename(partial, dst)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return size


def disk_usage(root: Path) -> int:
    """Bytes the files below `root` take on disk (links not followed)."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*filenames, *dirnames):
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total
