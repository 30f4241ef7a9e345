"""Slots, the bounded queue and 504s, against a real server with one slot and a short queue."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from sandlot.client import Client
from tests.conftest import running_server

pytestmark = [pytest.mark.root, pytest.mark.slow]  # queues and sleeps by design

SLEEP = "import time; time.sleep({})"


@pytest.fixture(scope="module")
def small_server():
    env = {"SANDLOT_QUEUE_SIZE": "2", "SANDLOT_QUEUE_TIMEOUT": "3"}
    with running_server("--slots", "1", env=env) as srv:
        yield srv


# Prints when it started and ended, by the host's clock (a box has no clock of its own).
TIMED = "import time; a = time.time(); time.sleep({}); print(a, time.time())"


def post(url: str, code: str, **fields) -> tuple[int, dict]:
    r = httpx.post(
        url + "/run_code", json={"code": code, "language": "python", **fields}, timeout=60
    )
    return r.status_code, r.json()


def test_queued_time_does_not_count_against_the_run(small_server):
    """Two 2 s runs with run_timeout 3 on one slot: the second waits the first's 2 s in the
    queue, which would leave it 1 s, and still finishes."""
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(post, small_server.url, TIMED.format(2), run_timeout=3)
                   for _ in range(2)]  # fmt: skip
        results = [f.result() for f in futures]
    for status, body in results:
        assert status == 200 and body["status"] == "Success", body
    (_, first_end), (second_start, _) = sorted(
        tuple(map(float, b["stdout"].split())) for _, b in results
    )
    assert second_start >= first_end, "the runs overlapped: the second did not wait in the queue"


def test_full_queue_answers_504_and_the_server_keeps_serving(small_server):
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(post, small_server.url, SLEEP.format(2)) for _ in range(6)]
        time.sleep(0.5)
        assert httpx.get(small_server.url + "/v1/ping", timeout=5).json() == "pong"
        health = httpx.get(small_server.url + "/health", timeout=5).json()
        assert health["busy"] == 1 and health["queued"] >= 1  # answered while its slot ran
        results = [f.result() for f in futures]
    statuses = sorted(status for status, _ in results)
    assert statuses.count(504) >= 2, statuses
    assert statuses.count(200) >= 1
    for status, body in results:
        if status == 504:  # refused at once (queue full, or it would not start in 3 s) or at 3 s
            assert "retry" in body["detail"]
            assert any(why in body["detail"] for why in ("requests wait", "within 3s",
                                                         "start in about")), body  # fmt: skip
    assert small_server.alive()


def test_a_504_says_when_to_retry(small_server):
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(httpx.post, small_server.url + "/run_code", timeout=60,
                               json={"code": SLEEP.format(2), "language": "python"})
                   for _ in range(6)]  # fmt: skip
        answers = [f.result() for f in futures]
    refused = [r for r in answers if r.status_code == 504]
    assert refused, [r.status_code for r in answers]
    for r in refused:
        assert int(r.headers["retry-after"]) >= 1
        assert f"retry in {r.headers['retry-after']}s" in r.json()["detail"]


def test_a_waiting_request_whose_client_left_never_runs(small_server):
    """verl gives up reading after its own timeout: what it left in line must not run, and
    must not hold up the requests behind it."""
    with ThreadPoolExecutor(1) as pool:
        blocker = pool.submit(post, small_server.url, SLEEP.format(4))
        while httpx.get(small_server.url + "/health", timeout=5).json()["busy"] == 0:
            time.sleep(0.05)
        with pytest.raises(httpx.ReadTimeout):  # queued behind the blocker, then given up
            httpx.post(small_server.url + "/run_code", timeout=0.5,
                       json={"code": "print('left behind')", "language": "python"})  # fmt: skip
        deadline = time.monotonic() + 2.5  # the blocker runs 4 s: it still holds the slot
        while httpx.get(small_server.url + "/health", timeout=5).json()["queued"] != 0:
            assert time.monotonic() < deadline, "the request of a client that left still waits"
            time.sleep(0.05)
        assert blocker.result()[0] == 200
    gone = [json.loads(line) for line in small_server.output().splitlines()
            if '"status": 499' in line]  # fmt: skip
    assert gone and gone[-1]["endpoint"] == "/run_code" and gone[-1]["runs"] == 0


def test_sandlot_client_retries_504_until_served(small_server):
    with ThreadPoolExecutor(4) as pool:
        blockers = [pool.submit(post, small_server.url, SLEEP.format(1)) for _ in range(3)]
        time.sleep(0.2)
        with Client(small_server.url, retries=8) as sb:
            out = sb.run_code("print('served')", "python")
        assert out.stdout == "served\n"
        for f in blockers:
            f.result()


def test_a_cancelled_request_stops_its_run_and_holds_its_slot_until_the_jail_is_done():
    """A request cancelled mid-run (its client gone, a batch's stop_on_first_failure, a
    shutdown) has its run stopped: the box is killed, not left to its 300 s, and the slot is
    freed only once the jail is done with it, so the next caller is admitted to a free slot,
    never queued unseen behind the old run's lock."""
    from sandlot.config import Config
    from sandlot.executor import CodeRequest
    from sandlot.service import Service
    from tests.conftest import sandlot_processes

    uid = 64500
    service = Service(Config.load(slots=1, uid_base=uid, state_dir="/run/sandlot-test-cancel"))
    service.start()
    endless = CodeRequest(code="while True: pass", language="python", run_timeout=300)
    try:
        executor = service.executor

        async def scenario() -> tuple[int, list[str], int, str]:
            long = asyncio.create_task(executor.execute(endless))
            while executor.admission.busy == 0 or not sandlot_processes(range(uid, uid + 1)):
                await asyncio.sleep(0.01)
            long.cancel()
            busy_while_stopping = executor.admission.busy
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(long, 120)  # a bound far under the run's 300 s
            left = sandlot_processes(range(uid, uid + 1))
            nxt = await executor.execute(CodeRequest(code="print('next')", language="python"))
            return busy_while_stopping, left, executor.admission.busy, nxt.run.stdout.decode()

        busy_while_stopping, left, busy_after, out = asyncio.run(scenario())
    finally:
        service.close()
    assert busy_while_stopping == 1, "the slot was freed while its run went on"
    assert left == [], "the cancelled run's box is still running"
    assert busy_after == 0 and out == "next\n"
