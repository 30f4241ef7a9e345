"""GET /metrics: a live server's Prometheus text, scraped after real runs."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Server, running_server

pytestmark = pytest.mark.root

CPP = '#include <cstdio>\nint main(){std::puts("hi");}\n'
HUMANEVAL_0 = (
    "```python\ndef has_close_elements(numbers, threshold):\n    return any("
    "abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
)
TWICE = {"task_id": "T/1", "prompt": "def twice(x):\n", "test": "def check(f):\n"
         "    assert f(2) == 4\n", "entry_point": "twice"}  # fmt: skip


@pytest.fixture(scope="module")
def full_server() -> Iterator[Server]:
    """One slot and no queue, so that a second run while one runs is refused (504)."""
    with running_server("--slots", "1", env={"SANDLOT_QUEUE_SIZE": "0"}) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(full_server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=full_server.url, timeout=120) as c:
        yield c


def scrape(api: httpx.Client) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and labels."""
    r = api.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def run(api: httpx.Client, code: str, language: str = "python", **fields) -> dict:
    r = api.post("/run_code", json={"code": code, "language": language, **fields})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_scrape_after_runs_shows_counters_and_histograms(api: httpx.Client) -> None:
    before = scrape(api)
    assert run(api, "print(1)")["stdout"] == "1\n"
    assert run(api, "raise SystemExit(3)")["exit_code"] == 3
    assert run(api, "while True: pass", run_timeout=0.5)["run_result"]["limit"] == "time"
    assert api.post("/run_code", json={"code": 5, "language": "python"}).status_code == 422
    after = scrape(api)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("sandlot_http_requests_total", endpoint="/run_code", status="200") == 3
    assert grew("sandlot_http_requests_total", endpoint="/run_code", status="422") == 1
    assert grew("sandlot_errors_total", kind="RequestValidationError") == 1
    for status in ("ok", "error", "time"):
        run_labels = {"language": "python", "step": "run", "status": status}
        assert grew("sandlot_exec_time_seconds_count", **run_labels) == 1
        assert grew("sandlot_exec_cpu_seconds_count", **run_labels) == 1
        assert grew("sandlot_exec_memory_bytes_count", **run_labels) == 1
    # The run that hit its 0.5 s limit lasted at least that long, and used memory.
    timed_out = {"language": "python", "step": "run", "status": "time"}
    assert grew("sandlot_exec_time_seconds_sum", **timed_out) >= 0.5
    assert grew("sandlot_exec_memory_bytes_sum", **timed_out) > 0
    assert grew("sandlot_exec_time_seconds_bucket", le="0.25", **timed_out) == 0
    assert grew("sandlot_box_start_seconds_count") == 3
    assert grew("sandlot_queue_wait_seconds_count") == 3
    assert value(after, "sandlot_slots") == 1 and value(after, "sandlot_slots_busy") == 0


def test_compile_cache_hits_and_misses(api: httpx.Client) -> None:
    before = scrape(api)
    code = CPP.replace("hi", secrets.token_hex(4))  # a build no earlier test made
    first, second = run(api, code, "cpp"), run(api, code, "cpp")
    assert (first["cached_build"], second["cached_build"]) == (False, True)
    after = scrape(api)
    for result in ("hit", "miss"):
        key = ("sandlot_compile_cache_total", frozenset({("result", result)}))
        assert after[key] - before.get(key, 0.0) == 1
    step = {"language": "cpp", "step": "compile", "status": "ok"}
    assert value(after, "sandlot_exec_time_seconds_count", **step) >= 1


def test_judge_verdicts_by_dataset(api: httpx.Client) -> None:
    body = {"dataset": "humaneval_python", "id": "HumanEval/0", "completion": HUMANEVAL_0}
    assert api.post("/submit", json=body).json()["accepted"] is True
    wrong = {**body, "completion": "def has_close_elements(n, t):\n    return None\n"}
    assert api.post("/submit", json=wrong).json()["accepted"] is False
    samples = scrape(api)
    name = "sandlot_judge_verdicts_total"
    assert value(samples, name, dataset="humaneval_python", verdict="accepted") >= 1
    assert value(samples, name, dataset="humaneval_python", verdict="wrong_answer") >= 1


def test_client_chosen_names_do_not_grow_the_metrics(api: httpx.Client) -> None:
    """A caller picks provided_data's dataset name and any path: each is one bounded label, so a
    flood of names cannot make the scrape (and Prometheus) grow without end."""
    names = [f"mine-{secrets.token_hex(6)}" for _ in range(3)]
    for name in names:
        cfg = {"dataset_type": "HumanEvalDataset", "provided_data": TWICE}
        body = {"dataset": name, "id": "T/1", "completion": "    return 2 * x\n", "config": cfg}
        assert api.post("/submit", json=body).json()["accepted"] is True
        assert api.get(f"/{name}").status_code == 404
    text = api.get("/metrics").text
    assert not any(name in text for name in names)
    samples = scrape(api)
    provided = value(samples, "sandlot_judge_verdicts_total", dataset="provided_data",
                     verdict="accepted")  # fmt: skip
    assert provided >= 3
    assert value(samples, "sandlot_http_requests_total", endpoint="unmatched", status="404") >= 3


def test_a_full_server_counts_its_504s(api: httpx.Client, full_server: Server) -> None:
    before = scrape(api)
    started = threading.Event()

    def long_run() -> None:
        with httpx.Client(base_url=full_server.url, timeout=60) as c:
            started.set()
            run(c, "import time; time.sleep(2)")

    t = threading.Thread(target=long_run)
    t.start()
    started.wait()
    for _ in range(100):  # until the long run holds the only slot
        if value(scrape(api), "sandlot_slots_busy") == 1:
            break
    refused = api.post("/run_code", json={"code": "print(1)", "language": "python"})
    t.join()
    assert refused.status_code == 504
    after = scrape(api)
    assert (
        value(after, "sandlot_rejected_total", reason="queue_full")
        - value(before, "sandlot_rejected_total", reason="queue_full")
        == 1
    )
    assert value(after, "sandlot_http_requests_total", endpoint="/run_code", status="504") >= 1
