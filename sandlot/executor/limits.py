"""The jail limits of a run, and the check of what a request asked for: both from the table of
request limits (sandlot.limits), so that a limit added there is checked and filled here.

Every box is limited here, whatever runs in it: a program and its build, a repository's tests,
a session's kernel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sandlot.config import Config
from sandlot.errors import InvalidRequest
from sandlot.jail import Limits
from sandlot.limits import REQUEST_LIMITS, RUN_LIMITS, RUN_TIMEOUT, RequestLimit

# What a request asked for, by the name of each limit's default setting (None: not asked).
Asked = Mapping[str, float | None]


def asked_of(request: object) -> dict[str, Any]:
    """The run limits a request object asked for (its fields are named as their settings)."""
    return {limit.setting: getattr(request, limit.setting) for limit in RUN_LIMITS}


def check_asked(config: Config, asked: Asked, sent_as: Mapping[str, str] | None = None) -> None:
    """InvalidRequest saying what to change for a run limit that is not a number in range,
    naming it as the request did (`sent_as`: setting -> field, where not the row's field)."""
    for limit in RUN_LIMITS:
        value = asked.get(limit.setting)
        what = (sent_as or {}).get(limit.setting, limit.field)
        if value is None:
            continue
        if not math.isfinite(value):
            raise InvalidRequest(f"{what} must be a finite number, got {value!r}")
        maximum = getattr(config, limit.max_setting)
        if value > maximum:
            raise InvalidRequest(f"{what}={value:g} is above this server's maximum of {maximum:g}")
        if value <= 0 and not limit.zero_or_less_is_default:
            raise InvalidRequest(f"{what} must be positive, got {value:g}")


def limits_for(
    config: Config, asked: Asked, *, time: RequestLimit = RUN_TIMEOUT, **fixed: float
) -> Limits:
    """The jail limits of one box: each request limit that fills one (the time limit `time`'s),
    as asked (already checked) or its default; the server's settings for the rest; `fixed`
    for what this kind of box sets itself (a language's pids, a session's disk)."""
    values: dict[str, Any] = {
        "pids": config.pids,
        "output": config.output_bytes,
        "open_files": config.open_files,
        "file_size": config.disk_bytes,
    }
    for limit in REQUEST_LIMITS:
        if limit.jail and (limit.jail != time.jail or limit is time):
            default = getattr(config, limit.setting)
            values[limit.jail] = limit.pick(asked.get(limit.setting), default) * limit.scale
    values["cpu_time"] = values["wall_time"] + 1  # the CPU rlimit fires after the wall clock
    values.update(fixed)
    return Limits(**values)
