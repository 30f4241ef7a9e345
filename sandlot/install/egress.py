"""The egress proxy's package (squid) is sandlot's to run, not a service of the host's.

Debian starts and enables squid when it is installed, listening on every address at 3128.
sandlot runs its own squid per server, with its own config, on the loopback only
(sandlot/repos/egress.py), so the host's service is stopped and disabled: nothing listens
where a box or a neighbour could reach it.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path

from sandlot.install.step import Setup

SERVICE = "squid"


def ensure_squid_quiet(setup: Setup) -> str:
    if shutil.which("squid", path="/usr/sbin:/usr/bin") is None:
        return "skipped (squid is not installed)"
    done: list[str] = []
    if Path("/run/systemd/system").is_dir() and shutil.which("systemctl"):
        state = _run(["systemctl", "is-enabled", SERVICE]) + _run(
            ["systemctl", "is-active", SERVICE]
        )
        if "enabled" in state or "active" in state.replace("inactive", ""):
            _run(["systemctl", "disable", "--now", SERVICE])
            done.append("stopped and disabled the system squid service")
    elif Path("/etc/init.d/squid").exists():
        _run(["/etc/init.d/squid", "stop"])
        with contextlib.suppress(OSError):
            _run(["update-rc.d", SERVICE, "disable"])
    return "; ".join(done) or "ok (the system squid service is not running)"


def _run(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr
