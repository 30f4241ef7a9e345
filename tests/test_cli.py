"""The command line, run as a user would: `python -m sandlot ...` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, STATE_ROOT

pytestmark = [pytest.mark.root, pytest.mark.slow]  # each command boots an engine

ENV = {**os.environ, "SANDLOT_STATE_DIR": f"{STATE_ROOT}/cli",
       "SANDLOT_UID_BASE": "64500"}  # fmt: skip


def sandlot(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandlot", *args],
        cwd=ROOT, env=ENV, input=stdin, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def src(tmp_path: Path):
    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def test_run_python_file(src):
    done = sandlot("run", src("hello.py", "print('hi', input())"), "--stdin", "there")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi there\n"


def test_run_reads_stdin_with_dash(src):
    done = sandlot("run", src("echo.py", "import sys; print(sys.stdin.read().upper())"),
                   "--stdin", "-", stdin="abc")  # fmt: skip
    assert done.stdout == "ABC\n"


def test_run_cpp_guesses_the_language_from_the_suffix(src):
    done = sandlot("run", src("a.cpp", '#include <cstdio>\nint main(){puts("cpp");}'))
    assert done.returncode == 0 and done.stdout == "cpp\n"


def test_run_failure_exits_non_zero_and_says_why(src):
    done = sandlot("run", src("loop.py", "while True: pass"), "--timeout", "0.5")
    assert done.returncode == 1
    assert "TimeLimitExceeded" in done.stderr


def test_run_json(src):
    done = sandlot("run", src("x.sh", "echo json"), "--json")
    body = json.loads(done.stdout)
    assert body["status"] == "Success" and body["run_result"]["stdout"] == "json\n"


def test_run_unknown_suffix_and_language(src):
    done = sandlot("run", src("x.unknown", "x"))
    assert done.returncode == 2 and "--language" in done.stderr
    done = sandlot("run", src("x.txt", "x"), "--language", "cobol")
    assert done.returncode == 2 and "supports" in done.stderr


def test_languages_lists_versions():
    done = sandlot("languages", "--json")
    rows = {r["name"]: r for r in json.loads(done.stdout)}
    assert rows["python"]["available"] and rows["python"]["version"].startswith("Python 3")
    assert "cpp" in sandlot("languages").stdout


def test_config_shows_settings_and_env_overrides():
    done = subprocess.run(
        [sys.executable, "-m", "sandlot", "config"], cwd=ROOT, capture_output=True, text=True,
        env={**ENV, "SANDLOT_RUN_TIMEOUT": "7", "COLUMNS": "200"},
    )  # fmt: skip
    assert "SANDLOT_RUN_TIMEOUT" in done.stdout and " 7.0 " in done.stdout


@pytest.mark.parametrize(
    ("toml", "message"),
    [("no_such_setting = 1\n", "unknown setting 'no_such_setting'"),
     ('boxes = "docker"\n', "boxes must be one of zygote, bwrap, got 'docker'")],
)  # fmt: skip
def test_bad_config_file_is_a_clear_error(tmp_path: Path, toml: str, message: str):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(toml)
    done = sandlot("config", "--config", str(cfg))
    assert done.returncode != 0
    assert message in done.stderr


def test_setup_is_idempotent_and_quick_when_installed():
    done = sandlot("setup", "--languages", "c,bash")
    assert done.returncode == 0, done.stderr
    assert "apt packages: ok (already present)" in done.stdout
    assert "sandbox python: skipped" in done.stdout


def test_setup_unknown_language():
    done = sandlot("setup", "--languages", "cobol")
    assert done.returncode != 0
    assert "unknown language 'cobol'" in done.stderr
