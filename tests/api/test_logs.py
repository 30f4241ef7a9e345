"""Request IDs and the server's log: JSON lines (stderr is no terminal here), one access line per
request with the request's ID, jail errors logged with their cause."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest

from tests.conftest import (
    ROOT,
    STATE_ROOT,
    UID_BASE,
    Server,
    assert_nothing_left,
    free_port,
    running_server,
)

pytestmark = pytest.mark.root

RUN = {"code": "print(1)", "language": "python"}
ACCESS_FIELDS = {"endpoint", "status", "language", "verdict", "limit", "queue_ms", "run_ms",
                 "bytes_in", "bytes_out", "client", "tenant", "request_id"}  # fmt: skip


@pytest.fixture(scope="module")
def logged() -> Iterator[Server]:
    with running_server("--slots", "1") as srv:
        yield srv


@pytest.fixture(scope="module")
def api(logged: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=logged.url, timeout=60) as c:
        yield c


def log_lines(srv: Server) -> list[dict]:
    """Every line the server wrote, each parsed as JSON (a line that is not fails the test)."""
    srv.log.seek(0)
    return [json.loads(line) for line in srv.log.read().decode().splitlines()]


def access(srv: Server, request_id: str) -> dict:
    """The one access-log line of a request (the line is written once the answer is sent)."""
    for _ in range(50):
        found = [x for x in log_lines(srv) if x["logger"] == "sandlot.access"
                 and x["request_id"] == request_id]  # fmt: skip
        if found:
            assert len(found) == 1
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no access line for {request_id}")


def test_a_given_request_id_is_echoed_and_logged_with_what_ran(
    api: httpx.Client, logged: Server
) -> None:
    r = api.post("/run_code", json={**RUN, "run_timeout": 0.5, "code": "while True: pass"},
                 headers={"X-Request-ID": "trace-42.a:b_c"})  # fmt: skip
    assert r.status_code == 200 and r.headers["x-request-id"] == "trace-42.a:b_c"
    line = access(logged, "trace-42.a:b_c")
    assert set(line) >= ACCESS_FIELDS
    assert line["endpoint"] == "/run_code" and line["status"] == 200
    assert line["language"] == "python" and line["limit"] == "time" and line["verdict"] == "time"
    assert line["run_ms"] >= 500 and line["queue_ms"] >= 0 and line["client"] == "127.0.0.1"
    assert line["tenant"] == "local"  # no API keys: the one tenant
    assert line["bytes_in"] == len(r.request.content) and line["bytes_out"] == len(r.content)
    assert line["level"] == "info" and line["ts"].endswith("Z")


def test_a_missing_request_id_is_made(api: httpx.Client, logged: Server) -> None:
    r = api.post("/run_code", json=RUN)
    made = r.headers["x-request-id"]
    assert len(made) == 16 and int(made, 16) >= 0
    assert access(logged, made)["verdict"] == "ok"
    other = api.get("/v1/ping").headers["x-request-id"]
    assert other != made


@pytest.mark.parametrize(
    "given",
    ["x" * 129, 'a"}, {"status": 200', "a b", "\u00e9t\u00e9", ""],
    ids=["long", "json", "space", "non-ascii", "empty"],
)
def test_a_hostile_request_id_is_replaced(api: httpx.Client, logged: Server, given: str) -> None:
    """An ID that could forge or bloat a log line (quotes, spaces, non-ASCII, 129 characters)
    is not echoed or logged; the request gets a fresh one."""
    r = api.get("/v1/ping", headers={"X-Request-ID": given.encode()})
    assert r.status_code == 200
    made = r.headers["x-request-id"]
    assert made != given and len(made) == 16
    access(logged, made)
    if given:
        assert all(given not in str(x.get("request_id")) for x in log_lines(logged))


def test_refusals_are_logged_too(api: httpx.Client, logged: Server) -> None:
    r = api.post("/run_code", content=b"{", headers={"content-type": "application/json",
                                                     "x-request-id": "bad-body-1"})  # fmt: skip
    assert r.status_code == 422
    assert access(logged, "bad-body-1")["status"] == 422
    r = api.get("/no/such/path", headers={"x-request-id": "scan-1"})
    assert r.status_code == 404 and access(logged, "scan-1")["endpoint"] == "unmatched"
    assert access(logged, "scan-1")["path"] == "/no/such/path"  # the log has it, never a metric


def spawner_of(srv: Server) -> int:
    """The pid of the server's one slot spawner (`python -m sandlot.jail`)."""
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(srv.proc.pid)],
                         capture_output=True, text=True).stdout  # fmt: skip
    pids = [int(line.split()[0]) for line in out.splitlines() if "-m sandlot.jail" in line]
    assert len(pids) == 1, out
    return pids[0]


