"""`sandlot code` and `sandlot test` end to end: the real Aider (a subprocess, from sandlot's
aider venv) against a scripted fake OpenAI-compatible server, tests run in the real sandbox.

Skipped when Aider is not installed (`sandlot setup --with-aider`, which `make test` runs).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandlot.coder.install import AiderMissing, find_aider
from tests.conftest import ROOT, STATE_ROOT
from tests.fake_llm import Fail, FakeLLM, Reply, serve, whole_file

pytestmark = [pytest.mark.root, pytest.mark.slow]

try:
    AIDER = find_aider()
except AiderMissing:
    AIDER = None
needs_aider = pytest.mark.skipif(AIDER is None, reason="aider not installed (make setup)")

KEY = "sk-test-0123456789abcdef"
BASE_ENV = {
    k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_API_BASE", "_BASE_URL"))
}
BASE_ENV.update(SANDLOT_STATE_DIR=f"{STATE_ROOT}/coder", SANDLOT_UID_BASE="64700")
BASE_ENV.pop("SANDLOT_CODER_MODEL", None)
BASE_ENV.pop("AIDER_MODEL", None)
MODEL = "openai/fake-coder"
WRONG = "def add(a, b):\n    return a * b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def git(repo: Path, *args: str) -> str:
    # safe.directory: the tests look, as root, into repositories of another user too
    return subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(repo), *args], check=True,
        capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _state_dir():
    yield
    state = Path(BASE_ENV["SANDLOT_STATE_DIR"])
    if state.is_dir() and not any(state.iterdir()):
        state.rmdir()  # each CLI run's jail removed its own part


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo whose only test fails: calc.add subtracts."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TEST)
    (root / "notes.txt").write_text("untracked, must survive\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "calc.py", "test_calc.py")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def fake():
    with serve() as llm:
        yield llm


def sandlot(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "sandlot", *args],
        cwd=ROOT, env={**BASE_ENV, **(env or {})}, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def llm_env(fake: FakeLLM | None, base: str | None = None) -> dict[str, str]:
    url = base or (fake.base if fake else "")
    return {"OPENAI_API_KEY": KEY, "OPENAI_API_BASE": url}


def code(repo: Path, fake: FakeLLM | None, *extra: str, base: str | None = None):
    done = sandlot(
        "code", "--repo", str(repo), "--message", "make add() add", "--model", MODEL,
        "--edit-format", "whole", "--test-cmd", "pytest -q", "--json", *extra, "calc.py",
        env=llm_env(fake, base),
    )  # fmt: skip
    try:
        body = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"no JSON (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done, body


# --- sandlot test -------------------------------------------------------------------------------


def test_sandlot_test_runs_the_repo_tests_in_the_sandbox(repo: Path):
    done = sandlot("test", "--repo", str(repo), "--cmd", "pytest -q")
    assert done.returncode == 1, done.stderr
    assert "assert -1 == 5" in done.stdout
    (repo / "calc.py").write_text(RIGHT)  # the working tree is what is tested
    done = sandlot("test", "--repo", str(repo), "--cmd", "pytest -q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_sandlot_test_is_sandboxed_and_reports_the_status(repo: Path):
    cmd = "python -c 'import socket; socket.create_connection((\"1.1.1.1\", 443), 3)'; exit 7"
    done = sandlot("test", "--repo", str(repo), "--cmd", cmd, "--json")
    body = json.loads(done.stdout)
    assert done.returncode == 7 and body["exit_code"] == 7 and not body["passed"]
    assert "unreachable" in body["output_tail"]  # no network in the box
    done = sandlot("test", "--repo", str(repo), "--cmd", "id -u; ls /root 2>&1; exit 0")
    assert done.returncode == 0 and not done.stdout.startswith("0\n")


def test_sandlot_test_time_limit_exits_124(repo: Path):
    done = sandlot("test", "--repo", str(repo), "--cmd", "sleep 30", "--timeout", "1")
    assert done.returncode == 124 and "time limit" in done.stderr


# --- sandlot code: the real flow ----------------------------------------------------------------


@needs_aider
def test_wrong_edit_then_feedback_then_right_edit_passes(repo: Path, fake: FakeLLM):
    fake.queue(Reply(whole_file("calc.py", WRONG)), Reply(whole_file("calc.py", RIGHT)))
    head_before = git(repo, "rev-parse", "HEAD")
    done, body = code(repo, fake, "--max-attempts", "3", "--stream")
    assert done.returncode == 0, done.stderr
    assert body["status"] == "passed"
    assert [a["tests"]["passed"] for a in body["attempts"]] == [False, True]
    assert "assert 6 == 5" in body["attempts"][0]["tests"]["output_tail"]
    # The failure went back to the model with the original request.
    prompts = [r.last_user for r in fake.main_requests()]
    assert len(prompts) == 2 and "make add() add" in prompts[1]
    assert "assert 6 == 5" in prompts[1]
    assert all(r.body.get("stream") for r in fake.main_requests())  # SSE served
    assert fake.main_requests()[0].headers["authorization"] == f"Bearer {KEY}"
    # The commit is on the worktree branch; the user's branch and tree are untouched.
    branch = body["branch"]
    assert branch.startswith("sandlot/coder-")
    assert git(repo, "rev-parse", branch) == body["head"] != head_before
    assert git(repo, "show", f"{branch}:calc.py") + "\n" == RIGHT
    assert body["base"] == head_before and "+    return a + b" in body["diff"]
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "main"
    assert (repo / "calc.py").read_text() == BUGGY
    assert git(repo, "status", "--porcelain") == "?? notes.txt"
    assert git(repo, "worktree", "list").count("\n") == 0  # the temp worktree is gone
    # No key or endpoint in the result.
    assert KEY not in done.stdout + done.stderr and fake.base not in done.stdout


@needs_aider
def test_apply_fast_forwards_only_after_the_tests_pass(repo: Path, fake: FakeLLM, tmp_path):
    fake.queue(Reply(whole_file("calc.py", RIGHT)))
    out = tmp_path / "result.json"
    done, body = code(repo, fake, "--apply", "--max-attempts", "1", "--output", str(out))
    assert done.returncode == 0 and body["status"] == "passed" and body["applied"]
    assert json.loads(out.read_text()) == body
    assert git(repo, "rev-parse", "HEAD") == body["head"]
    assert (repo / "calc.py").read_text() == RIGHT


@needs_aider
def test_tests_still_failing_after_n_attempts(repo: Path, fake: FakeLLM):
    fake.queue(
        Reply(whole_file("calc.py", WRONG)),
        Reply(whole_file("calc.py", "def add(a, b):\n    return 0\n")),
    )
    before = git(repo, "rev-parse", "HEAD")
    done, body = code(repo, fake, "--max-attempts", "2", "--apply")
    assert done.returncode == 1 and body["status"] == "failed_tests"
    assert len(body["attempts"]) == 2 and not body["applied"]
    assert not any(a["tests"]["passed"] for a in body["attempts"])
    assert git(repo, "rev-parse", "HEAD") == before  # --apply never applies failing work


@needs_aider
def test_no_change_made(repo: Path, fake: FakeLLM):
    fake.queue(Reply("I looked at calc.py and would not change anything."))
    done, body = code(repo, fake)
    assert done.returncode == 4 and body["status"] == "no_changes"
    assert body["branch"] is None and "sandlot/coder" not in git(repo, "branch")


@needs_aider
def test_model_answers_401(repo: Path, fake: FakeLLM):
    fake.default = Fail(401, "Incorrect API key provided", "invalid_api_key")
    done, body = code(repo, fake)
    assert done.returncode == 3 and body["status"] == "llm_error"
    assert "AuthenticationError" in body["message"] and "API key" in body["message"]
    assert KEY not in done.stdout + done.stderr


@needs_aider
def test_model_endpoint_down_fails_in_bounded_time(repo: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # nothing listens once closed
    done, body = code(repo, None, "--llm-grace", "3", base=dead)
    assert done.returncode == 3 and body["status"] == "llm_error"
    # We stopped it 3 s after its first retry; aider alone would retry for ~80 s.
    assert body["attempts"][0]["stopped_for_llm"] is True
    assert dead not in done.stdout  # endpoints are redacted too


# --- bad input: refused before anything runs ----------------------------------------------------


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    text = " ".join(done.stderr.split())  # rich wraps long lines
    for word in words:
        assert word in text, done.stderr


def run_code(repo: Path, *args: str, env: dict[str, str] | None = None):
    return sandlot(
        "code", "--repo", str(repo), "-m", "x", "--test-cmd", "pytest -q", *args,
        env=env if env is not None else {"OPENAI_API_KEY": KEY},
    )  # fmt: skip


def test_not_a_git_repository(tmp_path: Path):
    refused(run_code(tmp_path, "--model", MODEL), "not a git repository")


def test_dirty_state_is_refused(repo: Path):
    (repo / "calc.py").write_text(RIGHT)
    refused(run_code(repo, "--model", MODEL, "calc.py"), "uncommitted changes", "calc.py")
    refused(run_code(repo, "--model", MODEL, "--apply", "--allow-dirty"), "uncommitted")
    assert (repo / "calc.py").read_text() == RIGHT


def test_unknown_files(repo: Path):
    refused(run_code(repo, "--model", MODEL, "nope.py"), "unknown files", "nope.py")
    refused(run_code(repo, "--model", MODEL, "notes.txt"), "unknown files")  # untracked
    refused(run_code(repo, "--model", MODEL, "--read", "../../etc/passwd"), "unknown --read")


def test_missing_model_or_key(repo: Path):
    refused(run_code(repo, "calc.py"), "no model", "--model")
    refused(run_code(repo, "--model", MODEL, env={}), "OPENAI_API_KEY")
    refused(run_code(repo, "--model", "anthropic/claude-x", env={}), "ANTHROPIC_API_KEY")


def test_missing_aider_says_how_to_install(repo: Path, tmp_path: Path):
    env = {"OPENAI_API_KEY": KEY, "SANDLOT_RUNTIME_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "SANDLOT_AIDER": ""}  # fmt: skip
    refused(run_code(repo, "--model", MODEL, env=env), "setup --with-aider")
    assert git(repo, "branch") == "* main"


# --- .aider.conf.yml, ask mode ------------------------------------------------------------------

CONF = "model: openai/fake-coder\nedit-format: whole\nread: CONVENTIONS.md\n"
MARKER = "HOUSE-RULE-7f3a: name everything in French"


def add_conf(repo: Path) -> None:
    (repo / ".aider.conf.yml").write_text(CONF)
    (repo / "CONVENTIONS.md").write_text(MARKER + "\n")
    git(repo, "add", ".aider.conf.yml", "CONVENTIONS.md")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "conf")


@needs_aider
def test_aider_conf_is_ignored_unless_asked_for(repo: Path, fake: FakeLLM):
    add_conf(repo)
    fake.queue(Reply(whole_file("calc.py", RIGHT)))
    done, body = code(repo, fake, "--max-attempts", "1")
    assert body["status"] == "passed", done.stderr
    assert MARKER not in json.dumps(fake.main_requests()[0].body)
    assert body["files_changed"] == ["calc.py"]  # the hidden conf is not a deletion

    fake.queue(Reply(whole_file("calc.py", RIGHT)))
    done = sandlot(
        "code", "--repo", str(repo), "-m", "make add() add", "--aider-config",
        "--test-cmd", "pytest -q", "--json", "calc.py", env=llm_env(fake),
    )  # fmt: skip
    body = json.loads(done.stdout)
    assert body["status"] == "passed" and body["model"] == "openai/fake-coder", done.stderr
    assert MARKER in json.dumps(fake.main_requests()[-1].body)  # its `read:` was honoured


@needs_aider
def test_ask_mode_answers_and_edits_nothing(repo: Path, fake: FakeLLM):
    fake.queue(Reply("add() subtracts b from a, which is why test_add fails."))
    done = sandlot(
        "code", "--repo", str(repo), "--ask", "-m", "explain add()", "--model", MODEL,
        "calc.py", env=llm_env(fake),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "subtracts b from a" in done.stdout
    assert "sandlot/coder" not in git(repo, "branch")


# --- POST /code, for agents ---------------------------------------------------------------------


OWNER = 65150  # the uid that owns the repositories /code works on (no passwd entry needed)


@pytest.fixture(scope="module")
def roots() -> Iterator[Path]:
    """The one directory /code may edit: outside /tmp/pytest-of-root (mode 700), so that its
    repositories' owner can reach them."""
    top = Path(tempfile.mkdtemp(prefix="sandlot-coder-roots-"))
    top.chmod(0o755)
    os.chown(top, OWNER, OWNER)
    yield top
    shutil.rmtree(top)


