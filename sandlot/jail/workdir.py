"""The work dir of a slot: files in before a run, files back out after it, wiped between runs.

The work dir is a size-capped tmpfs owned by the slot's uid. It is touched only while no process
of the slot runs, and read back without following any link the program may have planted.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import PurePosixPath

from sandlot.errors import InvalidRequest, NotFound, TooLarge, UnsafePath

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
        put_file(root, name, data, uid, gid)


def put_file(root: str, name: str, data: bytes, uid: int, gid: int) -> None:
    """Write one file under root, making its directories (owned by uid), as the work dir's
    owner would see it: every component is opened relative to its parent with O_NOFOLLOW, so a
    link planted anywhere on the way (a box can change its work dir at any moment) is refused
    (UnsafePath), never followed out of the work dir."""
    rel = safe_relpath(name)
    with _walk_errors(name):
        parent = _open_dir(root, rel.parts[:-1], uid, gid)
        try:
            fd = os.open(
                rel.parts[-1],
                os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                0o755,
                dir_fd=parent,
            )
        finally:
            os.close(parent)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePath(f"{name!r} exists and is not a regular file")
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchown(fd, uid, gid)
        finally:
            os.close(fd)


def get_file(root: str, name: str, cap: int) -> bytes:
    """One regular file under root, read without following links (see put_file); TooLarge past
    `cap` bytes, NotFound if it is missing or not a regular file."""
    rel = safe_relpath(name)
    with _walk_errors(name):
        parent = _open_dir(root, rel.parts[:-1])
        try:
            fd = os.open(
                rel.parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                dir_fd=parent,
            )  # fmt: skip
        finally:
            os.close(parent)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotFound(f"{name!r} is not a regular file")
            if st.st_size > cap:
                raise TooLarge(f"{name!r} is larger than the {cap} bytes that can be fetched")
            return _read(fd, st.st_size)
        finally:
            os.close(fd)


def _open_dir(root: str, parts: tuple[str, ...], uid: int = -1, gid: int = -1) -> int:
    """A descriptor of root/parts, each component opened with O_NOFOLLOW relative to the one
    before; missing directories are made (owned by uid) when a uid is given."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                nfd = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if uid < 0:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened below
                    os.mkdir(part, 0o755, dir_fd=fd)
                nfd = os.open(part, flags, dir_fd=fd)
                os.fchown(nfd, uid, gid)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _walk_errors(name: str) -> Iterator[None]:
    """OSErrors of a walk as what they mean to the caller."""
    try:
        yield
    except FileNotFoundError:
        raise NotFound(f"{name!r} does not exist in the work dir") from None
    except IsADirectoryError:
        raise InvalidRequest(f"{name!r} is a directory") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise UnsafePath(
                f"{name!r} is not allowed: a component is a symbolic link, or not a directory"
            ) from None
        if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise TooLarge(f"the work dir is full: cannot write {name!r}") from None
        raise


def _read(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0 and (chunk := os.read(fd, left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


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
                data = _read(fd, st.st_size)
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
    unmount(root)
    mount_tmpfs(root, options)


def unmount(root: str) -> None:
    """Detach the mount on `root`, as `umount -l` does: it goes once nothing uses it."""
    if _libc.umount2(root.encode(), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unmounting {root}: {os.strerror(err)}")


def unmount_all(root: str) -> None:
    """Detach every mount at or below `root`, deepest first: whatever made them, and whether or
    not it is still there to undo its own."""
    top = os.path.realpath(root)
    with open("/proc/self/mountinfo", "rb") as f:
        points = [_unescape(line.split()[4]) for line in f]
    for point in sorted(
        (p for p in points if p == top or p.startswith(top + "/")), key=len, reverse=True
    ):
        with contextlib.suppress(OSError):
            unmount(point)


def _unescape(field: bytes) -> str:
    """A mountinfo path: space, tab, newline and backslash are written as octal escapes."""
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), field).decode(
        errors="surrogateescape"
    )


def mount_tmpfs(root: str, options: str) -> None:
    """Mount a tmpfs (nosuid, nodev) on the directory `root`."""
    if _libc.mount(b"sandlot", root.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()):
        err = ctypes.get_errno()
        raise OSError(err, f"mounting a tmpfs on {root}: {os.strerror(err)}")
