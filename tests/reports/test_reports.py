"""Eval reports: the summary of an eval's records, its plots and HTML page, and `sandlot eval
--report` on the local engine and against a server."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from sandlot.reports import page, plots, summarize, write
from tests.conftest import Server
from tests.judge.test_judge_cli import sandlot, write_samples

PNG = b"\x89PNG\r\n\x1a\n"


def rec(pid: str, n: int, ok: bool, **kw) -> dict:
    verdict = "accepted" if ok else "wrong_answer"
    return {"id": pid, "sample": n, "accepted": ok, "verdict": verdict,
            "reason": None if ok else f"{pid} failed", "dataset": "d", "language": "python",
            "run_time": 0.1 * (n + 1), **kw}  # fmt: skip


RECORDS = [
    rec("a", 0, True), rec("a", 1, True),
    rec("b", 0, True), rec("b", 1, False),
    rec("c", 0, False), rec("c", 1, False, verdict="time_limit_exceeded", run_time=3.0),
    rec("x", 0, True, language="cpp"), rec("x", 1, False, language="cpp"),
]  # fmt: skip


def test_pass_at_k_per_dataset_and_language() -> None:
    s = summarize(RECORDS, [1, 2, 5])
    assert [(g["dataset"], g["language"]) for g in s["groups"]] == [("d", "cpp"), ("d", "python")]
    py = s["groups"][1]
    assert py["problems"] == 3 and py["samples"] == 6 and py["accepted"] == 3
    assert py["pass_at_k"] == pytest.approx({"pass@1": 0.5, "pass@2": 2 / 3})  # no pass@5: n=2
    assert py["verdicts"] == {"accepted": 3, "wrong_answer": 2, "time_limit_exceeded": 1}
    assert s["groups"][0]["pass_at_k"] == {"pass@1": 0.5, "pass@2": 1.0}


def test_problems_slowest_and_failing() -> None:
    s = summarize(RECORDS, [1])
    by_id = {(p["language"], p["id"]): p for p in s["problems"]}
    assert by_id[("python", "c")]["verdicts"] == {"wrong_answer": 1, "time_limit_exceeded": 1}
    assert by_id[("python", "c")]["reason"] == "c failed"
    assert s["slowest"][0] == {"dataset": "d", "language": "python", "id": "c", "sample": 1,
                               "run_time": 3.0, "verdict": "time_limit_exceeded"}  # fmt: skip
    assert [p["id"] for p in s["failing"]] == ["c", "b", "x"]  # fewest accepted first
    assert s["run_times"]["count"] == 8 and s["run_times"]["max"] == 3.0


def test_samples_without_code_count_in_their_datasets_language_as_in_the_cli() -> None:
    """A sample with no code has no language in results written before the judge named one:
    it counts in its dataset's only language, so the report's pass@k is the CLI's."""
    from sandlot.judge.metrics import summarize as cli_pass_at_k

    records = [rec("a", 0, True), rec("a", 1, True), rec("b", 0, False), rec("b", 1, True)]
    records += [rec("a", 2, False, language=None, verdict="no_code"),
                rec("b", 2, False, language=None, verdict="no_code")]  # fmt: skip
    s = summarize(records, [1, 2])
    assert [(g["dataset"], g["language"]) for g in s["groups"]] == [("d", "python")]
    cli = cli_pass_at_k(((r["id"], r["accepted"]) for r in records), [1, 2])
    assert s["groups"][0]["pass_at_k"] == pytest.approx(cli)
    assert s["overall"]["pass_at_k"] == pytest.approx(cli)
    failing = {p["id"]: f"{p['accepted']}/{p['samples']}" for p in s["failing"]}
    assert failing == {"b": "1/3", "a": "2/3"}  # each problem once, with all its samples


def test_overall_pass_at_k_is_over_every_problem_of_every_group() -> None:
    s = summarize(RECORDS, [1, 2])
    assert s["overall"]["problems"] == 4 and s["overall"]["samples"] == 8
    assert s["overall"]["pass_at_k"] == pytest.approx({"pass@1": 0.5, "pass@2": 0.75})
    html = page.render(s, {"main": PNG, "run_time": PNG})
    assert "overall" in html and "0.7500" in html


