"""`sandlot code --setup` and `sandlot test --setup`: the AI-coding route in phases.

The environment is set up once (cached) and every test run uses it, Aider works in a clone of
the base's history alone, and a pass is proved in a fresh box against the base's tests: the
result names the test files Aider changed and says whether the proof counted them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.coder.test_coder_flow import (
    BUGGY,
    KEY,
    RIGHT,
    code,
    code_body,
    fake,
    git,
    needs_aider,
    repo,
    roots,
    sandlot,
    user_repo,
)
from tests.conftest import Server, running_server
from tests.fake_llm import FakeLLM, Reply, serve, whole_file

pytestmark = [pytest.mark.root, pytest.mark.slow]
__all__ = ["fake", "repo", "roots", "user_repo"]  # fixtures, used by name
# A setup that needs no network; the tests check that its environment is there.
SETUP = "mkdir -p .venv && echo ready > .venv/marker"
CHECKED = "test -f .venv/marker && pytest -q"
CHEAT = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n"


def phased(repo: Path, fake: FakeLLM, *extra: str) -> tuple[object, dict]:
    return code(repo, fake, "--setup", SETUP, "--max-attempts", "1", *extra)


def test_sandlot_test_with_setup_runs_on_the_cached_environment(repo: Path):
    done = sandlot("test", "--repo", str(repo), "--cmd", CHECKED, "--setup", SETUP)
    assert done.returncode == 1 and "assert -1 == 5" in done.stdout, done.stderr
    assert "set up in" in done.stderr  # the first run made the environment
    (repo / "calc.py").write_text(RIGHT)  # the working tree's change is what is tested
    done = sandlot("test", "--repo", str(repo), "--cmd", CHECKED, "--setup", SETUP)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    assert "set up in" not in done.stderr  # cached
    # Control: without the setup, the environment is not there.
    done = sandlot("test", "--repo", str(repo), "--cmd", CHECKED)
    assert done.returncode == 1


@needs_aider
def test_a_phased_task_passes_and_is_proved(repo: Path, fake: FakeLLM):
    git(repo, "branch", "solution")  # a ref Aider must not see
    fake.queue(Reply(whole_file("calc.py", RIGHT)))
    done, body = phased(repo, fake, "--test-cmd", CHECKED, "--keep-worktree")
    assert done.returncode == 0 and body["status"] == "passed", body["message"]
    assert body["proof"]["resolved"] and body["proof"]["tamper"]["test_files_touched"] == []
    assert git(repo, "show", f"{body['branch']}:calc.py") + "\n" == RIGHT  # delivered
    assert (repo / "calc.py").read_text() == BUGGY
    tree = Path(body["worktree"])
    refs = git(tree, "for-each-ref", "--format=%(refname)")
    assert refs == f"refs/heads/{body['branch']}"  # no other branch, tag or remote
    assert git(tree, "rev-list", "--all", "--count") == "2"  # the base and Aider's commit


@needs_aider
def test_a_pass_that_needs_a_changed_test_is_not_proved(repo: Path, fake: FakeLLM):
    fake.queue(Reply(whole_file("test_calc.py", CHEAT)))
    done, body = phased(repo, fake, "--test-cmd", CHECKED, "test_calc.py")
    assert body["attempts"][0]["tests"]["passed"]  # with Aider's own test, the loop passed
    assert done.returncode == 1 and body["status"] == "failed_tests", body["message"]
    tamper = body["proof"]["tamper"]
    assert tamper["test_files_touched"] == ["test_calc.py"] and not tamper["counted"]
    # Control: when the task allows test changes, the proof counts them (and says so).
    fake.queue(Reply(whole_file("test_calc.py", CHEAT)))
    done, body = phased(repo, fake, "--test-cmd", CHECKED, "--allow-test-changes", "test_calc.py")
    assert body["status"] == "passed" and body["proof"]["tamper"]["counted"], body["message"]
    assert "test_calc.py" in body["message"]
    assert json.dumps(body)  # the whole result is JSON


TENANT_KEYS = ("phased-key-a-0123456789", "phased-key-b-0123456789")


@pytest.fixture(scope="module")
def keyed_coder_server(roots: Path) -> Iterator[tuple[Server, FakeLLM]]:
    """A /code server with two API keys (two tenants)."""
    with serve() as llm:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_API_BASE": llm.base, "SANDLOT_UID_BASE": "64730",
               "SANDLOT_CODER_ROOTS": str(roots), "SANDLOT_CODER_JOBS": "1",
               "SANDLOT_API_KEYS": ",".join(TENANT_KEYS)}  # fmt: skip
        with running_server("--slots", "1", env=env) as srv:
            yield srv, llm


@needs_aider
def test_post_code_with_setup_is_proved_on_its_tenants_environment(keyed_coder_server, user_repo):
    srv, llm = keyed_coder_server
    body = {**code_body(user_repo), "setup": SETUP, "test_cmd": CHECKED}
    a, b = ({"Authorization": f"Bearer {key}"} for key in TENANT_KEYS)
    with httpx.Client(base_url=srv.url, timeout=600) as c:
        llm.queue(Reply(whole_file("test_calc.py", CHEAT)))
        r = c.post("/code", json={**body, "files": ["test_calc.py"], "max_attempts": 1}, headers=a)
        out = r.json()
        assert r.status_code == 200 and out["status"] == "failed_tests", r.text
        assert out["proof"]["tamper"]["test_files_touched"] == ["test_calc.py"]
        assert not out["proof"]["tamper"]["counted"]
        # Control: the fix itself is proved, on the environment the first task set up.
        llm.queue(Reply(whole_file("calc.py", RIGHT)))
        r = c.post("/code", json=body, headers=a)
        out = r.json()
        assert r.status_code == 200 and out["status"] == "passed", r.text
        assert out["proof"]["resolved"] and out["proof"]["setup"]["cached"], out["proof"]
        assert git(user_repo, "show", f"{out['branch']}:calc.py") + "\n" == RIGHT
        # The environment is the tenant's: listed for its key, not found for another's.
        env = out["proof"]["setup"]["key"]
        assert env in {e["key"] for e in c.get("/repo/envs", headers=a).json()["entries"]}
        assert env not in {e["key"] for e in c.get("/repo/envs", headers=b).json()["entries"]}
        assert c.delete(f"/repo/envs/{env}", headers=b).status_code == 404