def test_a_lost_spawner_is_logged_with_its_cause_and_request(
    api: httpx.Client, logged: Server
) -> None:
    answer: list[httpx.Response] = []
    slow = {**RUN, "code": "import time; time.sleep(5)"}
    t = threading.Thread(target=lambda: answer.append(
        api.post("/run_code", json=slow, headers={"X-Request-ID": "lost-spawner"})))  # fmt: skip
    t.start()
    for _ in range(100):  # until the run holds the slot
        if api.get("/health").json()["busy"] == 1:
            break
        time.sleep(0.05)
    os.kill(spawner_of(logged), signal.SIGKILL)
    t.join()
    assert answer[0].json()["status"] == "SandboxError"
    errors = [x for x in log_lines(logged) if x["level"] == "error"]
    lost = [x for x in errors if x.get("request_id") == "lost-spawner"]
    assert lost and "spawner lost" in lost[0]["msg"] and "cause: EOFError" in lost[0]["msg"]
    assert api.post("/run_code", json=RUN).json()["stdout"] == "1\n"  # a fresh spawner runs it


def test_a_spawner_that_died_between_runs_is_logged(api: httpx.Client, logged: Server) -> None:
    os.kill(spawner_of(logged), signal.SIGKILL)
    time.sleep(0.2)
    assert api.post("/run_code", json=RUN).json()["stdout"] == "1\n"
    warned = [x for x in log_lines(logged) if x["level"] == "warning"]
    assert any("exited with -9 between runs" in x["msg"] for x in warned)


def test_text_logs_when_asked() -> None:
    with running_server("--slots", "1", env={"SANDLOT_LOG_FORMAT": "text"}) as srv:
        httpx.get(srv.url + "/v1/ping", headers={"X-Request-ID": "text-1"})
        time.sleep(0.3)
        srv.log.seek(0)
        lines = srv.log.read().decode().splitlines()
    line = next(x for x in lines if "[text-1]" in x)
    assert "sandlot.access GET /v1/ping 200" in line and not line.startswith("{")


def test_a_terminal_gets_text_logs() -> None:
    """`log_format = auto` (the default): a person at a terminal reads text, not JSON."""
    master, terminal = pty.openpty()
    port = free_port()
    state_dir = f"{STATE_ROOT}/tty-{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandlot", "serve", "--port", str(port), "--slots", "1"],
        cwd=ROOT, stdout=terminal, stderr=terminal,
        env={**os.environ, "SANDLOT_STATE_DIR": state_dir, "SANDLOT_UID_BASE": str(UID_BASE)},
    )  # fmt: skip
    os.close(terminal)
    shown = bytearray()

    def read() -> None:
        with contextlib.suppress(OSError):  # EIO once the server closed the terminal
            while chunk := os.read(master, 4096):
                shown.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/v1/ping", headers={"X-Request-ID": "tty-1"}).status_code:
                    break
            time.sleep(0.2)
        for _ in range(50):
            if b"[tty-1]" in shown:
                break
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(60)
        reader.join()
        os.close(master)
    line = next(x for x in bytes(shown).decode().splitlines() if "[tty-1]" in x)
    assert "sandlot.access GET /v1/ping 200" in line and not line.startswith("{")
    assert_nothing_left(SimpleNamespace(state_dir=state_dir, proc=proc))


def test_a_request_answered_before_routing_is_logged_under_its_route(caplog) -> None:
    """What a middleware answers itself (a 401, a session forwarded to its worker's process)
    never reaches the router: its log line and metrics still name its route."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from sandlot.api.access import Access

    async def never(request):  # the route the middleware answers for
        raise AssertionError("routed")

    class AnswersFirst:
        def __init__(self, app):
            self.app = app

        async def __call__(self, scope, receive, send):
            await PlainTextResponse("forwarded", status_code=202)(scope, receive, send)

    routes = [Route("/sessions/{session_id}/execute", never, methods=["POST"])]
    app = Starlette(routes=routes)
    app.add_middleware(AnswersFirst)
    app.add_middleware(Access, routes=routes)

    async def go() -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return (await c.post("/sessions/s-1/execute", json={})).status_code

    with caplog.at_level("INFO", logger="sandlot.access"):
        assert asyncio.run(go()) == 202
    line = caplog.records[-1].access  # type: ignore[attr-defined]
    assert line["endpoint"] == "/sessions/{session_id}/execute"
    assert line["path"] == "/sessions/s-1/execute"
