"""The capabilities the jail needs of its host, checked before anything is set up.

As root on a machine the server has them all. In a container it has what the engine grants, and
these are exactly what the run command in docs/deployment.md adds: a missing one would
otherwise fail deep inside a box build, or worse, fail only where containment depends on it (a
spawner that cannot kill what a run left behind). So each is checked at start-up, and a missing
one is named with what it is for; no code runs without it.
"""

from __future__ import annotations

from pathlib import Path

from sandlot.errors import JailUnavailable

# (name, bit, what the jail does with it)
CAPABILITIES: tuple[tuple[str, int, str], ...] = (
    ("CAP_CHOWN", 0, "gives a run's files to its slot's uid"),
    ("CAP_DAC_OVERRIDE", 1, "reads back and wipes the work dir a slot's uid owns"),
    ("CAP_KILL", 5, "kills what a run leaves behind, running as another uid"),
    ("CAP_SETGID", 6, "drops a run to its slot's gid, with no groups"),
    ("CAP_SETUID", 7, "drops a run to its slot's uid"),
    ("CAP_SETPCAP", 8, "empties a run's capability bounding set"),
    ("CAP_NET_ADMIN", 12, "brings up the loopback of a run's network namespace"),
    ("CAP_SYS_CHROOT", 18, "enters the mount namespace of a slot's box template (setns)"),
    ("CAP_SYS_ADMIN", 21, "makes a run's namespaces and mounts, and pivots into its root"),
)


def effective(status: str | None = None) -> int:
    """The effective capability set of this process (from /proc/self/status unless given)."""
    text = status if status is not None else Path("/proc/self/status").read_text()
    for line in text.splitlines():
        if line.startswith("CapEff:"):
            try:
                return int(line.split()[1], 16)
            except (IndexError, ValueError):
                break
    raise JailUnavailable("cannot read this process's capabilities from /proc/self/status")


def check_capabilities(status: str | None = None) -> None:
    """Raise JailUnavailable naming every capability the jail needs and does not have."""
    held = effective(status)
    missing = [(name, why) for name, bit, why in CAPABILITIES if not held >> bit & 1]
    if missing:
        raise JailUnavailable(
            "the server lacks "
            + "; ".join(f"{name} (it {why})" for name, why in missing)
            + ". In a container, grant "
            + " ".join(f"--cap-add {name.removeprefix('CAP_')}" for name, _ in missing)
        )
