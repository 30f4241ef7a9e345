"""Debian's packages: the rows' apt lists installed in rounds (the certificate stores first),
with the retries a fresh system needs and apt's own words when it fails."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from sandlot.install.process import host_env, run
from sandlot.install.rows import unique
from sandlot.install.step import Setup, SetupError

# The jail (bubblewrap; a C compiler, and musl with glibc's libc.a as the fallback, for the boxes'
# static init: jail/box_init.py), venvs, mount/setpriv; curl and jq, which the docs' examples
# call the server with; and repository setups' egress proxy (squid: repos/egress.py) and git.
BASE_APT = ("bubblewrap", "gcc", "git", "libc6-dev", "musl-tools", "python3-venv", "squid",
            "util-linux", "curl", "jq")  # fmt: skip
APT_LISTS = Path("/var/lib/apt/lists")
APT_LISTS_MAX_AGE = 24 * 3600.0  # older package lists are refreshed before an install
# Wait for another apt to finish rather than fail; plain output, no pseudo-terminal.
APT_INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", "-o", "Dpkg::Use-Pty=0",
               "-o", "DPkg::Lock::Timeout=300"]  # fmt: skip
# Rounds of their own, before the rest: the certificate store that HTTPS downloads need, then,
# when a JDK is wanted, the Java keystore made from it (its set-up runs a JVM; in one
# transaction with the JDK it is where a fresh system fails).
APT_FIRST = ("ca-certificates",)
APT_BEFORE_JDK = ("ca-certificates-java",)
# apt's output when its package lists are older than the mirror, and when dpkg left packages
# unconfigured (on a fresh system, typically ca-certificates-java configured with a JDK).
APT_STALE = re.compile(r"404\s+Not Found|Unable to locate package|has no installation candidate")
APT_DPKG_FAILED = re.compile(r"dpkg: error processing|returned an error code|dpkg --configure -a")


def ensure_apt(setup: Setup) -> str:
    wanted = unique([*BASE_APT, *(pkg for row in setup.rows for pkg in row.apt)])
    present = installed_debs(wanted)
    missing = [pkg for pkg in wanted if pkg not in present]
    if not missing:
        return f"ok (already present): {' '.join(wanted)}{foreign_note(wanted)}"
    if os.geteuid() != 0:
        raise SetupError(f"packages {' '.join(missing)} are missing; run this as root")
    setup.log(f"apt packages: installing {' '.join(missing)} ...")
    env = host_env(DEBIAN_FRONTEND="noninteractive")
    updated = apt_lists_age() > APT_LISTS_MAX_AGE  # a fresh machine has no package lists yet
    if updated:
        apt_update(setup, env)
    for batch in apt_rounds(missing):
        updated = apt_install(setup, batch, env, updated)
    return f"installed {' '.join(missing)}{foreign_note(wanted)}"


def apt_rounds(missing: list[str]) -> list[list[str]]:
    first = list(APT_FIRST)
    if any(pkg.startswith("openjdk-") for pkg in missing):
        first += APT_BEFORE_JDK
    present = installed_debs(first)
    rounds = [[pkg] for pkg in first if pkg not in present]
    rest = [pkg for pkg in missing if pkg not in first]
    return [*rounds, rest] if rest else rounds


def apt_lists_age() -> float:
    """Seconds since the package lists were last fetched (infinite when there are none)."""
    lists = list(APT_LISTS.glob("*_Packages*"))
    return time.time() - max(p.stat().st_mtime for p in lists) if lists else float("inf")


def apt_update(setup: Setup, env: Mapping[str, str]) -> None:
    setup.log("apt packages: apt-get update ...")
    run(["apt-get", "update", "-o", "DPkg::Lock::Timeout=300"], env=env, excerpt=apt_errors)


def apt_install(setup: Setup, batch: list[str], env: Mapping[str, str], updated: bool) -> bool:
    """Install one batch, retrying once after what a fresh system typically trips on; returns
    whether the package lists were refreshed."""
    try:
        run([*APT_INSTALL, *batch], env=env, excerpt=apt_errors)
        return updated
    except SetupError as exc:
        if APT_STALE.search(str(exc)) and not updated:
            setup.log("apt packages: the package lists are out of date; apt-get update, retry")
            apt_update(setup, env)
            updated = True
        elif APT_DPKG_FAILED.search(str(exc)):
            setup.log(f"apt packages: dpkg failed ({first_line(exc)}); dpkg --configure -a, retry")
            with contextlib.suppress(SetupError):  # the retry below says what is still wrong
                run(["dpkg", "--configure", "-a"], env=env, excerpt=apt_errors)
        else:
            raise
    run([*APT_INSTALL, *batch], env=env, excerpt=apt_errors)
    return updated


def apt_errors(lines: list[str]) -> list[str]:
    """What went wrong in apt's output: its E: lines, dpkg's errors, and the output of each
    package that failed to configure (its maintainer script's own words), not the noise that
    comes after it."""
    failed = {
        m.group(1)
        for line in lines
        if (m := re.match(r"dpkg: error processing package (\S+)", line))
    }
    keep: list[str] = []
    current = ""
    for line in lines:
        if m := re.match(r"Setting up (\S+?)(:\w+)? \(", line):
            current = m.group(1)
        if (
            (current in failed or current.split(":")[0] in failed)
            or line.startswith(("E: ", "dpkg: ", "Errors were encountered"))
            or "returned error exit status" in line
        ):
            keep.append(line)
    return keep[:40]


def first_line(exc: Exception) -> str:
    lines = str(exc).splitlines()
    return lines[-1].strip() if lines else ""


def installed_debs(packages: list[str]) -> set[str]:
    # dpkg-query exits non-zero when some name is unknown but still prints the others.
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Status}\n", *packages],
        capture_output=True,
        text=True,
    )
    lines = (line.split(" ", 1) for line in done.stdout.splitlines())
    return {parts[0] for parts in lines if len(parts) == 2 and parts[1] == "install ok installed"}


def foreign_note(packages: list[str]) -> str:
    """Rows' packages installed at a version no Debian archive serves and newer than those it
    does (nodesource's nodejs 20 in place of Debian's 18): the rows run them on this host, while
    a fresh machine and the image get Debian's. Said, not changed: they are the operator's."""
    notes = [f"{pkg} {mine} (Debian's is {theirs})" for pkg, mine, theirs in not_debians(packages)]
    if not notes:
        return ""
    return ("; not Debian's, so this host's runs may differ from a fresh machine's and the "
            f"image's: {', '.join(notes)}")  # fmt: skip


def not_debians(packages: list[str]) -> list[tuple[str, str, str]]:
    """(package, installed version, Debian's newest) for each such package."""
    debian = debian_sources()
    out = subprocess.run(["apt-cache", "policy", *packages], capture_output=True, text=True,
                         env=host_env()).stdout  # fmt: skip
    found = []
    for block in re.split(r"(?m)^(?=\S)", out):
        name = block.split(":", 1)[0].strip()
        installed = re.search(r"(?m)^  Installed: (\S+)", block)
        if not installed or installed.group(1) == "(none)":
            continue
        served: dict[str, bool] = {}  # version -> served by a Debian archive
        version = ""
        for line in block.splitlines():
            if m := re.match(r"^ (?:\*\*\*| {3}) (\S+) -?\d+$", line):
                version = m.group(1)
                served.setdefault(version, False)
            elif version and (m := re.match(r"^ {8}-?\d+ (.+)$", line)):
                served[version] |= m.group(1).strip() in debian
        theirs = [v for v, ok in served.items() if ok]
        mine = installed.group(1)
        if theirs and not served.get(mine) and all(newer(mine, v) for v in theirs):
            found.append((name, mine, theirs[0]))
    return found


def debian_sources() -> set[str]:
    """apt's package sources whose release is Debian's (`URL suite/component arch Packages`)."""
    out = subprocess.run(["apt-cache", "policy"], capture_output=True, text=True,
                         env=host_env()).stdout  # fmt: skip
    sources, last = set(), ""
    for line in out.splitlines():
        if m := re.match(r"^ *-?\d+ (\S+ \S+ \S+ Packages)$", line):
            last = m.group(1)
        elif "release " in line and "o=Debian," in line and last:
            sources.add(last)
    return sources


def newer(a: str, b: str) -> bool:
    return (
        subprocess.run(["dpkg", "--compare-versions", a, "gt", b], env=host_env()).returncode == 0
    )