@pytest.fixture
def user_repo(roots: Path, tmp_path: Path) -> Path:
    """The repo fixture's repository, in `roots` and owned by OWNER, as a user's would be."""
    home = Path(tempfile.mkdtemp(dir=roots))
    home.chmod(0o755)
    root = home / "repo"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TEST)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "calc.py", "test_calc.py")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    for path in (home, *home.rglob("*")):
        os.chown(path, OWNER, OWNER, follow_symlinks=False)
    return root


def owners(repo: Path) -> set[int]:
    return {p.lstat().st_uid for p in (repo / ".git").rglob("*")}


@pytest.fixture(scope="module")
def coder_server(roots: Path):
    from tests.conftest import running_server

    with serve() as llm:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_API_BASE": llm.base, "SANDLOT_UID_BASE": "64720",
               "SANDLOT_CODER_ROOTS": str(roots), "SANDLOT_CODER_JOBS": "1"}  # fmt: skip
        with running_server("--slots", "1", env=env) as srv:
            yield srv, llm


def code_body(repo: Path) -> dict[str, object]:
    return {"repo": str(repo), "message": "make add() add", "files": ["calc.py"],
            "model": MODEL, "edit_format": "whole", "test_cmd": "pytest -q"}  # fmt: skip


@needs_aider
def test_post_code(coder_server, user_repo: Path, repo: Path):
    import httpx

    srv, llm = coder_server
    llm.queue(Reply(whole_file("calc.py", WRONG)), Reply(whole_file("calc.py", RIGHT)))
    body = code_body(user_repo)
    with httpx.Client(base_url=srv.url, timeout=300) as c:
        r = c.post("/code", json=body)
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["status"] == "passed" and len(out["attempts"]) == 2
        assert git(user_repo, "show", f"{out['branch']}:calc.py") + "\n" == RIGHT
        assert (user_repo / "calc.py").read_text() == BUGGY
        assert KEY not in r.text and llm.base not in r.text
        # Bad input: a clear 4xx before anything runs.
        r = c.post("/code", json={**body, "repo": str(user_repo.parent)})
        assert r.status_code == 400 and "not a git repository" in r.json()["detail"]
        r = c.post("/code", json={**body, "files": ["missing.py"]})
        assert r.status_code == 400 and "missing.py" in r.json()["detail"]
        assert c.post("/code", json={"repo": str(user_repo)}).status_code == 422
        r = c.post("/code", json={**body, "repo": str(repo)})  # outside SANDLOT_CODER_ROOTS
        assert r.status_code == 400 and "outside" in r.json()["detail"]


