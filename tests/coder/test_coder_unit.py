"""The coder's parts without Aider: redaction, env, repo files for the box, git checks, install."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandlot.coder import aider, install, loop, worktree
from sandlot.coder.testrun import TestOutcome, collect_files
from sandlot.errors import InvalidRequest, TooLarge


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("A = 1\n")
    (root / ".gitignore").write_text("build/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    return root


def test_redactor_hides_keys_and_endpoints():
    env = aider.model_env(
        {"OPENAI_API_KEY": "sk-secret-1", "OPENAI_BASE_URL": "http://llm.internal:9/v1",
         "OPENAI_API_BASE": "http://other/v1", "HOME": "/root", "ANTHROPIC_API_KEY": "ak-2"}
    )  # fmt: skip
    # OPENAI_BASE_URL wins inside the OpenAI client, so both names get its value.
    assert env["OPENAI_API_BASE"] == env["OPENAI_BASE_URL"] == "http://llm.internal:9/v1"
    assert "HOME" not in env
    redact = aider.Redactor(env)
    text = redact("key sk-secret-1 at http://llm.internal:9/v1/chat and ak-2")
    assert "sk-secret-1" not in text and "llm.internal" not in text and "ak-2" not in text
    assert "[OPENAI_API_KEY redacted]" in text


def test_llm_error_patterns():
    assert aider.LLM_ERROR.search("litellm.AuthenticationError: AuthenticationError: x")
    assert aider.LLM_ERROR.search("The API provider's servers are down or overloaded.")
    assert not aider.LLM_ERROR.search("Applied edit to calc.py\nTokens: 10 sent")
    out = "Aider v0.86.2\nAdded calc.py to the chat.\n\nIt subtracts.\n\nTokens: 1 sent\n"
    assert aider.answer_text(out) == "It subtracts."


def test_argv_is_headless_and_safe(tmp_path: Path):
    opts = aider.AiderOptions(executable="/x/aider", model="openai/m", edit_format="diff")
    args = aider.argv(opts, tmp_path, tmp_path / "m.txt", ["a.py"], ["README.md"])
    for flag in ("--yes-always", "--no-auto-commits", "--no-gitignore", "--analytics-disable",
                 "--no-check-update", "--no-pretty", "--no-suggest-shell-commands"):  # fmt: skip
        assert flag in args
    assert args[-1] == "a.py" and args[args.index("--read") + 1] == "README.md"
    assert not any("sk-" in a for a in args)  # keys travel in the environment only


def test_collect_files_skips_ignored_and_symlinks(repo: Path):
    (repo / "new.py").write_text("untracked but not ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\0" * 10)
    os.symlink("/etc/shadow", repo / "leak")
    files = collect_files(repo, 1 << 20)
    assert set(files) == {".gitignore", "pkg/a.py", "new.py"}
    with pytest.raises(TooLarge, match=r"pkg/a\.py|new\.py"):
        collect_files(repo, 10)


def test_collect_files_without_git(tmp_path: Path):
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "x.js").write_text("x")
    (tmp_path / "main.py").write_text("print(1)")
    assert set(collect_files(tmp_path, 1 << 20)) == {"main.py"}


def test_inspect_and_resolve(repo: Path, tmp_path: Path):
    state = worktree.inspect(repo)
    assert state.branch == "main" and not state.dirty
    assert worktree.resolve_files(state, [str(repo / "pkg" / "a.py")], "files") == ["pkg/a.py"]
    with pytest.raises(InvalidRequest, match="unknown files: nope"):
        worktree.resolve_files(state, ["nope"], "files")
    (repo / "pkg" / "a.py").write_text("A = 2\n")
    assert worktree.inspect(repo).dirty == ["pkg/a.py"]
    with pytest.raises(InvalidRequest, match="not a git repository"):
        worktree.inspect(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(InvalidRequest, match="no commits"):
        worktree.inspect(empty)


def test_worktree_commits_on_its_own_branch(repo: Path, tmp_path: Path):
    state = worktree.inspect(repo)
    tree = worktree.Worktree.create(state, tmp_path / "scratch", "Fix: the thing!")
    assert tree.branch.startswith("sandlot/coder-fix-the-thing-")
    (tree.path / "pkg" / "a.py").write_text("A = 3\n")
    (tree.path / ".aider.tags.cache.v4").mkdir()
    (tree.path / ".aider.tags.cache.v4" / "x").write_text("cache")
    sha = tree.commit_all("edit")
    assert sha and tree.changed_files() == ["pkg/a.py"]
    assert tree.commit_all("again") is None
    tree.remove()
    assert (repo / "pkg" / "a.py").read_text() == "A = 1\n"
    assert git(repo, "rev-parse", tree.branch).strip() == sha


def test_feedback_carries_the_request_and_the_failure():
    outcome = TestOutcome(False, 1, None, None, 0.2, "E   assert 6 == 5\n", "")
    text = loop.feedback("make add() add", "pytest -q", outcome)
    assert text.startswith("make add() add") and "assert 6 == 5" in text and "exit status 1" in text


def test_conf_value(tmp_path: Path):
    conf = tmp_path / ".aider.conf.yml"
    conf.write_text("# c\nmodel: 'openai/x'  # why\ntest-cmd: pytest -q\n")
    assert loop.conf_value(conf, "model") == "openai/x"
    assert loop.conf_value(conf, "test-cmd") == "pytest -q"
    assert loop.conf_value(conf, "edit-format") is None


def test_install_is_idempotent_with_a_stamp(tmp_path: Path, monkeypatch):
    root = install.venv_dir(str(tmp_path))
    (root / "bin").mkdir(parents=True)
    exe = root / "bin" / "aider"
    exe.write_text("#!/bin/sh\necho aider 0.86.2\n")
    exe.chmod(0o755)
    (root / install.STAMP).write_text(install.AIDER_REQUIREMENT + "\n")
    assert "already installed" in install.install_aider(str(tmp_path))
    monkeypatch.setenv("SANDLOT_AIDER", "")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert install.find_aider(str(tmp_path)) == str(exe)
    with pytest.raises(install.AiderMissing, match="setup --with-aider"):
        install.find_aider(str(tmp_path / "nowhere"))
