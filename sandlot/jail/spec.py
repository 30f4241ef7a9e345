"""What goes into one jail run and what comes out of it."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, fields


class Limit(enum.StrEnum):
    """Which limit ended a run. A run that ended by itself has none."""

    WALL_TIME = "time"
    CPU_TIME = "cpu"
    MEMORY = "memory"
    OUTPUT = "output"


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one run. Time in seconds, sizes in bytes."""

    wall_time: float = 10.0
    cpu_time: float = 10.0
    memory: int = 1024 << 20
    pids: int = 256
    output: int = 8 << 20
    open_files: int = 1024
    file_size: int = 256 << 20

    def __post_init__(self) -> None:
        # A NaN wall time would make every comparison with a deadline false: no limit at all.
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"limit {f.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"limit {f.name} must be finite and positive, got {value!r}")

    def __repr__(self) -> str:
        return (
            f"Limits(wall={self.wall_time:g}s cpu={self.cpu_time:g}s "
            f"mem={self.memory >> 20}MiB pids={self.pids} out={self.output >> 20}MiB "
            f"nofile={self.open_files})"
        )


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One program to run in a fresh box.

    `files` are written into the work dir (the box's cwd) before the run; `fetch` names files or
    directories of the work dir to read back after it. `ro_binds` are extra host paths made visible
    read-only at the same place; `env` is the whole environment beyond the jail's defaults.

    `warm` says argv is `PYTHON SCRIPT [ARGS]`: the jail may then run the script in a fresh fork
    of a warm interpreter instead of starting one, in a box built the same way.

    `any_cpu`: the program may use every CPU the jail may, not only its slot's (placement.py):
    for a compiler or a repository's tests, which start many threads, and run alone or rarely.

    `binds` are (host directory, box path) pairs mounted writable in this run's box alone (never
    in a template a later box is copied from): a repository's tree prepared for this one run.
    `network` is the path of a network namespace the box joins instead of a new one of its own
    (whoever made it decides what it reaches); such runs are always built by the zygote.
    """

    argv: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    stdin: bytes = b""
    fetch: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    ro_binds: tuple[str, ...] = ()
    limits: Limits = Limits()
    warm: bool = False
    any_cpu: bool = False
    binds: tuple[tuple[str, str], ...] = ()
    network: str | None = None


@dataclass(slots=True)
class Outcome:
    """How a run ended. A program failing is an outcome; only a jail fault raises."""

    exit_code: int | None = None
    signal: int | None = None
    limit: Limit | None = None
    wall_time: float = 0.0
    cpu_time: float = 0.0
    memory_peak: int = 0
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage of the jail's work

    @property
    def ok(self) -> bool:
        return self.limit is None and self.exit_code == 0