@needs_aider
def test_attack_code_runs_git_and_aider_as_the_repo_owner_not_root(coder_server, user_repo):
    """Every file that git and Aider write for a /code task belongs to the repository's owner:
    the commit's objects and refs, the worktree's records; none is root's."""
    import httpx

    srv, llm = coder_server
    before = {p for p in (user_repo / ".git").rglob("*")}
    llm.queue(Reply(whole_file("calc.py", RIGHT)))
    r = httpx.post(srv.url + "/code", json=code_body(user_repo), timeout=300)
    assert r.status_code == 200 and r.json()["status"] == "passed", r.text
    written = {p for p in (user_repo / ".git").rglob("*")} - before
    assert any("sandlot/coder-" in str(p) for p in written), "the branch was not written"
    assert owners(user_repo) == {OWNER}, "git wrote into the repository as another user"
    assert {p.lstat().st_uid for p in written} == {OWNER}


def test_attack_code_on_a_root_owned_repository_is_refused(coder_server, roots: Path):
    """A repository of root's under coder_roots: git and Aider would have to run as root."""
    import httpx

    srv, _ = coder_server
    mine = roots / "root-owned"
    mine.mkdir()
    try:
        git(mine, "init", "-q")
        r = httpx.post(srv.url + "/code", json=code_body(mine), timeout=60)
        assert r.status_code == 403 and "owned by root" in r.json()["detail"], r.text
        assert owners(mine) == {0} and "sandlot/coder" not in git(mine, "branch", "-a")
    finally:
        shutil.rmtree(mine)


