"""sandlot's client without a sandlot server: its retry policy against a scripted HTTP server on
127.0.0.1 (a server that answers 504 exactly twice cannot be had otherwise), its balancing over
several servers, and the sync/async twins' sameness. The real servers are in test_clients.py and
test_multi_server.py."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sandlot.client import AsyncClient, Client, RetryPolicy, ServerError, Servers, Unreachable

FAST = RetryPolicy(attempts=4, initial=0.01, max_wait=0.05)
OK = {"status": "Success", "stdout": "1\n"}


class Scripted(ThreadingHTTPServer):
    """Answers the statuses of `script` in turn (the last one again when it runs out)."""

    daemon_threads = True

    def __init__(self, script: list[int], delay: float = 0.0) -> None:
        self.script, self.delay, self.seen = list(script), delay, 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Scripted

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        with self.server.lock:
            self.server.seen += 1
            status = self.server.script.pop(0) if len(self.server.script) > 1 else (
                self.server.script[0])  # fmt: skip
        time.sleep(self.server.delay)
        body = json.dumps(OK if status == 200 else {"detail": f"scripted {status}"}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def scripted(script: list[int], delay: float = 0.0) -> Iterator[Scripted]:
    srv = Scripted(script, delay)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens once it is closed


def test_504_is_retried_until_served():
    with scripted([504, 504, 200]) as srv, Client(srv.url, retry=FAST) as sb:
        assert sb.run_code("print(1)", "python").stdout == "1\n"
        assert srv.seen == 3


@pytest.mark.parametrize("status", [400, 404, 413, 422, 500, 503])
def test_other_errors_are_not_retried(status):
    with scripted([status, 200]) as srv, Client(srv.url, retry=FAST) as sb:
        with pytest.raises(ServerError) as err:
            sb.run_code("print(1)", "python")
        assert err.value.status_code == status and f"scripted {status}" in err.value.detail
        assert srv.seen == 1


def test_retries_are_bounded():
    with scripted([504]) as srv, Client(srv.url, retry=FAST) as sb:
        with pytest.raises(ServerError) as err:
            sb.run_code("print(1)", "python")
        assert err.value.status_code == 504 and srv.seen == FAST.attempts


def test_a_refused_connection_is_retried_then_unreachable():
    url = closed_port_url()
    with Client(url, retry=FAST) as sb, pytest.raises(Unreachable, match="cannot reach"):
        sb.ping()
    assert not sb.servers.is_up(url)  # drained for the cooldown


def test_waits_are_jittered_and_bounded():
    policy = RetryPolicy(attempts=8, initial=0.1, max_wait=1.0)
    wait = policy.options()["wait"]

    class State:
        def __init__(self, n: int) -> None:
            self.attempt_number = n

    draws = [wait(State(n)) for n in range(1, 8) for _ in range(50)]
    assert all(0 <= w <= 1.0 for w in draws)
    assert len({round(w, 6) for w in draws}) > 300  # drawn, not a fixed schedule
    assert max(wait(State(1)) for _ in range(50)) <= 0.1  # the first waits are short


def test_a_dead_server_is_drained_and_its_requests_go_elsewhere():
    dead = closed_port_url()
    with scripted([200]) as live, Client([dead, live.url], retry=FAST) as sb:
        for _ in range(6):
            assert sb.run_code("print(1)", "python").status == "Success"
        assert live.seen == 6
        assert not sb.servers.is_up(dead)


def test_least_outstanding_spreads_concurrent_requests():
    async def go(a: Scripted, b: Scripted) -> None:
        async with AsyncClient([a.url, b.url], retry=FAST) as sb:
            await asyncio.gather(*(sb.run_code("print(1)", "python") for _ in range(8)))

    with scripted([200], delay=0.3) as a, scripted([200], delay=0.3) as b:
        asyncio.run(go(a, b))
        assert (a.seen, b.seen) == (4, 4)


def test_servers_bookkeeping_with_a_clock():
    now = [100.0]
    servers = Servers(["http://a", "http://b/", "http://c"], cooldown=5, clock=lambda: now[0])
    assert servers.urls == ["http://a", "http://b", "http://c"]
    with servers.lease() as first, servers.lease() as second, servers.lease() as third:
        assert {first, second, third} == set(servers.urls)  # one each while all are busy
        assert set(servers.outstanding().values()) == {1}
    assert set(servers.outstanding().values()) == {0}
    servers.down("http://a")
    picks = set()
    for _ in range(4):
        with servers.lease() as url:
            picks.add(url)
    assert picks == {"http://b", "http://c"}  # drained while cooling down
    servers.down("http://b")
    servers.down("http://c")
    with servers.lease() as url:
        assert url == "http://a"  # all down: the one that went down first is tried
    now[0] += 5
    assert servers.is_up("http://a") and servers.is_up("http://c")


def test_sync_and_async_clients_are_twins():
    def public(cls: type) -> dict[str, inspect.Signature]:
        return {
            name: inspect.signature(fn)
            for name, fn in vars(cls).items()
            if callable(fn) and not name.startswith("_")
        }

    sync, aio = public(Client), public(AsyncClient)
    assert set(sync) == set(aio) >= {"run_code", "submit", "repo_tests", "languages", "ping"}
    for name in sync:
        assert list(sync[name].parameters) == list(aio[name].parameters), name
        assert inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
    init_sync = inspect.signature(Client.__init__).parameters
    init_aio = inspect.signature(AsyncClient.__init__).parameters
    assert list(init_sync) == list(init_aio)
