"""`sandlot eval`: local engine and remote server, results file, pass@k, resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, STATE_ROOT, UID_BASE, Server

pytestmark = [pytest.mark.root, pytest.mark.slow]

GOOD = "    return [x for x in strings if substring in x]\n"
BAD = "    return strings\n"


def sandlot(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SANDLOT_STATE_DIR": f"{STATE_ROOT}/cli-eval",
           "SANDLOT_UID_BASE": str(UID_BASE), "COLUMNS": "200"}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "sandlot", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def write_samples(path: Path) -> None:
    rows = [{"task_id": "HumanEval/7", "completion": c} for c in (GOOD, BAD, BAD, GOOD)]
    rows += [{"task_id": "HumanEval/0", "completion": "    pass\n"}] * 4
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_eval_local_writes_results_and_pass_at_k_and_resumes(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    write_samples(samples)
    done = sandlot("eval", "--dataset", "humaneval", "--samples", str(samples), "--k", "1,2")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "pass@1" in done.stdout and "0.2500" in done.stdout  # (2/4 + 0/4) / 2
    assert "pass@2" in done.stdout and "accepted" in done.stdout and "2/8" in done.stdout
    results = tmp_path / "samples_results.jsonl"
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    assert len(lines) == 8
    assert {(r["id"], r["sample"]) for r in lines if r["accepted"]} == {
        ("HumanEval/7", 0), ("HumanEval/7", 3)}  # fmt: skip
    # interrupted: the last three results are lost (one torn); a rerun judges only those
    kept = results.read_text().splitlines()[:5]
    results.write_text("\n".join(kept) + '\n{"id": "HumanEval/0", "sam')
    again = sandlot("eval", "--dataset", "humaneval", "--samples", str(samples), "--k", "1,2")
    assert again.returncode == 0, again.stderr
    assert "5 already judged, 3 to go" in again.stdout
    assert "0.2500" in again.stdout


def test_eval_against_a_server(tmp_path: Path, server: Server) -> None:
    samples = tmp_path / "s.jsonl"
    write_samples(samples)
    out = tmp_path / "out.jsonl"
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples), "--server", server.url,
                   "--out", str(out), "--k", "1")  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "0.2500" in done.stdout and len(out.read_text().splitlines()) == 8


def test_eval_bad_samples_file_names_the_line(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n{"completion": "y"}\n')
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples))
    assert done.returncode == 2 and "sample 2: needs an id" in done.stderr
