"""`sandlot grade` and `sandlot env list` / `env rm` as a user runs them, in the real jail: a
patch graded against the base's tests on a cached environment (exit 0 only when resolved), the
test files it touched named, and the environment it made listed and removed."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.coder.test_coder_flow import BUGGY, RIGHT, git, repo, sandlot

pytestmark = [pytest.mark.root, pytest.mark.slow]
__all__ = ["repo"]  # a fixture, used by name
SETUP = "mkdir -p .venv && echo ready > .venv/marker"  # no network; the test checks it is there
TEST = "test -f .venv/marker && pytest -q"
F2P = "test_calc.py::test_add"
CHEAT = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n"


@pytest.fixture
def cache() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sandlot-cli-cache-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
    path.with_name(f"{path.name}.diff").unlink(missing_ok=True)  # grade()'s patch file


def diff(repo: Path, name: str, text: str) -> str:
    """The patch that makes `name` hold `text`, the working tree left as it was."""
    (repo / name).write_text(text)
    patch = git(repo, "diff") + "\n"
    git(repo, "checkout", "--", name)
    return patch


def grade(repo: Path, cache: Path, patch: str, *extra: str):  # type: ignore[no-untyped-def]
    patch_file = cache.with_name(f"{cache.name}.diff")
    patch_file.write_text(patch)
    return sandlot(
        "grade", "--repo", str(repo), "--patch", str(patch_file),
        "--f2p", F2P, "--setup", SETUP, "--test", TEST, *extra,
        env={"SANDLOT_REPO_DIR": str(cache)},
    )  # fmt: skip


def test_sandlot_grade_resolves_the_fix_and_names_a_test_edit(repo: Path, cache: Path):
    done = grade(repo, cache, diff(repo, "calc.py", RIGHT))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"passed   {F2P}" in done.stdout and "resolved" in done.stderr
    # A patch that edits the failing test instead of the code: the base's test is graded.
    cheat = diff(repo, "test_calc.py", CHEAT)  # expects what the bug gives
    done = grade(repo, cache, cheat, "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["status"] == "unresolved", result
    assert result["tamper"]["test_files_touched"] == ["test_calc.py"]
    assert result["tamper"]["restored"] == ["test_calc.py"] and not result["tamper"]["counted"]
    # The same cheat, allowed to change tests, counts them (and so passes): the rule is what bit.
    done = grade(repo, cache, cheat, "--json", "--allow-test-changes")
    assert json.loads(done.stdout)["tamper"]["counted"] and done.returncode == 0, done.stdout
    # A no-op is not resolved.
    done = grade(repo, cache, "")
    assert done.returncode == 1 and f"failed   {F2P}" in done.stdout, done.stdout + done.stderr
    assert BUGGY in (repo / "calc.py").read_text()  # the user's tree is never touched


def test_sandlot_env_lists_and_removes_what_a_grade_set_up(repo: Path, cache: Path):
    env = {"SANDLOT_REPO_DIR": str(cache)}
    assert grade(repo, cache, diff(repo, "calc.py", RIGHT)).returncode == 0
    listed = json.loads(sandlot("env", "list", "--json", env=env).stdout)
    envs = [e for e in listed if e["kind"] == "envs"]
    assert len(envs) == 1 and envs[0]["size"] > 0, listed
    key = envs[0]["key"]
    assert key in sandlot("env", "list", env=env).stdout  # the table too
    done = sandlot("env", "rm", key, env=env)
    assert done.returncode == 0, done.stderr
    left = json.loads(sandlot("env", "list", "--json", env=env).stdout)
    assert key not in {e["key"] for e in left} and not (cache / "envs" / key).exists()
    # Control: a grade after it sets the environment up again, under the same key.
    done = grade(repo, cache, diff(repo, "calc.py", RIGHT), "--json")
    assert json.loads(done.stdout)["setup"]["key"] == key
    assert not json.loads(done.stdout)["setup"]["cached"]


def test_an_environment_is_keyed_by_the_manifests_and_the_command_not_the_sources(
    repo: Path, cache: Path
):
    def commit(name: str, text: str) -> str:
        (repo / name).write_text(text)
        git(repo, "add", name)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)
        return git(repo, "rev-parse", "HEAD")

    def setup_of(base: str, *extra: str) -> dict:
        done = grade(repo, cache, "", "--base", base, "--json", *extra)
        return json.loads(done.stdout)["setup"]

    first = setup_of(commit("requirements.txt", "pytest\n"))
    assert first["ok"] and not first["cached"], first
    # Another commit whose manifests are the same reuses it.
    again = setup_of(commit("calc.py", BUGGY + "\n# a comment\n"))
    assert again["key"] == first["key"] and again["cached"]
    # A changed manifest, or another setup command: an environment of its own.
    changed = setup_of(commit("requirements.txt", "pytest\nsix\n"))
    assert changed["key"] != first["key"] and not changed["cached"]
    other = setup_of(git(repo, "rev-parse", "HEAD"), "--setup", SETUP + " && true")
    assert other["key"] not in (first["key"], changed["key"]) and not other["cached"]
