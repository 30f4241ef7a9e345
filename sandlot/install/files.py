"""Stamps (the spec a runtime was built from, written last) and putting built trees and files
in place: renamed in whole, readable by the box's uids."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

from sandlot.install.step import Setup, SetupError

STAMP = ".sandlot-stamp"


def stamp_matches(target: Path, spec: str) -> bool:
    try:
        return (target / STAMP).read_text() == spec
    except OSError:
        return False


def write_stamp(target: Path, spec: str) -> None:
    """The last act of a build: until the stamp is there, a rerun builds again."""
    (target / STAMP).write_text(spec)
    os.chmod(target / STAMP, 0o644)


def read_stamp(target: Path) -> list[str]:
    try:
        return (target / STAMP).read_text().split()
    except OSError:
        return []


def prepare_runtime(setup: Setup) -> None:
    for parent in setup.runtime.resolve().parents:  # the box's uids must get through each
        if parent.exists() and not parent.stat().st_mode & 0o001:
            raise SetupError(
                f"{parent} is closed to other users, so the sandbox's uids "
                f"could not reach {setup.runtime}; choose another --runtime-dir"
            )
    setup.runtime.mkdir(parents=True, exist_ok=True)
    os.chmod(setup.runtime, 0o755)


def make_world_readable(root: Path) -> None:
    """Dirs 0755, files 0644, or 0755 when executable: the box runs as uids that own nothing.

    Done explicitly because root's umask (and what pip or go chose) decides the modes otherwise.
    """
    for dirpath, _dirnames, filenames in os.walk(root):  # does not follow symlinks
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):  # a link's mode is its target's business
                os.chmod(path, 0o755 if mode & 0o111 else 0o644)


def replace_dir(new: Path, final: Path) -> None:
    """Put a finished build in place of the old one (rename: never a half-built final dir),
    readable by the boxes' uids."""
    make_world_readable(new)
    if final.exists() or final.is_symlink():
        old = final.with_name(f".{final.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        try:
            final.rename(old)
        except OSError as exc:
            # overlayfs cannot rename a directory of a lower layer (a `sandlot setup` in a later
            # layer of a container image): it is removed in place; the stamp is still written
            # last, so an interrupted run still rebuilds it.
            if exc.errno != errno.EXDEV:
                raise
            shutil.rmtree(final)
        else:
            shutil.rmtree(old)
    new.rename(final)


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def install_file(made: Path, final: Path) -> None:
    """Put a file made by nobody in place as root's, world-readable, atomically."""
    new = final.with_name(f".{final.name}.new")
    if made != new:
        shutil.move(made, new)
    os.chown(new, 0, 0)
    os.chmod(new, 0o644)
    os.replace(new, final)


def install_text(setup: Setup, final: Path, text: str) -> bool:
    """Write a text file of the runtime dir (and its dir) unless it already holds `text`;
    whether it was written."""
    try:
        if final.read_text() == text:
            return False
    except OSError:
        pass
    prepare_runtime(setup)
    final.parent.mkdir(exist_ok=True)
    os.chmod(final.parent, 0o755)
    new = final.with_name(f".{final.name}.new")
    new.write_text(text)
    install_file(new, final)
    return True
