"""The mounts of one repository run: a size-capped tmpfs of its own, and an overlay of the
repository's checkout over its cached environment with that tmpfs as the writable layer.

N runs of one repository share the checkout's and the environment's bytes on disk; each writes
only into its own tmpfs (capped, and charged to its box's memory), which goes when the run does.
Lower layers are never written: overlayfs copies a file up into the run's layer before a write.

Everything here is a host mount made by root and bound into one box (RunSpec.binds); nothing
of it is followed or written on the host once a box has used it, but removed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import JailError
from sandlot.jail import mount_tmpfs, unmount_all
from sandlot.repos.store import alive

MS_NOSUID, MS_NODEV = 2, 4
_libc = ctypes.CDLL(None, use_errno=True)


def mount_overlay(target: Path, lowers: list[Path], upper: Path, work: Path) -> None:
    """An overlay at `target`: `lowers` first on top, `upper` the writable layer."""
    options = f"lowerdir={':'.join(map(str, lowers))},upperdir={upper},workdir={work}"
    if any(c in options for c in "\n\0") or any("," in str(p) or ":" in str(p) for p in lowers):
        raise JailError(f"a layer path cannot go into overlay options: {options!r}")
    if _libc.mount(b"overlay", bytes(target), b"overlay", MS_NOSUID | MS_NODEV, options.encode()):
        err = ctypes.get_errno()
        raise JailError(f"cannot mount the repository's overlay: {os.strerror(err)}")


@dataclass(slots=True)
class RunDir:
    """One run's place under `runs/`: its tmpfs (`scratch`), and the overlay (`tree`) if any."""

    path: Path
    scratch: Path
    tree: Path

    @property
    def upper(self) -> Path:
        return self.scratch / "upper"


@contextlib.contextmanager
def run_dir(runs: Path, size: int) -> Iterator[RunDir]:
    """A fresh directory with a tmpfs of `size` bytes, everything below it unmounted and removed
    when the block ends."""
    path = runs / secrets.token_hex(8)
    path.mkdir(parents=True, mode=0o700)
    scratch, tree = path / "scratch", path / "tree"
    scratch.mkdir()
    tree.mkdir()
    try:
        try:
            mount_tmpfs(str(scratch), f"size={size},mode=0700")
        except OSError as exc:
            raise JailError(f"cannot mount a run's layer: {exc}") from exc
        yield RunDir(path, scratch, tree)
    finally:
        unmount_all(str(path))
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def overlay(runs: Path, lowers: list[Path], size: int) -> Iterator[RunDir]:
    """A run's writable tree: `lowers` (top first) under a tmpfs layer of `size` bytes."""
    with run_dir(runs, size) as rd:
        work = rd.scratch / "work"
        rd.upper.mkdir()
        work.mkdir()
        # The tree's root is the upper layer's directory: as writable for every box as the
        # repository's own root is (layers are made so: normalise() below).
        rd.upper.chmod(0o777)
        mount_overlay(rd.tree, lowers, rd.upper, work)
        yield rd


def clean_runs(runs: Path) -> None:
    """What runs of processes that died left (`runs/PID/`): their mounts and directories. A
    live process's are its own (a server's workers share the store)."""
    if not runs.is_dir():
        return
    for child in runs.iterdir():
        if child.name.isdigit() and alive(int(child.name)):
            continue
        unmount_all(str(child))
        shutil.rmtree(child, ignore_errors=True)


def normalise(src: Path, dst: Path) -> int:
    """Copy the layer `src` (a box wrote it) to `dst`, as a layer any box may read and, by
    copy-up, write: directories 0777, files 0666 or 0777, owned by root; no device, pipe,
    socket, overlay whiteout, set-uid bit or extended attribute; links kept as links, never
    followed. Returns the bytes copied."""
    total = 0
    dst.mkdir(mode=0o777)
    dst.chmod(0o777)
    stack = [(src, dst)]
    while stack:
        s, d = stack.pop()
        with os.scandir(s) as entries:
            for entry in entries:
                target = d / entry.name
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), target)
                elif entry.is_dir(follow_symlinks=False):
                    target.mkdir()
                    target.chmod(0o777)
                    stack.append((Path(entry.path), target))
                elif entry.is_file(follow_symlinks=False):
                    mode = entry.stat(follow_symlinks=False).st_mode
                    shutil.copyfile(entry.path, target, follow_symlinks=False)
                    target.chmod(0o777 if mode & 0o111 else 0o666)
                    total += target.stat().st_size
    return total


def open_up(root: Path) -> None:
    """Make a tree root wrote (a checkout) a layer any box may read and write by copy-up."""
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o777)
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if not os.path.islink(path):
                os.chmod(path, 0o777 if st.st_mode & 0o111 else 0o666)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]


def disk_usage(root: Path) -> int:
    """Bytes of the regular files below root (links not followed)."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                total += st.st_blocks * 512
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return total