def test_attack_code_is_off_without_coder_roots(client, repo: Path):
    """The session's server has no coder_roots: /code refuses every repository, its own too."""
    before = git(repo, "branch", "-a")
    r = client.post("/code", json=code_body(repo))
    assert r.status_code == 403 and "coder_roots" in r.json()["detail"], r.text
    assert git(repo, "branch", "-a") == before


@needs_aider
def test_attack_code_jobs_are_capped(coder_server, user_repo: Path):
    """coder_jobs=1: a second /code while one runs is refused at once with a retryable 504."""
    import httpx

    srv, llm = coder_server
    llm.queue(Reply(whole_file("calc.py", RIGHT), delay=6))
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(httpx.post, srv.url + "/code", json=code_body(user_repo), timeout=300)
        deadline = time.monotonic() + 60
        while llm.script and not first.done() and time.monotonic() < deadline:
            time.sleep(0.1)  # until the first job has taken its reply: it is with the model
        assert not first.done(), f"the first job ended before the model: {first.result().text}"
        assert not llm.script, "the first job did not reach the model in 60 s"
        r = httpx.post(srv.url + "/code", json=code_body(user_repo), timeout=60)
        assert r.status_code == 504 and "retry" in r.json()["detail"], r.text
        assert first.result().json()["status"] == "passed"