def test_problem_ids_sort_by_their_numbers() -> None:
    records = [rec(str(n), 0, n % 2 == 0) for n in (10, 2, 1, 11, 0)]
    records += [rec(f"HumanEval/{n}", 0, False) for n in (10, 9)]
    s = summarize(records, [1])
    assert [p["id"] for p in s["problems"]] == ["0", "1", "2", "10", "11", "HumanEval/9",
                                               "HumanEval/10"]  # fmt: skip


def test_old_and_odd_records_are_summarised_without_failing() -> None:
    odd = [
        {"id": 1, "sample": 0, "accepted": True},  # from before reports: no dataset, no time
        {"id": 2, "sample": 0, "accepted": False, "run_time": float("nan")},
        {"id": 3, "sample": 0, "accepted": False, "run_time": -1},
        {"id": 4, "sample": 0, "accepted": False, "run_time": True},
        {"id": 5, "sample": 0, "accepted": False, "run_time": "slow"},
    ]
    s = summarize(odd, [1])
    assert s["groups"][0]["dataset"] == "?" and s["groups"][0]["pass_at_k"] == {"pass@1": 0.2}
    assert s["run_times"]["count"] == 0 and s["slowest"] == []
    assert s["verdicts"] == {"rejected": 4, "accepted": 1}
    html = page.render(s, {"main": plots.main_plot(s), "run_time": plots.run_time_plot(s)})
    assert "no run times recorded" in html
    json.dumps(s, allow_nan=False)  # the JSON summary is strict JSON


def test_no_records_still_make_a_report() -> None:
    s = summarize([], [1])
    assert plots.main_plot(s).startswith(PNG) and plots.run_time_plot(s).startswith(PNG)
    assert "0 of 0 samples" in page.render(s, {"main": b"", "run_time": b""})


def test_what_a_program_printed_is_escaped_in_the_report() -> None:
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    s = summarize([rec(hostile, 0, False, reason=hostile, dataset=hostile)], [1], title=hostile)
    html = page.render(s, {"main": PNG, "run_time": PNG})
    assert "<script" not in html and "<img src=x" not in html
    assert html.count("&lt;script&gt;") >= 3
    assert re.search(r'http-equiv="Content-Security-Policy" content="default-src \'none\'', html)


def test_write_makes_the_page_its_json_and_its_png(tmp_path: Path) -> None:
    paths = write(tmp_path / "report.html", RECORDS, [1, 2], title="demo")
    assert [p.name for p in paths] == ["report.html", "report.json", "report.png"]
    html = paths[0].read_text()
    png = paths[2].read_bytes()
    assert png.startswith(PNG) and base64.b64encode(png).decode() in html  # the main plot
    assert json.loads(paths[1].read_text())["groups"][1]["pass_at_k"]["pass@1"] == 0.5


def _report(tmp_path: Path, *server: str) -> tuple[dict, list[dict]]:
    samples = tmp_path / "samples.jsonl"
    write_samples(samples)
    report = tmp_path / "out" / "report.html"
    report.parent.mkdir()
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples), "--k", "1,2", *server,
                   "--report", str(report))  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "report.html" in done.stdout and report.with_suffix(".png").exists()
    records = [json.loads(x) for x in (tmp_path / "samples_results.jsonl").read_text().splitlines()]
    return json.loads(report.with_suffix(".json").read_text()), records


def _check(summary: dict, records: list[dict]) -> None:
    assert summary["groups"][0]["dataset"] == "humaneval_python"
    assert summary["groups"][0]["pass_at_k"] == {"pass@1": 0.25, "pass@2": pytest.approx(5 / 12)}
    assert [p["id"] for p in summary["failing"]] == ["HumanEval/0", "HumanEval/7"]
    assert all(r["language"] == "python" and r["run_time"] > 0 for r in records)


@pytest.mark.root
@pytest.mark.slow
def test_eval_report_on_the_local_engine(tmp_path: Path) -> None:
    _check(*_report(tmp_path))


@pytest.mark.root
@pytest.mark.slow
def test_eval_report_against_a_server(tmp_path: Path, server: Server) -> None:
    summary, records = _report(tmp_path, "--server", server.url)
    _check(summary, records)
    assert {k for r in records for k in r} == {
        "id", "sample", "accepted", "verdict", "reason", "extracted_type", "dataset",
        "language", "run_time", "fingerprint"}  # fmt: skip


def test_eval_report_must_be_an_html_file(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    write_samples(samples)
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples), "--report",
                   str(tmp_path / "r.json"))  # fmt: skip
    assert done.returncode != 0 and "--report names the HTML file" in done.stdout + done.stderr
