"""The request-limit table (sandlot/limits.py) is the one place a limit is written: its settings,
`sandlot config`, the check of a request, the OpenAPI maximums and the jail's limits all follow
from its rows. Each test here runs over every row, so a row added there is checked here too."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import Any

import pytest

from sandlot.api.app import create_app
from sandlot.api.batch import _item as batch_item
from sandlot.api.schema import RUN_REQUESTS
from sandlot.config import SETTINGS, Config
from sandlot.convert import code_request, judge_config
from sandlot.errors import InvalidRequest, SandlotError
from sandlot.executor import CodeRequest, Executor
from sandlot.executor.limits import asked_of, check_asked, limits_for
from sandlot.jail import Jail, Limits
from sandlot.limits import REQUEST_LIMITS, RUN_LIMITS, RUN_TIMEOUT, RequestLimit
from sandlot.service import Service
from sandlot.wire import judge as judge_wire
from sandlot.wire.batch import BatchItem
from sandlot.wire.run import RunCodeRequest
from tests.conftest import ROOT

SETTING = {s.name: s for s in SETTINGS}
LIMIT_FIELDS = {f.name for f in dataclasses.fields(Limits)}


def odd_maximum(n: int, limit: RequestLimit) -> float | int:
    """A maximum no default equals, different for each row: proof that it was read, not written."""
    return type(limit.maximum)(limit.maximum // 2 + 7 + n)  # a float prints as sandlot shows it


ODD: dict[str, Any] = {
    limit.max_setting: odd_maximum(n, limit) for n, limit in enumerate(REQUEST_LIMITS)
}


def test_config_is_the_settings_table() -> None:
    """Config's fields are the settings, in order, each typed as its default."""
    config_fields = dataclasses.fields(Config)
    assert [f.name for f in config_fields] == [s.name for s in SETTINGS]
    for f in config_fields:
        assert f.type == type(SETTING[f.name].default).__name__, f.name
    assert Config() == Config(**{s.name: s.default for s in SETTINGS})


@pytest.mark.parametrize("limit", REQUEST_LIMITS, ids=lambda limit: limit.field)
def test_a_limit_gives_its_two_settings(limit: RequestLimit) -> None:
    default, maximum = SETTING[limit.setting], SETTING[limit.max_setting]
    assert (default.default, maximum.default) == (limit.default, limit.maximum)
    assert default.help == limit.help and limit.field in maximum.help
    assert limit.default <= limit.maximum
    above: dict[str, Any] = {limit.setting: limit.maximum * 2}
    with pytest.raises(SandlotError, match=f"above {limit.max_setting}"):
        Config.load(**above)


def test_sandlot_config_shows_every_limit_as_set() -> None:
    env = {"PATH": os.environ["PATH"], "COLUMNS": "250"}
    env |= {SETTING[name].env: str(value) for name, value in ODD.items()}
    done = subprocess.run([sys.executable, "-m", "sandlot", "config"], cwd=ROOT, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {row[0]: row for row in (line.split("\t") for line in done.stdout.splitlines())}
    for limit in REQUEST_LIMITS:  # piped, a tab-separated line per setting: name, value, ...
        for name in (limit.setting, limit.max_setting):
            assert name in rows, name
        assert rows[limit.max_setting][1] == str(ODD[limit.max_setting])


def test_the_openapi_schema_states_every_maximum() -> None:
    models = create_app(Service(Config(**ODD))).openapi()["components"]["schemas"]

    def maximum(field: dict | None) -> float | None:
        for branch in (field or {}).get("anyOf", [field or {}]):
            if "maximum" in branch:
                return branch["maximum"]
        return None

    for limit in REQUEST_LIMITS:
        most = ODD[limit.max_setting]
        stated = {name for name, model in models.items()
                  if maximum(model.get("properties", {}).get(limit.field)) == most}  # fmt: skip
        assert stated, f"no request model states the maximum of {limit.field}"
        if limit in RUN_LIMITS:
            assert set(RUN_REQUESTS) <= stated, limit.field


@pytest.mark.parametrize("limit", RUN_LIMITS, ids=lambda limit: limit.field)
def test_a_run_limit_is_carried_and_checked(limit: RequestLimit) -> None:
    """A run's request carries the limit under its setting's name, and is refused above it."""
    cfg = Config(**ODD)
    asked: dict[str, Any] = {limit.setting: ODD[limit.max_setting]}
    request = CodeRequest("python", "", **asked)
    check_asked(cfg, asked_of(request))  # the maximum itself is allowed
    above = {limit.setting: ODD[limit.max_setting] + 1}
    with pytest.raises(InvalidRequest, match=f"{limit.field}=.* above this server's maximum"):
        check_asked(cfg, above)
    with pytest.raises(InvalidRequest, match=f"{limit.field} must be a finite number"):
        check_asked(cfg, {limit.setting: float("nan")})


@pytest.mark.parametrize(
    "limit", [r for r in REQUEST_LIMITS if r.jail], ids=lambda limit: limit.field
)
def test_a_limit_fills_its_jail_limit(limit: RequestLimit) -> None:
    assert limit.jail in LIMIT_FIELDS
    cfg = Config()
    time = limit if limit.jail == RUN_TIMEOUT.jail else RUN_TIMEOUT
    asked = type(limit.default)(limit.default // 2 + 3)
    filled = getattr(limits_for(cfg, {limit.setting: asked}, time=time), limit.jail)
    assert filled == asked * limit.scale
    by_default = getattr(limits_for(cfg, {}, time=time), limit.jail)
    assert by_default == getattr(cfg, limit.setting) * limit.scale


@pytest.mark.parametrize("limit", [r for r in RUN_LIMITS if r.jail], ids=lambda limit: limit.field)
def test_a_run_limit_asked_reaches_the_jail(limit: RequestLimit) -> None:
    """What a request asks for is what the box of its step gets (no box is started here)."""
    config = Config()
    executor = Executor(config, Jail(), Service(config).registry)  # a jail never started
    row = executor.registry.get("python")
    value = type(limit.default)(limit.default // 2 + 3)
    asked: dict[str, Any] = {limit.setting: value}
    time = limit if limit.jail == RUN_TIMEOUT.jail else RUN_TIMEOUT
    limits = executor._limits(row, CodeRequest("python", "", **asked), time)
    assert getattr(limits, limit.jail) == value * limit.scale


@pytest.mark.parametrize("limit", RUN_LIMITS, ids=lambda limit: limit.field)
def test_a_run_limit_is_carried_from_every_run_request(limit: RequestLimit) -> None:
    """/run_code, a /run_batch item and a /submit config carry it to the layer below."""
    value = type(limit.default)(limit.default // 2 + 3)
    wire: dict[str, Any] = {limit.field: value}
    carried = [
        code_request(RunCodeRequest(code="", language="python", **wire)),
        batch_item(BatchItem(code="", **wire), 0),
        judge_config(judge_wire.TestConfig(**wire)),
    ]
    for request in carried:
        assert getattr(request, limit.setting) == value, type(request).__name__
