"""`sandlot eval --server A,B`: samples spread over several servers; one that cannot be reached
is drained and its samples judged by the others."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.root


def test_eval_over_two_servers_one_of_them_gone(server, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens once it is closed
    samples = tmp_path / "s.jsonl"
    rows = [("HumanEval/0", "    return False\n"), ("HumanEval/2", "    return number % 1.0\n")]
    samples.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n"
                               for t, c in rows))  # fmt: skip
    out = tmp_path / "out.jsonl"
    r = subprocess.run([sys.executable, "-m", "sandlot", "eval", "--dataset", "humaneval",
                        "--samples", str(samples), "--out", str(out),
                        "--server", f"{gone},{server.url}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    verdicts = {r["id"]: r["accepted"] for r in records}
    assert verdicts == {"HumanEval/0": False, "HumanEval/2": True}
    assert "pass@1" in r.stdout
