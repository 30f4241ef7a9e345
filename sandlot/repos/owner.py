"""Whose uid a server's coding task runs as: the repository owner's, never root's.

A server runs as root (the jail needs it); `POST /code` runs git and Aider on a repository of
the machine. Done as root, a request could make root run a repository's hooks, filters and
Aider's edits anywhere root can write. So on a server every git and Aider process of a task
runs as the owner of the repository's top directory (with that user's primary group, no other
groups and that user's HOME), and a repository owned by root is refused. The CLI needs none of
this: it runs as whoever typed the command.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandlot.errors import Forbidden, InvalidRequest

if TYPE_CHECKING:
    from sandlot.config import Config


@dataclass(frozen=True, slots=True)
class Owner:
    uid: int
    gid: int
    home: str

    @classmethod
    def of(cls, repo: str | Path) -> Owner | None:
        """The owner of `repo` to run as, or None when this process is not root (it then runs
        as itself, which is not root either)."""
        if os.geteuid() != 0:
            return None
        st = os.stat(repo)
        if st.st_uid == 0:
            raise Forbidden(
                f"{repo} is owned by root: this server runs git and Aider as the repository's "
                "owner and never as root; give the repository to a user (chown -R)"
            )
        try:
            user = pwd.getpwuid(st.st_uid)
        except KeyError:  # a uid without a passwd entry: its files' group, no home
            return cls(st.st_uid, st.st_gid, "/nonexistent")
        return cls(st.st_uid, user.pw_gid, user.pw_dir)

    def popen(self) -> dict[str, Any]:
        """subprocess arguments that start a process as this user and no one else."""
        return {"user": self.uid, "group": self.gid, "extra_groups": [], "umask": 0o022}

    def give(self, path: Path) -> None:
        """Hand `path` and everything under it (made by us, as root) to this user."""
        os.chown(path, self.uid, self.gid, follow_symlinks=False)
        for dirpath, dirnames, filenames in os.walk(path):
            for name in (*dirnames, *filenames):
                os.chown(os.path.join(dirpath, name), self.uid, self.gid, follow_symlinks=False)


def as_owner(owner: Owner | None) -> dict[str, Any]:
    """subprocess arguments for a process of `owner` (none: this process's own user)."""
    return owner.popen() if owner is not None else {}


def confined(config: Config, repo: str, what: str) -> Path:
    """`repo`, resolved, if it lies under one of `coder_roots`; with none, `what` is off."""
    roots = [Path(r).resolve() for r in config.coder_roots.split(":") if r]
    if not roots:
        raise Forbidden(
            f"{what} is off for repositories on this server: it works only on those under the "
            "directories named by the coder_roots setting (SANDLOT_CODER_ROOTS), and none is"
        )
    real = Path(repo).resolve()
    if not any(real.is_relative_to(root) for root in roots):
        raise InvalidRequest(f"{repo} is outside the directories this server may work on")
    if not real.is_dir():
        raise InvalidRequest(f"{repo} is not a directory")
    return real
