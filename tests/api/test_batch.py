"""`POST /run_batch` through a real server: test forms, verdicts, compile once, fairness against
other requests, and hostile input (each a named test)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from sandlot.client import AsyncClient, Client
from tests.conftest import running_server

pytestmark = pytest.mark.root

ECHO_DOUBLE = "print(int(input()) * 2)"


def batch(client: httpx.Client, *items: dict, status: int = 200, **fields) -> dict:
    r = client.post("/run_batch", json={"items": list(items), **fields})
    assert r.status_code == status, r.text
    return r.json()


def verdicts(result: dict) -> list[str]:
    return [c["verdict"] for c in result["cases"]]


# -- test forms ----------------------------------------------------------------------------------


def test_stdin_test_cases_score_and_verdicts(client) -> None:
    cases = [{"stdin": "2", "expected_stdout": "4"}, {"stdin": "3", "expected_stdout": "7"},
             {"stdin": "x", "expected_stdout": "0"}]  # fmt: skip
    (res,) = batch(client, {"id": "a", "code": ECHO_DOUBLE, "test_cases": cases})["results"]
    assert res["id"] == "a" and res["score"] == pytest.approx(1 / 3) and not res["passed"]
    assert verdicts(res) == ["accepted", "wrong_answer", "runtime_error"]
    assert res["verdict"] == "wrong_answer" and "expected '7', got '6'" in res["reason"]
    assert all(c["time"] > 0 and c["cpu_time"] >= 0 for c in res["cases"])
    assert res["compile"] is None


def test_results_come_in_item_order_with_default_ids(client) -> None:
    items = [{"code": f"print({n})", "test_cases": [{"stdin": "", "expected_stdout": str(n)}]}
             for n in range(6)]  # fmt: skip
    results = batch(client, *items)["results"]
    assert [r["id"] for r in results] == list(range(6))
    assert all(r["passed"] for r in results)


def test_ground_truth_stdin_as_object_or_json_string(client) -> None:
    truth = {"inputs": ["1\n", "5\n"], "outputs": ["2\n", "10\n"]}
    items = [{"code": ECHO_DOUBLE, "ground_truth": t} for t in (truth, json.dumps(truth))]
    results = batch(client, *items)["results"]
    assert [r["score"] for r in results] == [1.0, 1.0]


def test_ground_truth_call_based_function_and_solution_method(client) -> None:
    apps = {"fn_name": "add", "inputs": [[1, 2], [[1], [2]]], "outputs": [[3], [[1, 2]]]}
    leetcode = {"fn_name": "twoSum", "inputs": ["[2, 7, 11]\n9", "[3, 3]\n6"],
                "outputs": ["[0, 1]", "[1, 0]"]}  # fmt: skip
    solution = (
        "class Solution:\n    def twoSum(self, nums: List[int], t: int) -> List[int]:\n"
        "        return [0, 1]"
    )
    add = "def add(a, b):\n    return a + b"
    results = batch(
        client,
        {"code": add, "ground_truth": apps},
        {"code": solution, "ground_truth": json.dumps(leetcode)},
    )["results"]
    assert verdicts(results[0]) == ["accepted", "accepted"]
    assert verdicts(results[1]) == ["accepted", "wrong_answer"]
    assert "expected [1, 0], got [0, 1]" in results[1]["cases"][1]["detail"]


def test_call_based_early_exit_is_no_pass(client) -> None:
    """A solution that exits 0 before the harness calls it has no result: not a pass."""
    truth = {"fn_name": "f", "inputs": [[1]], "outputs": [1]}
    code = "import os\ndef f(x):\n    return x\nos._exit(0)"
    (res,) = batch(client, {"code": code, "ground_truth": truth})["results"]
    assert verdicts(res) == ["wrong_answer"] and "early exit" in res["reason"]


def test_asserts_field_and_assert_case(client) -> None:
    code = "def f(x):\n    return x + 1"
    results = batch(client, {"code": code, "asserts": ["assert f(1) == 2", "assert f(2) == 4"]},
                    {"code": code, "ground_truth": {"assert_case": ["assert f(0) == 1"]}},
                    )["results"]  # fmt: skip
    assert verdicts(results[0]) == ["accepted", "wrong_answer"]
    assert results[1]["passed"]


def test_expression_test_cases(client) -> None:
    cases = [{"input": "x + 1", "expected": "2"}, {"input": "x * 5", "expected": "6"}]
    (res,) = batch(client, {"code": "x = 1", "test_cases": cases})["results"]
    assert verdicts(res) == ["accepted", "wrong_answer"]


def test_completion_is_extracted_as_the_judge_does(client) -> None:
    completion = "Sure.\n```python\nprint(int(input()) * 2)\n```\nThat doubles it."
    cases = [{"stdin": "4", "expected_stdout": "8"}]
    results = batch(
        client,
        {"completion": completion, "test_cases": cases},
        {"completion": "I cannot solve this.", "test_cases": cases},
    )["results"]
    assert results[0]["passed"] and results[0]["extraction"].startswith("fenced")
    assert results[1]["verdict"] == "no_code" and verdicts(results[1]) == ["no_code"]
    assert results[1]["score"] == 0.0


def test_checkers_exact_whitespace_float(client) -> None:
    def item(checker: object, out: str, expected: str) -> dict:
        return {"code": f"print({out!r})", "checker": checker,
                "test_cases": [{"stdin": "", "expected_stdout": expected}]}  # fmt: skip

    results = batch(
        client,
        item("exact", "1  2", "1 2\n"),
        item("whitespace", "1  2", "1 2\n"),
        item({"mode": "float", "abs_tol": 1e-3}, "0.3334", "0.3333"),
        item("float", "0.4", "0.3333"),
        item("verl", "ab", "ab\n\n"),
        # items are strict unless they say not: an integer is equal only to itself, whatever
        # the tolerance (SandboxFusion's rule takes 903952722 for 903952723)
        item("sandboxfusion", "903952722", "903952723"),
        item("sandboxfusion", "903952723.0000001", "903952723"),
        {**item("sandboxfusion", "903952722", "903952723"), "strict": False},
        item({"mode": "float", "abs_tol": 1}, "9", "10"),  # a tolerance set is as set
    )["results"]
    passed = [r["passed"] for r in results]
    assert passed == [False, True, True, False, True, False, True, True, True]


def test_limits_give_their_verdicts(client) -> None:
    case = [{"stdin": "", "expected_stdout": ""}]
    results = batch(
        client,
        {"code": "while True: pass", "run_timeout": 0.5, "test_cases": case},
        {"code": "x = bytearray(400 << 20)", "memory_limit_MB": 64, "test_cases": case},
    )["results"]
    assert verdicts(results[0]) == ["time_limit_exceeded"]
    assert verdicts(results[1]) == ["memory_limit_exceeded"]


def test_compiled_item_compiles_once_and_reports_the_compile(client) -> None:
    code = '#include <cstdio>\nint main(){int a; scanf("%d",&a); printf("%d\\n", a * 3); }'
    truth = {"inputs": [str(n) for n in range(6)], "outputs": [str(3 * n) for n in range(6)]}
    first = batch(client, {"code": code, "language": "cpp", "ground_truth": truth})["results"][0]
    assert first["passed"] and first["compile"]["ok"]
    again = batch(client, {"code": code, "language": "cpp", "ground_truth": truth})["results"][0]
    assert again["compile"]["cached"] is True
    broken = {"code": "int main() { return }", "language": "cpp", "ground_truth": truth}
    (bad,) = batch(client, broken)["results"]
    assert bad["verdict"] == "compile_error" and set(verdicts(bad)) == {"compile_error"}
    assert not bad["compile"]["ok"] and "error" in bad["compile"]["stderr"]


def test_stop_on_first_failure_skips_the_rest(client) -> None:
    cases = [{"stdin": str(n), "expected_stdout": "0"} for n in range(8)]
    (res,) = batch(client, {"code": ECHO_DOUBLE, "test_cases": cases},
                   stop_on_first_failure=True)["results"]  # fmt: skip
    assert verdicts(res)[0] == "accepted"
    assert "wrong_answer" in verdicts(res) and "skipped" in verdicts(res)
    assert res["score"] == pytest.approx(1 / 8)


# -- fairness ------------------------------------------------------------------------------------


@pytest.mark.slow  # a server of its own, and slow cases by design
def test_a_big_batch_does_not_starve_small_requests() -> None:
    """A batch of 240 slow cases against a queue of 8: small /run_code requests sent after it
    are all answered (no 504) and before it ends; the batch itself is not refused either."""
    with running_server("--slots", "2", env={"SANDLOT_QUEUE_SIZE": "8"}) as srv, \
            httpx.Client(base_url=srv.url, timeout=300) as c:  # fmt: skip
        cases = [{"stdin": "", "expected_stdout": ""}] * 240
        item = {"code": "import time\ntime.sleep(0.05)", "test_cases": cases}
        done: dict[str, float] = {}

        def big() -> None:
            r = c.post("/run_batch", json={"items": [item]})
            assert r.status_code == 200 and r.json()["results"][0]["passed"]
            done["batch"] = time.monotonic()

        thread = threading.Thread(target=big)
        thread.start()
        while c.get("/health").json()["busy"] < 2:
            time.sleep(0.05)
        statuses = []
        for n in range(20):
            r = c.post("/run_code", json={"code": f"print({n})", "language": "python"})
            statuses.append(r.status_code)
        small_done = time.monotonic()
        thread.join()
        assert statuses == [200] * 20
        assert small_done < done["batch"]  # order of events, not a timing


# -- hostile input -------------------------------------------------------------------------------


def test_a_million_cases_is_a_413_at_once(client, server) -> None:
    case = b'{"stdin":"","expected_stdout":""}'
    for n in (1_000_000, 100_000):  # over the byte cap; under it but over the case cap
        body = b'{"items":[{"code":"x","test_cases":[' + b",".join([case] * n) + b"]}]}"
        r = client.post("/run_batch", content=body,
                        headers={"content-type": "application/json"})  # fmt: skip
        assert r.status_code == 413, r.text
        assert "at most" in r.json()["detail"]
    assert server.alive()


def test_too_many_items_is_a_413(client) -> None:
    item = {"code": "print(1)", "asserts": ["pass"]}
    r = client.post("/run_batch", json={"items": [item] * 10_001})
    assert r.status_code == 413 and "10000" in r.json()["detail"]


def test_cases_in_a_ground_truth_string_count_too(client) -> None:
    truth = json.dumps({"inputs": [""] * 20_001, "outputs": [""] * 20_001})
    r = client.post("/run_batch", json={"items": [{"code": "x", "ground_truth": truth}]})
    assert r.status_code == 413 and "20001 cases" in r.json()["detail"]


def test_nan_and_huge_limits_are_refused(client) -> None:
    case = [{"stdin": "", "expected_stdout": ""}]
    nan = b'{"items":[{"code":"x","run_timeout":NaN,"asserts":["pass"]}]}'
    r = client.post("/run_batch", content=nan, headers={"content-type": "application/json"})
    assert r.status_code == 422
    for field, value in (("run_timeout", 1e9), ("memory_limit_MB", 10**6)):
        r = client.post("/run_batch", json={"items": [{"code": "x", field: value,
                                                       "test_cases": case}]})  # fmt: skip
        assert r.status_code == 400 and "maximum" in r.json()["detail"]
    r = client.post("/run_batch", json={"items": [{"code": "x", "run_timeout": -1,
                                                   "test_cases": case}]})  # fmt: skip
    assert r.status_code == 422


def test_deeply_nested_ground_truth_is_refused(client, server) -> None:
    deep = "[" * 5000 + "]" * 5000
    body = '{"items":[{"code":"x","ground_truth":{"inputs":[' + deep + '],"outputs":[1]}}]}'
    r = client.post("/run_batch", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    as_string = json.dumps({"items": [{"code": "x", "ground_truth": '{"inputs": [' + deep + "]}"}]})
    r = client.post("/run_batch", content=as_string, headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
    assert server.alive()


def test_ground_truth_that_is_not_json(client) -> None:
    r = client.post("/run_batch", json={"items": [{"id": "p1", "code": "x",
                                                   "ground_truth": "{inputs: [1"}]})  # fmt: skip
    assert r.status_code == 400
    assert "items[0] (id 'p1')" in r.json()["detail"] and "not valid JSON" in r.json()["detail"]


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"code": "x"}, "has no tests"),
        ({"code": "x", "ground_truth": {"inputs": ["1"], "outputs": []}}, "1 inputs but 0"),
        ({"code": "x", "ground_truth": "[1, 2]"}, "ground_truth must be an object"),
        ({"code": "x", "language": "cobol", "asserts": ["pass"]}, "unknown language"),
        (
            {
                "code": "x",
                "language": "cpp",
                "ground_truth": {"fn_name": "f", "inputs": [[1]], "outputs": [1]},
            },
            "needs python",
        ),
        (
            {"code": "x", "ground_truth": {"fn_name": "a b", "inputs": [[1]], "outputs": [1]}},
            "identifier",
        ),
        ({"code": "x", "checker": {"mode": "fuzzy"}, "asserts": ["pass"]}, "unknown checker"),
        ({"code": "x", "ground_truth": {"inputs": [3], "outputs": ["3"]}}, "must be text"),
    ],
    ids=[
        "no-tests",
        "counts-differ",
        "not-an-object",
        "unknown-language",
        "fn-name-not-python",
        "fn-name-not-identifier",
        "unknown-checker",
        "stdin-not-text",
    ],
)
def test_malformed_items_are_a_400(client, item: dict, words: str) -> None:
    r = client.post("/run_batch", json={"items": [{"code": "print(1)", "asserts": ["pass"]}, item]})
    assert r.status_code == 400, r.text
    assert words in r.json()["detail"]


def test_duplicate_ids_are_refused(client) -> None:
    item = {"id": "same", "code": "print(1)", "asserts": ["pass"]}
    r = client.post("/run_batch", json={"items": [item, item]})
    assert r.status_code == 400 and "same id 'same'" in r.json()["detail"]


@pytest.mark.parametrize(
    "body",
    [
        {"items": []},
        {"items": [{"asserts": ["pass"]}]},
        {"items": [{"code": "x", "completion": "y", "asserts": ["pass"]}]},
        {"items": "many"},
        {"items": [{"code": "x", "test_cases": [{"stdin": "1"}]}]},
    ],
    ids=["no-items", "no-code", "code-and-completion", "items-not-a-list", "case-without-expected"],
)
def test_wrong_shapes_are_a_422(client, body: dict) -> None:
    r = client.post("/run_batch", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("invalid request")


def test_batch_code_reading_its_files_sees_no_expected_output(client) -> None:
    """The expected outputs never enter the box: a program that prints every file it can read
    in its work dir still fails a case whose answer it cannot compute."""
    code = ("import os\nfor name in os.listdir('.'):\n    if os.path.isfile(name):\n"
            "        print(open(name).read())")  # fmt: skip
    secret = "expected-7f3a"
    (res,) = batch(client, {"code": code, "test_cases": [{"stdin": "", "expected_stdout": secret}]},
                   )["results"]  # fmt: skip
    assert verdicts(res) == ["wrong_answer"]


def test_run_batch_is_in_the_openapi_docs(client) -> None:
    spec = client.get("/openapi.json").json()
    assert "/run_batch" in spec["paths"]
    assert "RunBatchRequest" in spec["components"]["schemas"]


@contextlib.contextmanager
def dropping_server() -> Iterator[str]:
    """A listener on 127.0.0.1 that takes each connection and closes it unanswered: a server
    that dies with the request in flight."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                conn, _ = sock.accept()
                conn.recv(65536)
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        sock.close()