def test_sandlot_test_on_a_sandlot_server(coder_server, repo: Path):
    import httpx

    srv, llm = coder_server
    done = sandlot("test", "--repo", str(repo), "--cmd", "pytest -q", "--sandbox-url", srv.url)
    assert done.returncode == 1 and "assert -1 == 5" in done.stdout, done.stderr
    (repo / "calc.py").write_text(RIGHT)
    done = sandlot("test", "--repo", str(repo), "--cmd", "pytest -q",
                   env={"SANDBOX_FUSION_URL": srv.url})  # fmt: skip
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stderr
    not_sandlot = sandlot("test", "--repo", str(repo), "--cmd", "true", "--sandbox-url", llm.url)
    assert not_sandlot.returncode == 2 and "not a sandlot server" in not_sandlot.stderr
    r = httpx.post(srv.url + "/repo_tests", json={"cmd": "true", "files": {"../x": ""}})
    assert r.status_code == 400 and "not allowed" in r.json()["detail"]
    r = httpx.post(srv.url + "/repo_tests", json={"cmd": "true", "files": {"x": "@@"}})
    assert r.status_code == 400 and "base64" in r.json()["detail"]


@needs_aider
def test_aider_past_its_time_limit(repo: Path, fake: FakeLLM):
    fake.queue(Reply(whole_file("calc.py", RIGHT), delay=60))
    done, body = code(repo, fake, "--timeout", "8")  # the reply would have come at 60 s
    assert done.returncode == 124 and body["status"] == "timeout"
    assert "8s" in body["message"] and body["branch"] is None


@needs_aider
def test_sandlot_test_as_aiders_own_test_cmd(repo: Path, fake: FakeLLM, tmp_path: Path):
    """Aider's --auto-test loop, with `sandlot test` as its --test-cmd: the sandbox's failure
    output reaches the model, and the second edit passes."""
    fake.queue(Reply(whole_file("calc.py", WRONG)), Reply(whole_file("calc.py", RIGHT)))
    test_cmd = f"{sys.executable} -m sandlot test --cmd 'pytest -q'"
    home = tmp_path / "home"
    home.mkdir()
    env = {**BASE_ENV, **llm_env(fake), "HOME": str(home), "OPENAI_BASE_URL": fake.base,
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TERM": "dumb"}  # fmt: skip
    done = subprocess.run(
        [AIDER, "--model", MODEL, "--edit-format", "whole", "--yes-always", "--no-pretty",
         "--no-stream", "--no-check-update", "--analytics-disable", "--no-gitignore",
         "--no-show-model-warnings", "--auto-test", "--test-cmd", test_cmd,
         "--message", "make add() add", "calc.py"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    prompts = [r.last_user for r in fake.main_requests()]
    assert len(prompts) == 2, done.stdout[-3000:]
    assert "assert 6 == 5" in prompts[1]  # the sandbox's pytest output, fed back by aider
    assert (repo / "calc.py").read_text() == RIGHT
