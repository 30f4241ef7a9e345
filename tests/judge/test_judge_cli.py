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


def sandlot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SANDLOT_STATE_DIR": f"{STATE_ROOT}/cli-eval",
           "SANDLOT_UID_BASE": str(UID_BASE), "COLUMNS": "200", **(env or {})}  # fmt: skip
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


def test_eval_judges_again_what_changed_since_the_results_were_written(tmp_path: Path) -> None:
    """The resume key is the dataset, the problem, the judging options and the completion
    itself: a samples file rewritten with other completions is not scored from old results."""
    samples = tmp_path / "samples.jsonl"
    write_samples(samples)
    first = sandlot("eval", "-d", "humaneval", "-s", str(samples))
    assert first.returncode == 0 and "0.2500" in first.stdout, first.stderr + first.stdout
    rows = [{"task_id": "HumanEval/7", "completion": GOOD}] * 4
    rows += [{"task_id": "HumanEval/0", "completion": "    pass\n"}] * 4
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    again = sandlot("eval", "-d", "humaneval", "-s", str(samples), "--k", "1,10")
    assert again.returncode == 0, again.stderr + again.stdout
    assert "pass@10 needs 10 samples of every problem; the fewest here is 4" in again.stdout
    assert "6 already judged, 2 to go" in again.stdout  # the two BAD ones became GOOD
    assert "2 earlier results are for other completions" in again.stdout
    assert "0.5000" in again.stdout and "4/8" in again.stdout  # (4/4 + 0/4) / 2
    lines = (tmp_path / "samples_results.jsonl").read_text().splitlines()
    assert len(lines) == 8  # the stale lines are gone from the results file


def test_eval_on_another_dataset_does_not_reuse_results(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": 2, "completion": "x = 1\n"}) + "\n")
    out = tmp_path / "out.jsonl"
    first = sandlot("eval", "-d", "mbpp", "-s", str(samples), "--out", str(out))
    assert first.returncode == 0 and "1 to go" in first.stdout, first.stderr + first.stdout
    other = sandlot("eval", "-d", "mbpp_sanitized", "-s", str(samples), "--out", str(out))
    assert other.returncode == 0, other.stderr + other.stdout
    assert "0 already judged, 1 to go" in other.stdout
    assert [json.loads(x)["dataset"] for x in out.read_text().splitlines()] == ["mbpp_sanitized"]


def test_eval_with_a_misspelt_dataset_is_an_error_even_when_all_is_judged(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    write_samples(samples)
    assert sandlot("eval", "-d", "humaneval", "-s", str(samples)).returncode == 0
    typo = sandlot("eval", "-d", "humanevl", "-s", str(samples))
    assert typo.returncode == 2, typo.stdout
    assert "unknown dataset 'humanevl'" in typo.stderr and "did you mean" in typo.stderr
    assert "pass@1" not in typo.stdout


def test_eval_against_a_server_checks_the_dataset_and_ids_first(
    tmp_path: Path, server: Server
) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/9999", "completion": GOOD}) + "\n")
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples), "--server", server.url)
    assert done.returncode == 2 and "HumanEval/9999" in done.stderr, done.stderr + done.stdout
    typo = sandlot("eval", "-d", "humanevl", "-s", str(samples), "--server", server.url)
    assert typo.returncode == 2 and "did you mean" in typo.stderr, typo.stderr


def test_eval_on_this_machine_waits_for_slots_however_long_the_runs(tmp_path: Path) -> None:
    """The time a request may wait to start is a remote client's patience: `sandlot eval` on
    this machine keeps its samples in line as long as it takes, never refusing its own."""
    samples = tmp_path / "samples.jsonl"
    slow = "    import time\n    time.sleep(1.5)\n    return False\n"
    rows = [{"task_id": f"HumanEval/{i}", "completion": slow} for i in range(3)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {"SANDLOT_SLOTS": "1", "SANDLOT_QUEUE_TIMEOUT": "0.5"}
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples), env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "0/3" in done.stdout
