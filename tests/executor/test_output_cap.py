"""The output cap through a real server: a program that writes past it is stopped by the output
limit every time, however the race between its exit and the reading of its output goes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import running_server

pytestmark = pytest.mark.root

CAP = 1000
# One write of 5 times the cap, then exit: the program is often gone before its output is read.
OVERRUNS = {stream: f"import sys; sys.{stream}.write('x' * {5 * CAP})"
            for stream in ("stdout", "stderr")}  # fmt: skip
RUNS = 30


@pytest.fixture(scope="module")
def capped() -> Iterator[httpx.Client]:
    env = {"SANDLOT_OUTPUT_BYTES": str(CAP)}
    with (
        running_server("--slots", "2", env=env) as srv,
        httpx.Client(base_url=srv.url, timeout=120) as c,
    ):
        yield c


def run_code(client: httpx.Client, code: str) -> tuple[str, dict]:
    r = client.post("/run_code", json={"code": code, "language": "python"})
    assert r.status_code == 200, r.text
    return r.json()["status"], r.json()["run_result"]


@pytest.mark.parametrize("stream", sorted(OVERRUNS))
def test_an_overrun_is_the_output_limit_on_every_run(capped, stream) -> None:
    for n in range(RUNS):
        status, rr = run_code(capped, f"{OVERRUNS[stream]}  # {n}")
        assert rr["limit"] == "output" and rr[f"{stream}_truncated"] is True, rr
        assert rr[stream] == "x" * CAP
        # Whether it was killed (-9) or had exited 0 first, the run did not succeed.
        assert status == "Failed" and rr["status"] == "Finished"


def test_control_output_up_to_the_cap_is_no_limit(capped) -> None:
    status, rr = run_code(capped, f"print('x' * {CAP - 1})")  # with its newline: exactly the cap
    assert status == "Success" and rr["limit"] is None and rr["return_code"] == 0
    assert rr["stdout_truncated"] is False and rr["stderr_truncated"] is False
    assert rr["stdout"] == "x" * (CAP - 1) + "\n"


def test_a_batch_of_overruns_are_all_output_limit_exceeded(capped) -> None:
    # Expected output the program does print: only the cap stops it from passing.
    case = {"stdin": "", "expected_stdout": "x" * 5 * CAP}
    items = [{"code": f"{OVERRUNS['stdout']}  # {n}", "test_cases": [case]} for n in range(RUNS)]
    r = capped.post("/run_batch", json={"items": items})
    assert r.status_code == 200, r.text
    verdicts = [[c["verdict"] for c in res["cases"]] for res in r.json()["results"]]
    assert verdicts == [["output_limit_exceeded"]] * RUNS
