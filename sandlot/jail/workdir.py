"""The work dir of a slot: files in before a run, files back out after it, wiped between runs.

The work dir is a size-capped tmpfs owned by the slot's uid. It is touched only while no process
of the slot runs, and read back without following any link the program may have planted.
"""

from __future__ import annotations

import ctypes
import os
import stat
from pathlib import PurePosixPath

from sandlot.errors import UnsafePath

# Deeper than this a wipe gives up walking (each level holds a descriptor and a stack frame) and
# the work dir is mounted afresh instead; deeper than this nothing is read back either.
MAX_DEPTH = 64
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
_libc = ctypes.CDLL(None, use_errno=True)


def safe_relpath(path: str) -> PurePosixPath:
    """A relative path inside the work dir, or UnsafePath saying why not."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or ".." in p.parts or "\0" in path:
        raise UnsafePath(
            f"file path {path!r} is not allowed: use a relative path inside the work dir "
            "(no leading '/', no '..')"
        )
    if p.parts in ((), (".",)):
        raise UnsafePath(f"file path {path!r} names the work dir itself")
    return p


def write_files(root: str, files: dict[str, bytes], uid: int, gid: int) -> None:
    for name, data in files.items():
        rel = safe_relpath(name)
        target = root
        for part in rel.parts[:-1]:
            target = os.path.join(target, part)
            if not os.path.isdir(target):
                os.mkdir(target, 0o755)
                os.chown(target, uid, gid)
        path = os.path.join(target, rel.parts[-1])
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o755)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchown(fd, uid, gid)
        finally:
            os.close(fd)


def read_back(root: str, names: tuple[str, ...], budget: int) -> dict[str, bytes]:
    """Regular files named (or under directories named) in `names`, keyed by their relative path.

    Every component is opened with O_NOFOLLOW relative to its parent, so a symlink anywhere on the
    way yields nothing. Missing entries are skipped, as SandboxFusion does. At most `budget` bytes
    are returned in all.
    """
    out: dict[str, bytes] = {}
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            try:
                rel = safe_relpath(name)
            except UnsafePath:
                continue
            budget = _collect(root_fd, rel.parts, name, out, budget, 0)
    finally:
        os.close(root_fd)
    return out


def _collect(
    dir_fd: int, parts: tuple[str, ...], key: str, out: dict[str, bytes], budget: int, depth: int
) -> int:
    fd = -1
    depth += len(parts)
    if depth > MAX_DEPTH:
        return budget
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (0 if last else os.O_DIRECTORY)
            nfd = os.open(part, flags, dir_fd=dir_fd if fd < 0 else fd)
            if fd >= 0:
                os.close(fd)
            fd = nfd
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            if st.st_size <= budget:
                chunks, left = [], st.st_size
                while left > 0 and (chunk := os.read(fd, left)):
                    chunks.append(chunk)
                    left -= len(chunk)
                data = b"".join(chunks)
                out[key] = data
                budget -= len(data)
        elif stat.S_ISDIR(st.st_mode):
            for entry in sorted(os.listdir(fd)):
                budget = _collect(fd, (entry,), f"{key.rstrip('/')}/{entry}", out, budget, depth)
    except OSError:
        pass  # missing, a symlink (ELOOP), or unreadable: nothing is returned for it
    finally:
        if fd >= 0:
            os.close(fd)
    return budget


class TooDeep(OSError):
    """The tree is deeper than a wipe walks."""


def wipe(root: str) -> None:
    """Remove everything under root, never following links; TooDeep past MAX_DEPTH levels."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _wipe_fd(fd, 0)
    finally:
        os.close(fd)


def _wipe_fd(dir_fd: int, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise TooDeep(f"the work dir is more than {MAX_DEPTH} levels deep")
    for entry in os.listdir(dir_fd):
        st = os.lstat(entry, dir_fd=dir_fd)
        if stat.S_ISDIR(st.st_mode):
            sub = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                _wipe_fd(sub, depth + 1)
            finally:
                os.close(sub)
            os.rmdir(entry, dir_fd=dir_fd)
        else:
            os.unlink(entry, dir_fd=dir_fd)


def remount(root: str, options: str) -> None:
    """Replace the work dir's tmpfs with an empty one (the old one goes once nothing uses it)."""
    path = root.encode()
    for result in (
        _libc.umount2(path, MNT_DETACH),
        _libc.mount(b"sandlot", path, b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()),
    ):
        if result != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"remounting {root}: {os.strerror(err)}")
