"""The limits a request may set: one row each, from which the rest is derived.

A row names the request's field, the setting that holds its default (`max_` before it names the
server's maximum), both values, its unit and the field of the jail's `Limits` it fills. From
these rows come the two settings of each limit (sandlot.config), the maximums a request is
checked against (sandlot.executor) and those the OpenAPI schema states (sandlot.api.schema),
and the jail limits of a run (sandlot.executor.limits).

Nothing here imports the rest of sandlot: the settings are built from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1 << 20


@dataclass(frozen=True, slots=True)
class RequestLimit:
    """One limit a request may ask for, up to the server's maximum."""

    field: str  # its name in a request (SandboxFusion's where it has one)
    setting: str  # the setting of its default; `max_<setting>` is the server's maximum
    default: float | int
    maximum: float | int
    unit: str
    help: str  # what the default is (the setting's help)
    jail: str = ""  # the field of the jail's `Limits` it fills; "": a session's own clock
    scale: int = 1  # jail units per unit
    asker: str = "a request"  # who may ask for it (the maximum's help)
    # SandboxFusion's memory_limit_MB: -1 ("unlimited"), like 0 or absent, asks for the default;
    # any other limit must be positive.
    zero_or_less_is_default: bool = False

    @property
    def max_setting(self) -> str:
        return f"max_{self.setting}"

    @property
    def max_help(self) -> str:
        return f"largest {self.field} {self.asker} may ask for"

    def pick(self, asked: float | None, default: float) -> float:
        """What a request gets: what it asked for (already checked), else the default."""
        return asked if asked is not None and asked > 0 else default

    # Each setting's own range: a time above 0, a size of at least one unit.
    @property
    def gt(self) -> float | None:
        return 0 if isinstance(self.default, float) else None

    @property
    def ge(self) -> float | None:
        return None if isinstance(self.default, float) else 1


RUN_TIMEOUT = RequestLimit(
    "run_timeout", "run_timeout", 10.0, 300.0, "seconds",
    "default wall-clock seconds of a run", jail="wall_time",
)  # fmt: skip
COMPILE_TIMEOUT = RequestLimit(
    "compile_timeout", "compile_timeout", 10.0, 300.0, "seconds",
    "default wall-clock seconds of a compile step", jail="wall_time",
)  # fmt: skip
MEMORY = RequestLimit(
    "memory_limit_MB", "memory_mb", 1024, 8192, "MiB",
    "default memory limit of a run in MiB (memory cgroup)", jail="memory", scale=MiB,
    zero_or_less_is_default=True,
)  # fmt: skip
SESSION_IDLE_TIMEOUT = RequestLimit(
    "idle_timeout", "session_idle_timeout", 300.0, 3600.0, "seconds",
    "default seconds a session may sit unused", asker="a session",
)  # fmt: skip
SESSION_LIFETIME = RequestLimit(
    "lifetime", "session_lifetime", 3600.0, 86400.0, "seconds",
    "default seconds a session lives, however busy", jail="wall_time", asker="a session",
)  # fmt: skip

REQUEST_LIMITS: tuple[RequestLimit, ...] = (
    RUN_TIMEOUT,
    COMPILE_TIMEOUT,
    MEMORY,
    SESSION_IDLE_TIMEOUT,
    SESSION_LIFETIME,
)
# The limits a run (`/run_code`, a test case, a batch item, a judged program) may ask for.
RUN_LIMITS: tuple[RequestLimit, ...] = (RUN_TIMEOUT, COMPILE_TIMEOUT, MEMORY)
# The limits a session asks for when it is created (besides its memory, which a run's row holds).
SESSION_LIMITS: tuple[RequestLimit, ...] = (SESSION_IDLE_TIMEOUT, SESSION_LIFETIME)
