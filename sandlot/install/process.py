"""Running the installer's commands: output kept for the error, progress on long ones, and
the unprivileged uid a runtime is checked as."""

from __future__ import annotations

import contextvars
import os
import selectors
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from sandlot.install.step import SetupError

CHECK_UID = 65534  # nobody: proves a runtime works for a uid that owns none of it
PATH = "/usr/bin:/bin"
# What the installer's own commands (apt, dpkg and their maintainer scripts, pip, npm, the
# compilers) are found in: Debian's dirs only. An operator's PATH may put another toolchain
# first (rustup's ~/.cargo/bin, /usr/local/go/bin, a JDK's bin, pyenv's shims, /usr/local/bin):
# set-up must build with, and stamp, what the boxes run and a fresh machine has.
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# Variables that point a toolchain at another installation or setting than sandlot's own.
TOOLCHAIN_VARIABLES = (
    "GOROOT", "GOPATH", "GOFLAGS", "GOTOOLCHAIN", "GO111MODULE", "GOMODCACHE", "GOCACHE",
    "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GOSUMDB", "CARGO_HOME", "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN", "RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "CARGO_BUILD_TARGET",
    "JAVA_HOME", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH",
    "NODE_OPTIONS", "NODE_PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME",
)  # fmt: skip
HEARTBEAT = 30.0  # seconds of a long command between two progress lines


# Where run() reports the progress of a long command: set per step by run_step.
PROGRESS: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "progress", default=None
)


def host_env(**extra: str) -> dict[str, str]:
    """The operator's environment (proxies, apt's and pip's settings) for a command of set-up,
    with Debian's PATH and no variable that points a toolchain elsewhere; then `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in TOOLCHAIN_VARIABLES}
    return {**env, "PATH": SYSTEM_PATH, **extra}


def run(
    argv: list[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    excerpt: Callable[[list[str]], list[str]] | None = None,
) -> str:
    """Run a command, returning its output; on failure raise with the part of its output that
    says why (`excerpt`, by default the last lines). A long command reports progress: every
    HEARTBEAT seconds, its latest line of output."""
    # Unbuffered, so that a Python tool's progress (pip's) comes as it goes, not at its end.
    env = {**(host_env() if env is None else env), "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    except OSError as exc:
        raise SetupError(f"cannot run {argv[0]}: {exc}") from exc
    with proc:  # closes both pipes
        stdout, lines = _drain(proc, argv, PROGRESS.get())
    if proc.wait() != 0:
        shown = (excerpt or tail)(lines) or tail(lines)
        raise SetupError(f"`{' '.join(argv)}` exited with {proc.returncode}:\n" + "\n".join(shown))
    return stdout


def _drain(
    proc: subprocess.Popen[bytes], argv: list[str], report: Callable[[str], None] | None
) -> tuple[str, list[str]]:
    """Read both pipes to their end: stdout, and the lines of both in the order they came."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd = proc.stdout.fileno()
    data: dict[int, bytearray] = {out_fd: bytearray(), proc.stderr.fileno(): bytearray()}
    unsplit = {fd: 0 for fd in data}  # where each stream's unfinished line starts
    lines: list[str] = []
    started = last_report = time.monotonic()
    with selectors.DefaultSelector() as sel:
        for pipe in (proc.stdout, proc.stderr):
            sel.register(pipe, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select(timeout=HEARTBEAT):
                fd = key.fd
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                data[fd] += chunk
                end = len(data[fd]) if not chunk else data[fd].rfind(b"\n") + 1
                if end > unsplit[fd]:
                    text = data[fd][unsplit[fd] : end].decode(errors="replace")
                    lines.extend(line.rstrip() for line in text.splitlines() if line.strip())
                    unsplit[fd] = end
            now = time.monotonic()
            if report is not None and now - last_report >= HEARTBEAT:
                last_report = now
                latest = f": {lines[-1].strip()[:120]}" if lines else ""
                wrapped = unwrapped(argv)
                what = " ".join([Path(wrapped[0]).name, *wrapped[1:3]])
                report(f"`{what}` still running after {now - started:.0f} s{latest}")
    return data[out_fd].decode(errors="replace"), lines


def tail(lines: list[str]) -> list[str]:
    return lines[-25:]


def unwrapped(argv: list[str]) -> list[str]:
    """The command a wrapper (as_nobody's setpriv) runs, its options left out."""
    if Path(argv[0]).name != "setpriv":
        return argv
    start = next((i for i, arg in enumerate(argv[1:], 1) if not arg.startswith("-")), 0)
    return argv[start:] if start else argv


def as_nobody(argv: list[str]) -> list[str]:
    """The argv that runs `argv` as an unprivileged uid with no groups, as the jail's uids are."""
    ids = str(CHECK_UID)
    return ["setpriv", f"--reuid={ids}", f"--regid={ids}", "--clear-groups", *argv]
