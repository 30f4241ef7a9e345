"""`/health` says whether repository tasks can run, and why not, through a real server: the
egress proxy it reports is the one setups use, and what makes them impossible (a wrong
`egress_allow`, no squid) is named there and in the routes' answers, while code still runs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sandlot.errors import JailUnavailable
from sandlot.repos.egress import REGISTRIES, Egress
from tests.conftest import running_server
from tests.security.test_repos_attacks import make_repo, tarball

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.fixture(scope="module")
def cache() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sandlot-health-cache-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_health_reports_the_proxy_setups_go_through(cache: Path, tmp_path: Path):
    env = {"SANDLOT_REPO_DIR": str(cache), "SANDLOT_EGRESS_ALLOW": "pkgs.example.org"}
    with (
        running_server("--slots", "1", env=env) as srv,
        httpx.Client(base_url=srv.url, timeout=600) as api,
    ):
        before = api.get("/health").json()["repositories"]
        assert before["available"] and before["problem"] is None, before
        assert before["egress"] == "idle" and before["store"] == str(cache)
        registries = {h for hosts in REGISTRIES.values() for h in hosts}
        assert set(before["allow"]) == registries | {"pkgs.example.org"}
        repo = tmp_path / "plain"
        base = make_repo(repo, {"README": "nothing to install\n"})
        r = api.post("/repo/setup", json={"tarball": tarball(repo), "base": base,
                                          "setup": "echo installed"})  # fmt: skip
        assert r.status_code == 200 and r.json()["ok"], r.text
        after = api.get("/health").json()["repositories"]
        port = int(after["egress"].removeprefix("squid on 127.0.0.1:"))
        # The port it names is the squid this server started, listening on the loopback alone.
        listening = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True,
                                   text=True).stdout.split()  # fmt: skip
        assert f"127.0.0.1:{port}" in listening, listening


def test_a_wrong_allow_list_is_named_and_code_still_runs(cache: Path, tmp_path: Path):
    env = {"SANDLOT_REPO_DIR": str(cache), "SANDLOT_EGRESS_ALLOW": "pypi.org,10.0.0.1"}
    with (
        running_server("--slots", "1", env=env) as srv,
        httpx.Client(base_url=srv.url, timeout=600) as api,
    ):
        health = api.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"  # code runs
        repos = health.json()["repositories"]
        assert not repos["available"] and "egress_allow: '10.0.0.1'" in repos["problem"], repos
        repo = tmp_path / "plain"
        base = make_repo(repo, {"README": "nothing to install\n"})
        r = api.post("/repo/setup", json={"tarball": tarball(repo), "base": base, "setup": ""})
        # The operator's setting, not the request: 503, with the same reason as /health.
        assert r.status_code == 503 and r.json()["detail"] == repos["problem"], r.text
        ran = api.post("/run_code", json={"code": "print(6 * 7)", "language": "python"})
        assert ran.json()["run_result"]["stdout"] == "42\n"  # control: the sandbox is unaffected


def test_no_squid_is_the_problem_named(tmp_path: Path):
    missing = Egress(tmp_path / "egress", ("pypi.org",), squid=str(tmp_path / "no-squid"))
    assert "is not installed: run `sandlot setup`" in (missing.problem() or "")
    with pytest.raises(JailUnavailable, match="not installed"):
        missing.start()
    assert Egress(tmp_path / "egress", ("pypi.org",)).problem() is None  # control: Debian's
