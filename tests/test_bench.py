"""The benchmarks run: each script of bench/, briefly, measures what it says and reports no error.

The figures in docs/benchmarks.md come from these scripts; one that quietly stopped measuring (a
hello world whose text changed, a field renamed) would go on printing tables of nothing. Timings are
not judged here (benchmarks print ratios, never assert them): only that every run they time was
a correct one.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.root]

REPO = Path(__file__).resolve().parent.parent


def bench(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_languages_times_only_runs_that_said_hello(tmp_path: Path) -> None:
    out = tmp_path / "languages.json"
    # Exit status aside (a missed target is one, and a loaded machine can miss it): the runs.
    subprocess.run([sys.executable, "bench/languages.py", "--reps", "1", "--languages",
                    "python,c", "--no-page", "--out", str(out)], cwd=REPO, timeout=600,
                   capture_output=True)  # fmt: skip
    measured = json.loads(out.read_text())["languages"]
    assert {name: entry["errors"] for name, entry in measured.items()} == {"python": [], "c": []}
    assert measured["c"]["cached_median_s"] and measured["c"]["box_median_s"]


# A table whose ruby row is the one before its boot file: the row a --before-table run compares.
BEFORE_TABLE = """\
import dataclasses
from sandlot.languages import scripting
LANGUAGES = tuple(dataclasses.replace(row, run=("/usr/bin/ruby", "{src}"), binds=(),
                                      requires=("/usr/bin/ruby",))
                  for row in scripting.ROWS if row.name == "ruby")
"""


def test_languages_measures_a_before_table_alongside(tmp_path: Path) -> None:
    (tmp_path / "table.py").write_text(BEFORE_TABLE)
    out = tmp_path / "languages.json"
    subprocess.run([sys.executable, "bench/languages.py", "--reps", "1", "--languages", "ruby",
                    "--no-page", "--out", str(out), "--before-table", str(tmp_path / "table.py")],
                   cwd=REPO, timeout=600, capture_output=True)  # fmt: skip
    ruby = json.loads(out.read_text())["languages"]["ruby"]
    assert ruby["errors"] == [] and ruby["before_box_median_s"] and ruby["box_median_s"], ruby


def test_breakdown_accounts_every_stage() -> None:
    text = bench("bench/breakdown.py", "--runs", "3")
    for program in ("### warm Python", "### cold Python", "### C++ hello"):
        assert program in text
    assert text.count("**total**") == 3


def test_engine_cells_run_without_errors() -> None:
    text = bench("bench/engine.py", "--duration", "0.3", "--concurrency", "1")
    assert "errors: none" in text


def test_judge_accepts_what_bare_passes(tmp_path: Path) -> None:
    out = tmp_path / "judge.json"
    bench("bench/judge.py", "--datasets", "humaneval", "--rounds", "1", "--out", str(out))
    (figures,) = json.loads(out.read_text())["datasets"]
    for side in figures["rounds"]:
        assert side["sandlot_ok"] == side["bare_ok"] == figures["problems"] == 164
        for machine in (side["bare_machine"], side["sandlot_machine"]):
            assert 0 < machine["busy"] <= 1 and machine["cpu_ms"] > 0, machine


def test_answers_counts_the_shipped_answers_both_ways() -> None:
    text = bench("bench/answers.py", "--datasets", "multiple_d", "--rows", "4",
                 "--assembly", "sandlot,sandboxfusion")  # fmt: skip
    table = text.split("|---|---|---|---|---|")[1]
    counts = dict(re.findall(r"\| multiple_d \| (\w+) \| (\d+) of 4 \|", table))
    assert set(counts) == {"sandlot", "sandboxfusion"}, text
    # two of the first answers declare a main: in SandboxFusion's one file they do not build
    assert int(counts["sandlot"]) > int(counts["sandboxfusion"]), text
    assert "compile error" in table


def test_startup_times_each_command() -> None:
    text = bench("bench/startup.py", "--times", "1")
    assert "`sandlot run hello.cpp`" in text
    assert "until /health ready" in text


# The R row as it was before its boot file, and one that runs no program at all: what
# bench/row_change.py compares this tree's R row with.
R_TABLES = {"before": "env={}", "broken": """env={}, run=("/usr/bin/Rscript", "-e", "cat(1)")"""}
R_TABLE = """\
import dataclasses
from sandlot.languages import scripting
LANGUAGES = tuple(dataclasses.replace(row, binds=("/etc/R",), requires=("/usr/bin/Rscript",),
                                      {fields})
                  for row in scripting.ROWS if row.name == "R")
"""


@pytest.mark.parametrize("table", sorted(R_TABLES))
def test_row_change_compares_a_rows_programs_output_by_output(tmp_path: Path, table: str) -> None:
    (tmp_path / "table.py").write_text(R_TABLE.format(fields=R_TABLES[table]))
    done = subprocess.run([sys.executable, "bench/row_change.py", "--language", "R",
                           "--before-table", str(tmp_path / "table.py"), "--datasets",
                           "multiple_r", "--limit", "12", "--mask", r"C stack usage +\d+"],
                          cwd=REPO, timeout=600, capture_output=True, text=True)  # fmt: skip
    assert "12 R programs of multiple_r" in done.stdout, done.stdout + done.stderr
    if table == "before":
        assert done.returncode == 0, done.stdout + done.stderr
        assert "identical output and exit: 12 of 12" in done.stdout
        assert "passing both ways: 0" not in done.stdout
    else:  # every program differs: the first ten are shown
        assert done.returncode == 1, done.stdout + done.stderr
        assert "identical output and exit: 0 of 12" in done.stdout
        assert "program 9: " in done.stdout and "... and 2 more programs" in done.stdout


def test_repos_measures_a_real_projects_grades() -> None:
    text = bench("bench/repos.py", "--project", "qs", "--parallel", "2", "--rounds", "1")
    assert "env adds to a grade (ms)" in text and "disk of 2 parallel grades / one" in text
    assert "targets:" in text  # the gold patch was resolved, or the script stopped (asserted)


def test_rl_overload_accounts_for_every_request(tmp_path: Path) -> None:
    out = tmp_path / "overload.json"
    bench("bench/rl.py", "--overload", "3", "--duration", "4", "--case-seconds", "0.3",
          "--problems", "4", "--cases", "2", "--slots", "1", "--out", str(out))  # fmt: skip
    figures = json.loads(out.read_text())["overload"]
    assert figures["sent"] > 0 and figures["other_errors"] == 0, figures
    ends = ("answered_in_time", "gave_up_after_504s", "read_timeouts")
    assert sum(figures[k] for k in ends) == figures["sent"], figures
    assert 0 < figures["right"] <= figures["answered_in_time"], figures  # wrong samples too
