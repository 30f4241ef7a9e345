"""`sandlot code --setup` and `sandlot test --setup`: the AI-coding route in phases.

The environment is set up once (cached) and every test run uses it, Aider works in a clone of
the base's history alone, and a pass is proved in a fresh box against the base's tests: the
result names the test files Aider changed and says whether the proof counted them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_llm import FakeLLM, Reply, whole_file
from tests.test_coder_flow import BUGGY, RIGHT, code, fake, git, needs_aider, repo, sandlot

pytestmark = [pytest.mark.root, pytest.mark.slow]
__all__ = ["fake", "repo"]  # fixtures, used by name
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
