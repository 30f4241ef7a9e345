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
    assert done.returncode == 124  # a time limit, as timeout(1) says it
    assert "TimeLimitExceeded" in done.stderr and "time limit: " in done.stderr


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
    assert "run_timeout\t7.0\tSANDLOT_RUN_TIMEOUT\t" in done.stdout


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
    assert done.stdout.splitlines()[-1].startswith("done: start the server with `make serve`")


def test_setup_unknown_language():
    done = sandlot("setup", "--languages", "cobol")
    assert done.returncode != 0
    assert "unknown language 'cobol'" in done.stderr


# -- what a new user meets ---------------------------------------------------------------------


@pytest.mark.parametrize(("code", "status"), [
    ("raise SystemExit(4)", 4),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", 128 + 11),
    ("while True: pass", 124),  # a time limit, as timeout(1) says it
])  # fmt: skip
def test_run_exits_with_the_programs_status(src, code, status):
    done = sandlot("run", src("ex.py", code), "--timeout", "1")
    assert done.returncode == status, done.stderr
    done = sandlot("run", src("ex.py", code), "--timeout", "1", "--json")
    assert done.returncode == status, done.stderr


def test_run_says_under_which_name_a_file_was_compiled(src):
    hello = "public class Hello { public static void main(String[] a) { System.out.println(1); } }"
    done = sandlot("run", src("Hello.java", hello))
    assert done.returncode != 0
    assert "Hello.java was compiled as Main.java" in done.stderr, done.stderr


def test_run_knows_more_suffixes_than_the_rows_files(src):
    done = sandlot("run", src("mod.mjs", "import fs from 'fs';\nconsole.log(typeof fs.statSync);"))
    assert done.returncode == 0 and done.stdout == "function\n", done.stderr


def test_config_as_json_and_whole_when_piped():
    from sandlot.config import SETTINGS

    done = sandlot("config", "--json")
    settings = {s["name"]: s for s in json.loads(done.stdout)["settings"]}
    assert set(settings) == {s.name for s in SETTINGS}
    assert settings["queue_timeout"]["env"] == "SANDLOT_QUEUE_TIMEOUT"
    piped = sandlot("config").stdout.splitlines()  # not a terminal: a line per setting
    for s in SETTINGS:
        assert any(line.split("\t")[:3:2] == [s.name, s.env] for line in piped), s.name


def test_help_names_only_commands_that_exist_and_no_bool_after_flags():
    help_text = sandlot("--help").stdout
    commands = {line.split()[0] for line in help_text.split("Commands:")[1].splitlines()
                if line.strip()}  # fmt: skip
    assert "datasets" in commands
    for command in sorted(commands):
        text = sandlot(command, "--help").stdout
        assert "<bool>" not in text, command
        assert "sandlot: list" not in text and "`sandlot list`" not in text, command
    assert "sandlot datasets" in sandlot("eval", "--help").stdout


def test_datasets_lists_names_and_aliases():
    rows = {r["name"]: r for r in json.loads(sandlot("datasets", "--json").stdout)}
    assert "humaneval" in rows["humaneval_python"]["aliases"]
    piped = sandlot("datasets").stdout
    assert any(line.startswith("humaneval_python\t") for line in piped.splitlines())


def test_route_piped_is_whole_lines():
    done = sandlot("route", "run this python snippet and check it prints 3")
    steps = [line for line in done.stdout.splitlines() if line.startswith("  1. ")]
    assert steps and '{"code": ..., "language": ...}' in steps[0], done.stdout
