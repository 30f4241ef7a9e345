"""Sessions across the worker processes of one server (`serve --workers N`, see server.py).

A session lives in the worker that created it, and its id names that worker
(`sessions.manager.worker_of`). The kernel hands each connection to any worker, so a worker that
gets a request for another's session forwards it, as it came (its body, headers and API key),
to the owner's private unix socket, and relays the answer as it comes: NDJSON lines one by
one. The sockets are in a directory only root may enter (`<state_dir>/<supervisor pid>-peers`),
and a forwarded request carries a secret of this server's, given to each worker on its
settings pipe: only with it does a worker believe the request's client address (whose sessions
these are; `PeerClient` makes it the request's client, for the access log too) and serve it as
the owner.

Asking the other workers also makes `GET /sessions` list a client's sessions in every worker,
and lets a worker whose share of `session_max` is taken create a session in another's. A request
that came from a worker is always served where it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandlot import events
from sandlot.api.errors import error_response
from sandlot.errors import SessionEnded, TooManySessions
from sandlot.sessions import worker_of

SECRET = "x-sandlot-peer"  # the server's secret: the request came from a worker
CLIENT = "x-sandlot-client"  # the address of the client a worker forwards for
PRIVATE = {SECRET.encode(), CLIENT.encode()}
HOP = {b"host", b"content-length", b"transfer-encoding", b"connection", b"x-request-id"}
CONNECT_TIMEOUT = 5.0


@dataclass
class Peers:
    """This worker (`index` of `workers`), where the others listen, and the server's secret."""

    index: int
    workers: int
    directory: Path
    secret: str
    _clients: dict[int, httpx.AsyncClient] = field(default_factory=dict)

    def socket(self, worker: int) -> Path:
        return self.directory / f"{worker}.sock"

    def others(self) -> list[int]:
        return [w for w in range(self.workers) if w != self.index]

    def foreign(self, session_id: str) -> int | None:
        """The other worker that holds this session, if the id names one."""
        worker = worker_of(session_id)
        if worker is None or worker >= self.workers or worker == self.index:
            return None
        return worker

    def trusted(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether a request came from another worker (it holds the secret)."""
        given = next((v for k, v in headers if k == SECRET.encode()), b"")
        return hmac.compare_digest(given, self.secret.encode())

    def client(self, worker: int) -> httpx.AsyncClient:
        if worker not in self._clients:
            logging.getLogger("httpx").setLevel(logging.WARNING)  # the access log has each one
            transport = httpx.AsyncHTTPTransport(uds=str(self.socket(worker)))
            timeout = httpx.Timeout(None, connect=CONNECT_TIMEOUT)  # an execution may take long
            self._clients[worker] = httpx.AsyncClient(transport=transport, timeout=timeout)
        return self._clients[worker]

    async def close(self) -> None:
        for c in self._clients.values():
            await c.aclose()
        self._clients.clear()

    def headers(self, scope: Scope, client: str) -> list[tuple[bytes, bytes]]:
        """A request's headers as forwarded: its own (less ours and per-hop ones), the secret,
        the client's address and the request's ID (so both workers log the same one)."""
        own = [(k, v) for k, v in scope["headers"] if k not in PRIVATE | HOP - {b"host"}]
        record = events.CURRENT.get(None)
        rid = [(b"x-request-id", record.id.encode())] if record is not None else []
        return [*own, *rid, (SECRET.encode(), self.secret.encode()),
                (CLIENT.encode(), client.encode())]  # fmt: skip

    def build(self, worker: int, scope: Scope, client: str, body: bytes,
              method: str | None = None, path: str | None = None) -> httpx.Request:  # fmt: skip
        target = path or scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        url = f"http://worker{target}" + (f"?{query}" if query and path is None else "")
        headers = self.headers(scope, client)
        return self.client(worker).build_request(
            method or scope["method"], url, headers=headers, content=body
        )

    async def ask(self, worker: int, request: httpx.Request) -> httpx.Response | None:
        """Another worker's whole answer, or None when it does not answer (it is restarting)."""
        try:
            return await self.client(worker).send(request)
        except httpx.TransportError:
            return None


class Forward(Response):
    """The answer of the worker that holds a session, relayed as it comes; the request is
    abandoned there if our client goes away. 410 if that worker is gone: the session died
    with it."""

    def __init__(self, peers: Peers, worker: int, session_id: str, client: str, body: bytes):
        self.peers, self.worker, self.session_id = peers, worker, session_id
        self.client_host, self.body_out = client, body
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        relay = asyncio.create_task(self._relay(scope, send))
        watch = asyncio.create_task(_disconnected(receive))
        try:
            await asyncio.wait({relay, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            relay.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relay

    async def _relay(self, scope: Scope, send: Send) -> None:
        peers = self.peers
        request = peers.build(self.worker, scope, self.client_host, self.body_out)
        try:
            upstream = await peers.client(self.worker).send(request, stream=True)
        except httpx.TransportError:
            gone = SessionEnded(
                f"session {self.session_id} has ended: the server process that held it "
                f"(worker {self.worker}) stopped"
            )
            await error_response(gone)(scope, _nothing, send)
            return
        try:
            headers = [(k, v) for k, v in upstream.headers.raw
                       if k.lower() not in HOP - {b"content-length"}]  # fmt: skip
            await send({"type": "http.response.start", "status": upstream.status_code,
                        "headers": headers})  # fmt: skip
            with contextlib.suppress(httpx.TransportError):  # it died mid-answer: end ours
                async for chunk in upstream.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await upstream.aclose()  # also when our client went away: the owner abandons it


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


class PeerClient:
    """Middleware (outermost): a request another worker forwarded is its client's, as that
    worker says; from anyone else that say is ignored."""

    def __init__(self, app: ASGIApp, peers: Peers) -> None:
        self.app, self.peers = app, peers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.peers.trusted(scope["headers"]):
            client = next((v for k, v in scope["headers"] if k == CLIENT.encode()), b"")
            scope["client"] = (client.decode("latin-1"), 0)
        await self.app(scope, receive, send)


class SessionRoutes:
    """Middleware: `/sessions/{id}...` of another worker's session goes to that worker."""

    def __init__(self, app: ASGIApp, peers: Peers) -> None:
        self.app, self.peers = app, peers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        parts = scope["path"].split("/", 3) if scope["type"] == "http" else []
        worker = self.peers.foreign(parts[2]) if len(parts) > 2 and parts[1] == "sessions" else None
        if worker is None:
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = Request(scope, receive)
        await Forward(self.peers, worker, parts[2], client_of(request), bytes(body))(
            scope, receive, send
        )


def peers_of(request: Request) -> Peers | None:
    """The other workers, unless there are none or the request came from one of them."""
    peers: Peers | None = getattr(request.app.state, "peers", None)
    if peers is None or peers.trusted(request.headers.raw):
        return None
    return peers


def client_of(request: Request) -> str:
    """The client's address: the socket's peer, or the one a proxy of `forwarded_allow_ips`
    (uvicorn's ProxyHeadersMiddleware) or another worker (PeerClient) forwards for."""
    return request.client.host if request.client else ""


async def gather(
    request: Request, path: str, body: bytes = b"", method: str = "GET", *, forwarded: bool = False
) -> list:
    """The other workers' JSON answers to one local request (those that answer). `forwarded`:
    also for a request another worker forwarded here (a request for a session this worker
    holds), where `path` is a route that asks no further for the forwarded requests it gets."""
    peers: Peers | None = getattr(request.app.state, "peers", None)
    if not forwarded:
        peers = peers_of(request)
    if peers is None:
        return []
    client = client_of(request)
    asks = [peers.ask(w, peers.build(w, request.scope, client, body, method, path))
            for w in peers.others()]  # fmt: skip
    return [r.json() for r in await asyncio.gather(*asks) if r is not None and r.is_success]


async def elsewhere(request: Request, body: bytes) -> Response | None:
    """A new session from the first other worker with room for it (this one has none)."""
    peers = peers_of(request)
    if peers is None:
        return None
    for worker in peers.others():
        built = peers.build(worker, request.scope, client_of(request), body)
        answer = await peers.ask(worker, built)
        if answer is not None and answer.status_code != TooManySessions.status_code:
            kept = [(k, v) for k, v in answer.headers.items() if k.lower() not in {
                "content-length", "transfer-encoding", "connection", "x-request-id"}]  # fmt: skip
            return Response(answer.content, answer.status_code, headers=dict(kept))
    return None


async def forward_run(request: Request, session_id: str) -> Response | None:
    """`/run_code` with another worker's session: its answer."""
    peers = peers_of(request)
    worker = peers.foreign(session_id) if peers is not None else None
    if peers is None or worker is None:
        return None
    return Forward(peers, worker, session_id, client_of(request), await request.body())