def test_client_run_batch_over_two_servers_retries_a_lost_one(server) -> None:
    items = [{"id": n, "code": ECHO_DOUBLE, "test_cases": [{"stdin": str(n),
              "expected_stdout": str(2 * n)}]} for n in range(4)]  # fmt: skip
    with dropping_server() as gone:
        with Client([gone, server.url]) as sb:
            out = sb.run_batch(items)
            assert [r.id for r in out.results] == [0, 1, 2, 3]
            assert all(r.passed for r in out.results)
            assert not sb.servers.is_up(gone) and sb.servers.is_up(server.url)

        async def twin() -> list[float]:
            async with AsyncClient([gone, server.url]) as sb:
                return [r.score for r in (await sb.run_batch(items)).results]

        assert asyncio.run(twin()) == [1.0] * 4


@pytest.mark.slow  # a server of its own, and slow cases by design
def test_a_batch_whose_client_goes_away_is_stopped() -> None:
    """Abandoned, a batch of 200 one-second cases would hold both slots for 100 s; it frees them
    within a few seconds of its client leaving (a bound on liveness, not a timing)."""
    with running_server("--slots", "2") as srv, httpx.Client(base_url=srv.url) as c:
        cases = [{"stdin": "", "expected_stdout": ""}] * 200
        item = {"code": "import time\ntime.sleep(1)", "test_cases": cases}
        with pytest.raises(httpx.ReadTimeout):
            c.post("/run_batch", json={"items": [item]}, timeout=3)
        deadline = time.monotonic() + 30
        while (h := c.get("/health").json())["busy"] or h["queued"]:
            assert time.monotonic() < deadline, h
            time.sleep(0.2)
        r = c.post("/run_code", json={"code": "print(1)", "language": "python"}, timeout=60)
        assert r.json()["stdout"] == "1\n"
