"""Package sets fetched from a language's registry by its own tool (Go modules, crates, jars):
where to fetch from (the mirrors an operator sets), and the status file each set's dir holds,
which says where its packages came from and which could not be had (`/v1/languages` shows it).

A set is pinned by a lock beside the language rows (sandlot/languages/packages/), every pin with
its checksum; `sandlot packages lock` rewrites the locks, `sandlot packages check` compares an
installed set with its lock. When the registry cannot be reached, set-up installs what Debian
ships in its place (fewer packages, older versions), says which pins it could not get, and
writes that into the status file; a later run with the registry reachable replaces it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sandlot.languages import PACKAGES_STATUS as STATUS

LOCKS = Path(__file__).resolve().parent.parent / "languages" / "packages"


@dataclass(frozen=True, slots=True)
class Mirrors:
    """Where set-up fetches each set from instead of the tool's default registry (empty: the
    default): a Maven repository URL, a GOPROXY value, a cargo registry's index URL."""

    maven: str = ""
    goproxy: str = ""
    cargo: str = ""


@dataclass(slots=True)
class SetStatus:
    """What a set's dir holds: `source` "registry" (every pin, checked against the lock) or
    "debian" (the registry could not be reached: Debian's packages in its place)."""

    name: str
    source: str
    origin: str  # the registry or mirror, or the Debian packages used
    pins: int  # pins in the lock
    missing: list[str] = field(default_factory=list)  # pins not installed
    reason: str = ""  # why the registry was not used


def write_status(target: Path, status: SetStatus) -> None:
    path = target / STATUS
    new = path.with_name(f".{STATUS}.new")
    new.write_text(json.dumps(asdict(status), indent=1) + "\n")
    os.chmod(new, 0o644)
    os.replace(new, path)


def read_status(target: Path) -> dict[str, object] | None:
    try:
        data = json.loads((target / STATUS).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def fallback_line(status: SetStatus) -> str:
    """The line set-up prints for a set installed from Debian."""
    missing = ", ".join(status.missing) or "none"
    return (f"registry unreachable ({status.reason}); installed Debian's {status.origin} "
            f"instead; not installed: {missing}")  # fmt: skip
