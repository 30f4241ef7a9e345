"""Aider in a virtualenv of its own (`sandlot setup --with-aider`), and finding it afterwards.

aider-chat pins ~100 packages exactly (fastapi, pydantic, httpx, numpy among them), so it never
shares sandlot's environment: it lives in its own venv, driven as a subprocess. Idempotent: a
stamp holding the requirement is written last, so an interrupted install is redone, not trusted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from sandlot.errors import InvalidRequest, SandlotError

AIDER_REQUIREMENT = "aider-chat>=0.86,<0.87"  # the CLI flags and output we rely on, checked
SYSTEM_PYTHON = "/usr/bin/python3"  # aider-chat supports Python < 3.13; Debian 12 has 3.11
STAMP = ".sandlot-aider-stamp"
INSTALL_HINT = (
    "Aider is not installed. Install it with `sandlot setup --with-aider` (a venv under "
    "{root}/aider), or put an `aider` executable on PATH, or set SANDLOT_AIDER to its path."
)


class AiderMissing(InvalidRequest):
    """No usable aider executable; the message says how to install one."""

    status_code = 503  # the server lacks a part; the request itself was fine


def venv_dir(runtime_dir: str) -> Path:
    return Path(runtime_dir) / "aider"


def find_aider(runtime_dir: str = "/opt/sandlot") -> str:
    """The aider executable: $SANDLOT_AIDER, else sandlot's venv, else PATH; or AiderMissing."""
    explicit = os.environ.get("SANDLOT_AIDER")
    candidates = [explicit] if explicit else []
    candidates.append(str(venv_dir(runtime_dir) / "bin" / "aider"))
    on_path = shutil.which("aider")
    if on_path:
        candidates.append(on_path)
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise AiderMissing(INSTALL_HINT.format(root=runtime_dir))


def aider_version(executable: str) -> str:
    done = subprocess.run(
        [executable, "--version"], capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "NO_COLOR": "1"},
    )  # fmt: skip
    return (done.stdout or done.stderr).strip().splitlines()[-1] if done.returncode == 0 else ""


def install_aider(runtime_dir: str, log: Callable[[str], None] = print) -> str:
    """Make sure the venv exists with the pinned aider; returns what was done."""
    root = venv_dir(runtime_dir)
    stamp = root / STAMP
    exe = root / "bin" / "aider"
    if stamp.is_file() and stamp.read_text().strip() == AIDER_REQUIREMENT and exe.is_file():
        return f"aider: already installed in {root}"
    started = time.monotonic()
    log(f"aider: installing {AIDER_REQUIREMENT} into {root} (a few minutes)")
    stamp.unlink(missing_ok=True)
    if not (root / "bin" / "python").exists():
        # A venv is built in place: its scripts name its absolute path, so it cannot be moved.
        _run([SYSTEM_PYTHON, "-m", "venv", str(root)], "create the aider venv")
    pip = str(root / "bin" / "pip")
    _run([pip, "install", "--disable-pip-version-check", "-q", AIDER_REQUIREMENT],
         "install aider-chat")  # fmt: skip
    version = aider_version(str(exe))
    if not version:
        raise SandlotError(f"aider was installed in {root} but `aider --version` fails")
    stamp.write_text(AIDER_REQUIREMENT + "\n")
    return f"aider: installed {version} in {time.monotonic() - started:.0f}s"


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandlotError(f"cannot {what}: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-2000:]
        raise SandlotError(f"cannot {what} (`{' '.join(argv)}` exited {done.returncode}):\n{tail}")
