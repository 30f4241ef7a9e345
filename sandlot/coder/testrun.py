"""A repository's test command, run in the sandbox: the repo's files go into a fresh box as
`files`, the command runs as `/bin/bash -c CMD` with the sandbox runtimes on PATH, no network,
the usual limits. The tests of code a model just wrote are untrusted code like any other.

Goes through the executor (its admission: slots, queue); never around it.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sandlot.coder.task import TEST_TIMEOUT
from sandlot.errors import InvalidRequest, JailError, TooLarge
from sandlot.executor import TIME_LIMITS, Executor
from sandlot.repos import Owner, as_owner

TAIL_BYTES = 8192
# Directories never shipped when the repository is not a git checkout (git honours .gitignore).
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
             ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox"}  # fmt: skip


@dataclass(slots=True)
class TestOutcome:
    __test__ = False  # not a pytest test class, despite the name
    passed: bool
    exit_code: int | None
    signal: int | None
    limit: str | None
    wall_time: float
    stdout: str
    stderr: str
    error: str | None = None  # the sandbox could not run the command at all

    @property
    def status(self) -> int:
        """A shell-style exit status: the command's, 124 past a time limit, 128+N on signal N."""
        if self.error is not None:
            return 125
        if self.limit in TIME_LIMITS:
            return 124
        if self.signal is not None:
            return 128 + self.signal
        return self.exit_code if self.exit_code is not None else 125

    def summary(self) -> str:
        if self.error:
            return f"the sandbox could not run the tests: {self.error}"
        if self.passed:
            return f"tests passed in {self.wall_time:.1f}s"
        if self.limit:
            return f"tests stopped by the {self.limit} limit after {self.wall_time:.1f}s"
        return f"tests failed: exit status {self.status}"

    def tail(self, limit: int = TAIL_BYTES) -> str:
        text = self.stdout + (("\n" + self.stderr) if self.stderr.strip() else "")
        if self.error:
            text = f"{text}\n{self.error}".strip()
        data = text.encode()
        if len(data) <= limit:
            return text
        return "[...]\n" + data[-limit:].decode(errors="ignore")

    def to_dict(self, full: bool = False) -> dict[str, object]:
        """The record kept in results (an output tail), or `full` (stdout and stderr whole)."""
        out: dict[str, object] = {
            "passed": self.passed, "exit_code": self.exit_code, "signal": self.signal,
            "limit": self.limit, "wall_time": round(self.wall_time, 3), "error": self.error,
            "status": self.status,
        }  # fmt: skip
        if full:
            out.update(stdout=self.stdout, stderr=self.stderr)
        else:
            out["output_tail"] = self.tail()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TestOutcome:
        def num(key: str) -> int | None:
            value = data.get(key)
            return int(value) if isinstance(value, int | float) else None

        wall = data.get("wall_time")
        return cls(
            passed=bool(data.get("passed")), exit_code=num("exit_code"), signal=num("signal"),
            limit=str(data["limit"]) if data.get("limit") else None,
            wall_time=float(wall) if isinstance(wall, int | float) else 0.0,
            stdout=str(data.get("stdout") or ""), stderr=str(data.get("stderr") or ""),
            error=str(data["error"]) if data.get("error") else None,
        )  # fmt: skip


def collect_files(root: str | Path, max_bytes: int, owner: Owner | None = None
                  ) -> dict[str, bytes]:  # fmt: skip
    """The repository's files (tracked and untracked-but-not-ignored), keyed by relative path.

    Symlinks are skipped, never followed: the box must get the repository, not whatever a link in
    it points at on this host. Past `max_bytes` in all: TooLarge naming the biggest files.
    """
    root = Path(root)
    if not root.is_dir():
        raise InvalidRequest(f"{root} is not a directory")
    names = _git_files(root, owner)
    if names is None:
        names = _walk(root)
    files: dict[str, bytes] = {}
    sizes: list[tuple[int, str]] = []
    total = 0
    for name in names:
        path = root / name
        try:
            st = path.lstat()
        except OSError:
            continue  # deleted in the working tree
        if not stat.S_ISREG(st.st_mode):
            continue
        total += st.st_size
        sizes.append((st.st_size, name))
        if total > max_bytes:
            biggest = ", ".join(f"{n} ({s >> 10} KiB)" for s, n in sorted(sizes)[-3:][::-1])
            raise TooLarge(
                f"the repository's files total more than the {max_bytes >> 20} MiB the sandbox "
                f"accepts (largest: {biggest}); ignore build outputs and data in .gitignore"
            )
        files[name] = path.read_bytes()
    return files


def _git_files(root: Path, owner: Owner | None) -> list[str] | None:
    env = {**os.environ, "HOME": owner.home} if owner is not None else None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "."],
            capture_output=True, timeout=60, stdin=subprocess.DEVNULL, env=env, **as_owner(owner),
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = [n for n in done.stdout.decode(errors="surrogateescape").split("\0") if n]
    return [n for n in dict.fromkeys(names) if not n.startswith(".aider")]


def _walk(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel = Path(dirpath).relative_to(root)
        out += [(rel / f).as_posix() for f in sorted(filenames)]
    return out


def default_timeout(executor: Executor) -> float:
    """TEST_TIMEOUT, or the server's largest run time when that is less."""
    return min(TEST_TIMEOUT, executor.config.max_run_timeout)


async def run_tests(
    executor: Executor, root: str | Path, cmd: str, timeout: float | None = None,
    owner: Owner | None = None,
) -> TestOutcome:  # fmt: skip
    """Run `cmd` over the files of the repository at `root`, in a fresh box (its file list from
    git run as `owner`, when given)."""
    files = collect_files(root, executor.config.max_files_bytes, owner)
    return await run_files(executor, files, cmd, timeout)


async def run_files(
    executor: Executor, files: dict[str, bytes], cmd: str, timeout: float | None = None
) -> TestOutcome:
    """Run `cmd` over `files` (relative path -> content) in a fresh box."""
    if timeout is None:
        timeout = default_timeout(executor)
    try:
        outcome = await executor.run_shell(cmd, files, timeout)
    except JailError as exc:
        return TestOutcome(False, None, None, None, 0.0, "", "", error=str(exc))
    return TestOutcome(
        passed=outcome.ok,
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        limit=str(outcome.limit) if outcome.limit else None,
        wall_time=outcome.wall_time,
        stdout=outcome.stdout.decode(errors="replace"),
        stderr=outcome.stderr.decode(errors="replace"),
    )
