"""The box's init (box_init.c), compiled once per source and kept where only root can write.

The zygote starts one per box; it is static so that its start maps no shared library. It is
built when a jail starts and reused by every jail after it on this machine until the source
changes: a compiler is needed once, and its absence is a reason the jail cannot start.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from sandlot.errors import JailUnavailable

SOURCE = Path(__file__).with_name("box_init.c")
DIRECTORY = "/var/cache/sandlot"
FLAGS = ("-O2", "-static", "-Wall")
COMPILERS = ("cc", "gcc", "clang")
BUILD_TIMEOUT = 120


def build(directory: str = DIRECTORY) -> str:
    """The path of the init built from SOURCE, under `directory` (made if absent), which nobody
    but root may write to: root runs what is there."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + " ".join(FLAGS).encode()).hexdigest()[:16]
    Path(directory).mkdir(mode=0o755, parents=True, exist_ok=True)
    st = os.stat(directory)
    if st.st_uid != 0 or st.st_mode & 0o022:
        raise JailUnavailable(f"{directory} may be written by others than root: not trusted")
    out = Path(directory) / f"box-init-{digest}"
    if out.exists():
        return str(out)
    compiler = next((found for c in COMPILERS if (found := shutil.which(c))), None)
    if compiler is None:
        raise JailUnavailable(
            "no C compiler (cc, gcc or clang) to build the box's init; install gcc, "
            "which `sandlot setup` does with the C toolchain"
        )
    partial = out.with_name(f"{out.name}.{os.getpid()}")
    try:
        done = subprocess.run(
            [compiler, *FLAGS, "-o", str(partial), str(SOURCE)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
        if done.returncode != 0:
            raise JailUnavailable(
                f"cannot build the box's init with {compiler}: {done.stderr.strip()[-2000:]}"
            )
        os.chmod(partial, 0o755)
        os.replace(partial, out)  # atomic: a jail starting at the same time sees all or nothing
    finally:
        partial.unlink(missing_ok=True)
    return str(out)
