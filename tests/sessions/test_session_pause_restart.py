"""A paused session and a snapshot survive a server restart. Apart from
tests/sessions/test_session_forks.py because its module's server would still be running: this test
checks that its own servers leave no box behind, and the other's pool of kernels runs under the same
uids."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import SNAPSHOT_ROOT, running_server
from tests.security.test_security_sessions import wait_until

pytestmark = [pytest.mark.root, pytest.mark.slow]


def paused(client: httpx.Client, sid: str) -> bool:
    return client.get(f"/sessions/{sid}").json()["status"] == "paused"


def test_a_paused_session_and_its_snapshots_survive_a_server_restart(tmp_path):
    snapshots = str(tmp_path / "snapshots")
    env = {"SANDLOT_SNAPSHOT_DIR": snapshots, "SANDLOT_SESSION_POOL": "0"}
    with (
        running_server("--slots", "1", env=env) as first,
        httpx.Client(base_url=first.url, timeout=300) as c,
    ):
        sid = c.post("/sessions", json={"pause_after": 1}).json()["id"]
        r = c.post(f"/sessions/{sid}/execute", json={"code": "x = 'kept'"})
        assert r.json()["status"] == "ok"
        other = c.post("/sessions", json={}).json()["id"]
        c.post(f"/sessions/{other}/execute", json={"code": "y = 'snap'"})
        snap = c.post(f"/sessions/{other}/snapshot").json()["id"]
        wait_until(lambda: paused(c, sid), 60, "the session was not paused")
        wait_until(lambda: c.get(f"/snapshots/{snap}").json()["status"] == "ready", 60, "unwritten")
        wait_until(lambda: json.loads(next(Path(snapshots, "sessions").glob("*.json")).read_text()),
                   30, "no paused record")  # fmt: skip
    with (
        running_server("--slots", "1", env=env) as second,
        httpx.Client(base_url=second.url, timeout=300) as c,
    ):
        assert c.get(f"/sessions/{sid}").json()["status"] == "paused"
        out = c.post(f"/sessions/{sid}/execute", json={"code": "print(x)"}).json()
        assert out["stdout"] == "kept\n" and out["resumed"] is True, out
        r = c.post("/sessions", json={"snapshot": snap})
        assert r.status_code == 200, r.text
        out = c.post(f"/sessions/{r.json()['id']}/execute", json={"code": "print(y)"}).json()
        assert out["stdout"] == "snap\n"
        assert c.delete(f"/snapshots/{snap}").status_code == 200
        assert c.delete(f"/sessions/{sid}").status_code == 200  # live, or paused again
    assert not list(Path(snapshots, "sessions").glob("*.json"))  # nothing of it is left
    assert not [p for p in Path(snapshots, "layers").iterdir() if p.is_dir()]
    assert str(tmp_path).startswith("/tmp") and SNAPSHOT_ROOT.startswith("/tmp")
