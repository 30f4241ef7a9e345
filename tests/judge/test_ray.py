"""`sandlot eval --ray` on a real two-node Ray cluster on this machine (`ray.cluster_utils.Cluster`:
a head and a second node, each its own raylet with its own resources), against `sandlot eval`
on the local engine: the same verdicts sample for sample, the same pass@k, both nodes used, and
a resumed run judging only what is left. The cluster is shut down whatever happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ray.cluster_utils import Cluster

from tests.conftest import ROOT, STATE_ROOT, UID_BASE

pytestmark = [pytest.mark.root, pytest.mark.slow]  # a Ray cluster of two nodes

PROBLEMS = 6
EVAL_TIMEOUT = 600


def _samples(path: Path) -> None:
    from sandlot.judge import Datasets
    from sandlot.languages import LANGUAGES, Registry

    rows = Datasets(Registry(LANGUAGES, "/opt/sandlot")).get("humaneval").rows[:PROBLEMS]
    with path.open("w") as f:
        for row in rows:
            for completion in (row["canonical_solution"], "    return None\n"):
                f.write(json.dumps({"task_id": row["task_id"], "completion": completion}) + "\n")


def _eval(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "sandlot", "eval", "--dataset", "humaneval",
                        "--k", "1,2", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=EVAL_TIMEOUT, env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _verdicts(path: Path) -> dict[tuple[str, int], tuple[bool, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {(r["id"], r["sample"]): (r["accepted"], r["verdict"]) for r in rows}


def _pass_at_k(output: str) -> list[str]:
    return [line.split() for line in output.splitlines() if "pass@" in line]  # type: ignore[misc]


def test_two_ray_nodes_give_the_local_engines_pass_at_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engines (the actors on both nodes, and the local run) use this test session's uids.
    monkeypatch.setenv("SANDLOT_UID_BASE", str(UID_BASE))
    monkeypatch.setenv("SANDLOT_STATE_DIR", f"{STATE_ROOT}/ray")
    monkeypatch.setenv("SANDLOT_SLOTS", "1")
    samples = tmp_path / "samples.jsonl"
    _samples(samples)
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    local = _eval("--samples", str(samples), "--out", str(local_out))

    ray_out.write_text("".join(local_out.read_text().splitlines(keepends=True)[:2]))
    node = {"num_cpus": 1, "object_store_memory": 100 << 20}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    try:
        cluster.add_node(**node)
        cluster.wait_for_nodes()
        remote = _eval("--samples", str(samples), "--out", str(ray_out), "--ray", cluster.address)
    finally:
        cluster.shutdown()

    assert f"{2 * PROBLEMS} samples, 2 already judged, {2 * PROBLEMS - 2} to go" in remote
    assert _verdicts(ray_out) == _verdicts(local_out)
    assert len(_verdicts(local_out)) == 2 * PROBLEMS
    assert _pass_at_k(remote) == _pass_at_k(local) and _pass_at_k(local)
    counts = [int(line.split()[-3]) for line in remote.splitlines() if "ray node" in line]
    assert len(counts) == 2 and all(c > 0 for c in counts), remote
