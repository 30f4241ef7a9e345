"""Slots, the bounded queue and 504s, against a real server with one slot and a short queue."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from sandlot.client import Client
from tests.conftest import running_server

SLEEP = "import time; time.sleep({})"


@pytest.fixture(scope="module")
def small_server():
    env = {"SANDLOT_QUEUE_SIZE": "2", "SANDLOT_QUEUE_TIMEOUT": "3"}
    with running_server("--slots", "1", env=env) as srv:
        yield srv


def post(url: str, code: str, **fields) -> tuple[int, dict, float]:
    start = time.monotonic()
    r = httpx.post(
        url + "/run_code", json={"code": code, "language": "python", **fields}, timeout=60
    )
    return r.status_code, r.json(), time.monotonic() - start


def test_queued_time_does_not_count_against_the_run(small_server):
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(post, small_server.url, SLEEP.format(1.2), run_timeout=2)
                   for _ in range(2)]  # fmt: skip
        results = [f.result() for f in futures]
    for status, body, _ in results:
        assert status == 200 and body["status"] == "Success", body
    # One of them waited about a full run in the queue and still had its whole run_timeout.
    assert max(elapsed for _, _, elapsed in results) >= 2.2


def test_full_queue_answers_504_fast_and_the_server_keeps_serving(small_server):
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(post, small_server.url, SLEEP.format(2)) for _ in range(6)]
        time.sleep(0.5)
        start = time.monotonic()
        assert httpx.get(small_server.url + "/v1/ping", timeout=5).json() == "pong"
        health = httpx.get(small_server.url + "/health", timeout=5).json()
        assert time.monotonic() - start < 2, "the server stalled while its slot was busy"
        assert health["busy"] == 1 and health["queued"] >= 1
        results = [f.result() for f in futures]
    statuses = sorted(status for status, _, _ in results)
    assert statuses.count(504) >= 2, statuses
    assert statuses.count(200) >= 1
    for status, body, elapsed in results:
        if status == 504:
            assert "retry" in body["detail"]
            assert elapsed < 5  # refused at once (queue full) or after the 3 s queue timeout
    assert small_server.alive()


def test_sandlot_client_retries_504_until_served(small_server):
    with ThreadPoolExecutor(4) as pool:
        blockers = [pool.submit(post, small_server.url, SLEEP.format(1)) for _ in range(3)]
        time.sleep(0.2)
        with Client(small_server.url, retries=8) as sb:
            out = sb.run_code("print('served')", "python")
        assert out.stdout == "served\n"
        for f in blockers:
            f.result()
