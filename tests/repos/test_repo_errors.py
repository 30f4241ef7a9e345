"""A repository git cannot use, through a real server: POST /code and /repo/* answer a 4xx that
names the problem (for a git failure: the git command and git's first line), never a 500 or a
traceback; a good repository, the control, still works."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import UID_BASE, running_server

pytestmark = [pytest.mark.root, pytest.mark.slow]

OWNER = 65152  # owns the repositories under coder_roots (git runs as the owner, never root)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t",
         "-C", str(repo), *args], check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture(scope="module")
def roots() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="sandlot-repo-errors-"))
    top.chmod(0o755)
    os.chown(top, OWNER, OWNER)
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def api(roots: Path) -> Iterator[httpx.Client]:
    cache = Path(tempfile.mkdtemp(prefix="sandlot-repo-errors-cache-", dir="/var/tmp"))
    env = {"SANDLOT_CODER_ROOTS": str(roots), "SANDLOT_REPO_DIR": str(cache),
           "SANDLOT_UID_BASE": str(UID_BASE + 12)}  # fmt: skip
    try:
        with (
            running_server("--slots", "1", env=env) as srv,
            httpx.Client(base_url=srv.url, timeout=600) as client,
        ):
            yield client
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def owned(path: Path) -> Path:
    for p in (path, *path.rglob("*")):
        os.chown(p, OWNER, OWNER, follow_symlinks=False)
    return path


def make_repo(roots: Path, name: str) -> Path:
    """A git repository of OWNER's with one commit."""
    repo = roots / name
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    return owned(repo)


def corrupt(repo: Path) -> Path:
    """The repository without its base commit's tree: git knows the commit, cannot read it."""
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    return repo


def unreadable(repo: Path) -> Path:
    """The repository's objects closed to its owner (a permission problem of the machine)."""
    (repo / ".git" / "objects").chmod(0)
    return repo


def code(api: httpx.Client, repo: Path) -> httpx.Response:
    # No model on this server: a request that passes every git check stops at "no model".
    return api.post("/code", json={"repo": str(repo), "message": "make add() add",
                                   "files": ["calc.py"]})  # fmt: skip


def repo_test(api: httpx.Client, repo: Path, base: str = "HEAD") -> httpx.Response:
    return api.post("/repo/test", json={"repo": str(repo), "base": base, "setup": "",
                                        "test": "grep -q 'a + b' calc.py"})  # fmt: skip


def detail(r: httpx.Response, status: int) -> str:
    """The answer's detail, once it is `status` with a plain reason (no traceback, no 500)."""
    assert r.status_code == status, r.text
    text = r.json()["detail"]
    assert "Traceback" not in text and "internal error" not in text, text
    return text


def test_code_bad_path(api: httpx.Client, roots: Path):
    assert "is not a directory" in detail(code(api, roots / "nowhere"), 400)


def test_code_not_a_git_repository(api: httpx.Client, roots: Path):
    plain = roots / "plain"
    plain.mkdir()
    (plain / "calc.py").write_text("x = 1\n")
    owned(plain)
    assert "is not a git repository" in detail(code(api, plain), 400)


def test_code_corrupt_repository_names_the_git_command(api: httpx.Client, roots: Path):
    repo = corrupt(make_repo(roots, "code-corrupt"))
    text = detail(code(api, repo), 400)
    assert text.startswith("`git ") and f"failed in {repo}" in text and "bad tree" in text, text
    assert "git fsck" in text, text


def test_code_unreadable_repository_says_so(api: httpx.Client, roots: Path):
    repo = unreadable(make_repo(roots, "code-unreadable"))
    text = detail(code(api, repo), 400)
    assert "`git rev-parse` failed" in text and "owner can read" in text, text


def test_code_control_a_good_repository_passes_the_git_checks(api: httpx.Client, roots: Path):
    repo = make_repo(roots, "code-good")
    assert "no model" in detail(code(api, repo), 400)  # past every git check: the next one


def test_repo_bad_path(api: httpx.Client, roots: Path):
    assert "is not a directory" in detail(repo_test(api, roots / "nowhere"), 400)


def test_repo_not_a_git_repository(api: httpx.Client, roots: Path):
    plain = roots / "repo-plain"
    plain.mkdir()
    owned(plain)
    assert "is not a git repository" in detail(repo_test(api, plain), 400)


def test_repo_bad_ref_names_the_ref_and_git(api: httpx.Client, roots: Path):
    repo = make_repo(roots, "repo-bad-ref")
    text = detail(repo_test(api, repo, "no-such-branch"), 400)
    assert f"`git fetch` failed in {repo}" in text and "no-such-branch" in text, text


def test_repo_corrupt_repository_names_the_git_command(api: httpx.Client, roots: Path):
    repo = corrupt(make_repo(roots, "repo-corrupt"))
    text = detail(repo_test(api, repo), 400)
    assert f"`git fetch` failed in {repo}" in text and "intact" in text, text


def test_repo_unreadable_repository_says_so(api: httpx.Client, roots: Path):
    repo = unreadable(make_repo(roots, "repo-unreadable"))
    text = detail(repo_test(api, repo), 400)
    assert f"`git fetch` failed in {repo}" in text and "owner can read" in text, text


def test_repo_control_a_good_repository_is_tested(api: httpx.Client, roots: Path):
    repo = make_repo(roots, "repo-good")
    r = repo_test(api, repo)
    assert r.status_code == 200, r.text
    assert r.json()["passed"] is True, r.text


@pytest.mark.parametrize("route", ["/repo/setup", "/repo/test", "/repo/grade"])
def test_attack_a_tarball_that_is_not_base64_is_a_400(api: httpx.Client, route: str):
    # the fuzzer's find: "AAA" made the decoder raise inside the route (a 500)
    r = api.post(route, json={"tarball": "AAA", "base": "0", "patch": ""})
    assert "tarball is not valid base64" in detail(r, 400)
