"""Real projects graded end to end through a real server: prettytable (PyPI), qs (npm) and
go-multierror (the Go module proxy), each with a bug injected at its base (repo_projects.py).

For each: the gold patch is resolved, a no-op is not, a patch that edits the failing test
instead of the code is not and is named in the tamper report, and two grades at once share one
cached environment. Setups fetch the projects' real dependencies through the egress proxy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import running_server
from tests.repo_projects import PROJECTS, Task, make_task

pytestmark = [pytest.mark.root, pytest.mark.slow]
NOBODY = 65534  # the repositories' owner: the server runs git as it, never as root


@pytest.fixture(scope="module")
def where() -> Iterator[Path]:
    """Where the repositories are: a directory nobody may reach (pytest's own temp dirs are
    root's alone, and every pytest run of root makes them so again)."""
    path = Path(tempfile.mkdtemp(prefix="sandlot-test-repos-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def api(where: Path, tmp_path_factory: pytest.TempPathFactory):
    repo_dir = tmp_path_factory.mktemp("repo-cache")
    env = {"SANDLOT_REPO_DIR": str(repo_dir), "SANDLOT_CODER_ROOTS": str(where)}
    with (
        running_server("--slots", "2", env=env) as srv,
        httpx.Client(base_url=srv.url, timeout=1800) as client,
    ):
        yield client
    shutil.rmtree(repo_dir, ignore_errors=True)


@pytest.fixture(scope="module", params=sorted(PROJECTS))
def task(request: pytest.FixtureRequest, where: Path) -> tuple[str, Task]:
    project = PROJECTS[request.param]
    made = make_task(project, where)
    for dirpath, dirnames, filenames in os.walk(made.repo):
        for name in (*dirnames, *filenames):
            os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)
    os.chown(made.repo, NOBODY, NOBODY)
    return request.param, made


def grade(api: httpx.Client, name: str, task: Task, patch: str, **extra: object) -> dict:
    p = PROJECTS[name]
    body = {"repo": str(task.repo), "base": task.base, "patch": patch, "setup": p.setup,
            "test": p.test, "FAIL_TO_PASS": list(p.fail_to_pass),
            "PASS_TO_PASS": list(p.pass_to_pass), **extra}  # fmt: skip
    r = api.post("/repo/grade", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_gold_patch_is_resolved(api, task):
    name, t = task
    result = grade(api, name, t, t.gold)
    assert result["setup"]["ok"], result["setup"]
    assert result["resolved"] and result["status"] == "resolved", result["message"]
    assert set(result["fail_to_pass"].values()) == {"passed"}
    assert result["tamper"]["test_files_touched"] == []
    assert result["setup"]["egress"] == {} or result["setup"]["egress"]["denied"] == []


def test_a_no_op_is_not_resolved(api, task):
    name, t = task
    result = grade(api, name, t, "")
    assert not result["resolved"] and result["status"] == "unresolved"
    assert "failed" in result["fail_to_pass"].values()
    assert set(result["pass_to_pass"].values()) == {"passed"}  # the tests ran, and the rest pass


def test_editing_the_failing_test_is_not_resolved_and_is_named(api, task):
    name, t = task
    result = grade(api, name, t, t.cheat)
    assert not result["resolved"], result["message"]
    test_file = PROJECTS[name].cheat[0]
    assert result["tamper"]["test_files_touched"] == [test_file]
    assert result["tamper"]["restored"] == [test_file] and not result["tamper"]["counted"]
    assert test_file in result["message"]
    # Control: the same patch, its test edits counted, still does not fix the code.
    counted = grade(api, name, t, t.cheat, allow_test_changes=True)
    assert counted["tamper"]["counted"] and not counted["resolved"]


def test_two_grades_at_once_share_one_environment(api, task):
    name, t = task
    with ThreadPoolExecutor(2) as pool:
        gold, noop = pool.map(lambda patch: grade(api, name, t, patch), (t.gold, ""))
    assert gold["resolved"] and not noop["resolved"]
    assert gold["setup"]["key"] == noop["setup"]["key"]
    envs = api.get("/repo/envs").json()["entries"]
    mine = [e for e in envs if e["kind"] == "envs" and e["key"] == gold["setup"]["key"]]
    assert len(mine) == 1  # one environment on disk, mounted under both runs
