"""The box's init (box_init.c), compiled once per source and kept where only root can write.

The zygote starts one per box; it is static so that its start maps no shared library, and
built against musl where `musl-gcc` is installed (`sandlot setup` installs it): glibc's static
start-up sizes the CPU's caches with dozens of `cpuid` instructions, each of which a virtual
machine traps, where musl's does only what a program needs (0.55 against 0.05 ms of CPU per
box on our 2-core VM). Without musl, glibc's is the fallback. It is built when a jail starts and
reused by every jail after it on this machine until the source or compiler changes: a compiler
is needed once, and its absence is a reason the jail cannot start.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from sandlot.errors import JailUnavailable

SOURCE = Path(__file__).with_name("box_init.c")
DIRECTORY = "/var/cache/sandlot"
FLAGS = ("-O2", "-static", "-Wall")
# musl's own headers hold no Linux ones (linux/seccomp.h and the like): those come from the
# system's, searched after musl's so that they never stand in for its libc headers.
LINUX_HEADERS = ("/usr/include", f"/usr/include/{os.uname().machine}-linux-gnu")
COMPILERS = ("musl-gcc", "cc", "gcc", "clang")
BUILD_TIMEOUT = 120


def build_box_init(directory: str = DIRECTORY, compilers: Sequence[str] | None = None) -> str:
    """The path of the init built from SOURCE, under `directory` (made if absent), which nobody
    but root may write to: root runs what is there. The first of `compilers` (COMPILERS) that
    builds it is used; JailUnavailable says why none did."""
    source = SOURCE.read_bytes()
    Path(directory).mkdir(mode=0o755, parents=True, exist_ok=True)
    st = os.stat(directory)
    if st.st_uid != 0 or st.st_mode & 0o022:
        raise JailUnavailable(f"{directory} may be written by others than root: not trusted")
    failures = []
    for compiler in filter(None, map(shutil.which, compilers or COMPILERS)):
        command = [compiler, *FLAGS, *header_flags(compiler)]
        digest = hashlib.sha256(source + " ".join(command).encode()).hexdigest()[:16]
        out = Path(directory) / f"box-init-{digest}"
        if out.exists():
            return str(out)
        failure = compile_to(command, out)
        if failure is None:
            return str(out)
        failures.append(f"with {compiler}: {failure}")
    if not failures:
        raise JailUnavailable(
            "no C compiler (cc, gcc or clang) to build the box's init; install gcc, "
            "which `sandlot setup` does with the C toolchain"
        )
    raise JailUnavailable("cannot build the box's init " + "; ".join(failures))


def header_flags(compiler: str) -> list[str]:
    if os.path.basename(compiler) != "musl-gcc":
        return []
    return [flag for d in LINUX_HEADERS if os.path.isdir(d) for flag in ("-idirafter", d)]


def compile_to(command: list[str], out: Path) -> str | None:
    """Build SOURCE as `out`, all or nothing; the compiler's complaint if it could not."""
    partial = out.with_name(f"{out.name}.{os.getpid()}")
    try:
        try:
            done = subprocess.run(
                [*command, "-o", str(partial), str(SOURCE)],
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return f"took more than {BUILD_TIMEOUT} s"
        if done.returncode != 0:
            return done.stderr.strip()[-2000:]
        os.chmod(partial, 0o755)
        os.replace(partial, out)  # atomic: a jail starting at the same time sees all or nothing
    finally:
        partial.unlink(missing_ok=True)
    return None
