"""The one way sandlot runs git on a repository of the machine: as the repository's owner on a
server (`Owner`), with a timeout, and errors as `GitFailed` / `GitUnavailable`.

Two kinds of call differ only in which configuration git may read. The coder works in the
user's own repository and commits there, so it reads the user's configuration (identity,
filters they set up). A repository that is only read to be bundled for a box (`sandlot.repos`)
may be anyone's: its git runs with no system or global configuration and a fixed PATH, so
nothing outside the repository changes what it does.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from sandlot.errors import GitFailed, GitUnavailable, git_command
from sandlot.repos.owner import Owner, as_owner

GIT_TIMEOUT = 300.0


def run_git(repo: str | Path, *args: str, owner: Owner | None = None, check: bool = True,
        timeout: float = GIT_TIMEOUT, user_config: bool = True,
        env: dict[str, str] | None = None) -> str:  # fmt: skip
    """git in `repo` as `owner` (else as ourselves); its output. `user_config=False` gives git
    the repository's own configuration only."""
    if user_config:
        base = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        if owner is not None:
            base["HOME"] = owner.home  # that user's git config, not root's
    else:
        base = {
            "PATH": "/usr/bin:/bin", "HOME": owner.home if owner else "/nonexistent",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
        }  # fmt: skip
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, env=base | (env or {}), **as_owner(owner),
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitUnavailable(f"`{git_command(args)}` could not run here: {exc}") from exc
    if check and done.returncode != 0:
        raise GitFailed(args, repo, done.stderr or done.stdout)
    return done.stdout
