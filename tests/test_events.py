"""The engine tells its events to whoever listens (sandlot/events.py): the server's metrics are
one listener, and the engine itself never imports prometheus-client."""

from __future__ import annotations

import subprocess
import sys

from prometheus_client import REGISTRY

from sandlot import events, telemetry
from sandlot.jail.spec import Limit, Outcome
from tests.conftest import ROOT

ENGINE = (
    "sandlot.executor.runner", "sandlot.executor.admission", "sandlot.judge.engine",
    "sandlot.sessions.manager", "sandlot.sessions.session", "sandlot.service",
    "sandlot.usecases.judging", "sandlot.usecases.running", "sandlot.usecases.sessions",
)  # fmt: skip

BLOCKED = """
import importlib.abc, sys

class NoPrometheus(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "prometheus_client":
            raise ImportError("prometheus_client is blocked")

sys.meta_path.insert(0, NoPrometheus())
import {modules}
from sandlot import events
assert not events.LISTENERS
try:
    import sandlot.telemetry
except ImportError:
    print("engine ok")
"""


def test_the_engine_imports_without_prometheus_client() -> None:
    check = BLOCKED.format(modules=", ".join(ENGINE))
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "engine ok", done.stderr


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_the_servers_metrics_hear_the_engines_events() -> None:
    assert any(isinstance(x, telemetry.Metrics) for x in events.LISTENERS)
    before = value("sandlot_judge_verdicts_total", dataset="humaneval", verdict="accepted")
    events.judged("humaneval", "python", "accepted")
    assert value("sandlot_judge_verdicts_total", dataset="humaneval", verdict="accepted") == (
        before + 1
    )
    events.sessions_held(3, 1)
    try:
        assert value("sandlot_sessions", state="live") == 3
        assert value("sandlot_sessions", state="paused") == 1
    finally:
        events.sessions_held(0, 0)
    labels = {"language": "c", "step": "run", "status": "memory"}
    runs = value("sandlot_exec_time_seconds_count", **labels)
    events.ran("c", "run", Outcome(exit_code=None, signal=9, wall_time=0.5, cpu_time=0.1,
                                   memory_peak=1 << 20, limit=Limit.MEMORY))  # fmt: skip
    assert value("sandlot_exec_time_seconds_count", **labels) == runs + 1
    saves = value("sandlot_session_state_seconds_count", op="save", clock="cpu")
    events.state_kept("save", 0.2, 0.1)
    assert value("sandlot_session_state_seconds_count", op="save", clock="cpu") == saves + 1


def test_a_run_lands_on_the_request_it_serves() -> None:
    record = events.RequestRecord("r1")
    token = events.CURRENT.set(record)
    try:
        events.queued(0.25)
        events.ran("python", "run", Outcome(exit_code=1, wall_time=0.5))
    finally:
        events.CURRENT.reset(token)
    assert (record.language, record.verdict, record.runs) == ("python", "error", 1)
    assert (record.run_seconds, record.queue_seconds) == (0.5, 0.25)
