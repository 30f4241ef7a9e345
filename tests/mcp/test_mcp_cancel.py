"""A run nobody waits for any more is killed, and its slot goes to the next request in line:
an MCP tool call cancelled (`notifications/cancelled`), an MCP connection that ends (its
DELETE, or idling out once its client vanished), a `POST /run_code` whose client hangs up.

The server has one slot, so a second request waits for the first one's slot: it is served only
once the endless run there is gone. The endless run would hold the slot for 300 s by itself;
each wait below polls for a state, with a generous bound well under that, and asserts no time.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from tests.conftest import UID_BASE, Server, running_server, sandlot_processes
from tests.mcp_client import ok, over_http

pytestmark = pytest.mark.root

SLOT_UID = UID_BASE + 12
ENDLESS = {"language": "python", "code": "while True: pass", "run_timeout": 300}
BOUND = 120.0  # seconds any state below may take to come (the endless run lasts 300)
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}  # fmt: skip
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    env = {"SANDLOT_UID_BASE": str(SLOT_UID), "SANDLOT_MCP_IDLE_TIMEOUT": "3",
           "SANDLOT_QUEUE_TIMEOUT": "250"}  # fmt: skip
    with running_server("--slots", "1", env=env) as srv:
        yield srv


def boxes() -> list[str]:
    """The slot's processes: a run's box (not the one built ahead for the next run)."""
    return sandlot_processes(range(SLOT_UID, SLOT_UID + 1))


def wait_until(check: Any, bound: float = BOUND) -> bool:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())


def health(srv: Server) -> dict[str, Any]:
    return httpx.get(srv.url + "/health", timeout=30).json()


def idle(srv: Server) -> bool:
    h = health(srv)
    return h["busy"] == 0 and h["queued"] == 0 and boxes() == []


def raw_post(
    srv: Server, path: str, body: dict[str, Any], headers: dict[str, str]
) -> socket.socket:
    """A POST sent on a socket of its own, which the test may close mid-answer."""
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in {
        "Host": "127.0.0.1", "Content-Length": str(len(data)), **headers}.items())  # fmt: skip
    sock = socket.create_connection(("127.0.0.1", srv.port))
    sock.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + data)
    return sock


class Queued(threading.Thread):
    """`print(2)` over `/run_code`, sent once the slot is taken: it waits in line for it."""

    def __init__(self, srv: Server) -> None:
        super().__init__(daemon=True)
        self.srv = srv
        self.answer: dict[str, Any] | None = None

    def run(self) -> None:
        body = {"language": "python", "code": "print(2)"}
        self.answer = httpx.post(self.srv.url + "/run_code", json=body, timeout=BOUND * 2).json()

    def queue(self) -> Queued:
        self.start()
        assert wait_until(lambda: health(self.srv)["queued"] == 1), health(self.srv)
        return self

    def served(self) -> bool:
        self.join(BOUND)
        return self.answer is not None and self.answer["stdout"] == "2\n"


def running(srv: Server) -> bool:
    return health(srv)["busy"] == 1 and boxes() != []


def test_run_code_whose_client_hangs_up_is_killed_and_its_slot_goes_to_the_next(
    server: Server,
) -> None:
    assert wait_until(lambda: idle(server))
    sock = raw_post(server, "/run_code", ENDLESS, {"Content-Type": "application/json"})
    assert wait_until(lambda: running(server)), (health(server), boxes())
    nxt = Queued(server).queue()
    sock.close()
    assert nxt.served(), nxt.answer
    assert wait_until(lambda: idle(server)), (health(server), boxes())
    assert server.alive()


def test_control_a_client_that_stays_gets_its_answer(server: Server) -> None:
    """The same request with a client that waits: answered in full (not cut off by the watch
    for a hang-up), and its run ended by its own limit."""
    body = {**ENDLESS, "run_timeout": 2}
    answer = httpx.post(server.url + "/run_code", json=body, timeout=BOUND).json()
    assert answer["run_result"]["status"] == "TimeLimitExceeded", answer
    assert wait_until(lambda: idle(server))


def test_mcp_cancelled_call_is_killed_and_its_slot_goes_to_the_next(server: Server) -> None:
    assert wait_until(lambda: idle(server))
    nxt: list[Queued] = []

    async def body() -> None:
        async with over_http(server.url) as s:
            with anyio.CancelScope() as call:

                async def cancel_once_running() -> None:
                    await anyio.to_thread.run_sync(wait_until, lambda: running(server))
                    nxt.append(await anyio.to_thread.run_sync(Queued(server).queue))
                    call.cancel()  # the SDK's client sends notifications/cancelled

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(cancel_once_running)
                    await s.call_tool("run_code", ENDLESS)
            assert call.cancelled_caught
            # The connection goes on: its next call is served in the same slot.
            out = await ok(s, "run_code", language="python", code="print(3)")
            assert out["stdout"] == "3\n"

    anyio.run(body)
    assert nxt and nxt[0].served(), nxt
    assert wait_until(lambda: idle(server)), (health(server), boxes())


def mcp_connection(srv: Server) -> dict[str, str]:
    r = httpx.post(srv.url + "/mcp", json=INIT, headers=MCP_HEADERS, timeout=30)
    r.raise_for_status()
    headers = {**MCP_HEADERS, "mcp-session-id": r.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}  # fmt: skip
    httpx.post(srv.url + "/mcp", headers=headers, timeout=30,
               json={"jsonrpc": "2.0", "method": "notifications/initialized"})  # fmt: skip
    return headers


@pytest.mark.parametrize("goodbye", ["delete", "vanish"])
def test_mcp_connection_that_ends_mid_call_kills_its_run(server: Server, goodbye: str) -> None:
    """The client ends its connection (DELETE) while its call runs, or its socket closes and
    it says nothing more (the connection idles out after mcp_idle_timeout): the run is killed
    with it, and the slot goes to the next request."""
    assert wait_until(lambda: idle(server))
    headers = mcp_connection(server)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "run_code", "arguments": ENDLESS}}  # fmt: skip
    sock = raw_post(server, "/mcp", call, headers)
    assert wait_until(lambda: running(server)), (health(server), boxes())
    nxt = Queued(server).queue()
    if goodbye == "delete":
        httpx.delete(server.url + "/mcp", headers=headers, timeout=30)
    sock.close()
    assert nxt.served(), nxt.answer
    assert wait_until(lambda: idle(server)), (health(server), boxes())
    gone = httpx.post(server.url + "/mcp", headers=headers, timeout=30,
                      json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})  # fmt: skip
    assert gone.status_code == 404  # the connection ended with its run
