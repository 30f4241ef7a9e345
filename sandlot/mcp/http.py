"""`/mcp`: the MCP server over streamable HTTP, inside the HTTP app.

It sits behind the app's middleware like any route: API keys (a client without one gets 401),
the Host check, JSON-only POSTs and the body cap. The tenant its key names is what the tools
act for (`caller`), and the identity the SDK binds an MCP connection to: its id, presented with
another key, is refused (404). When a
connection ends (the client's DELETE, `mcp_idle_timeout` without a request, the server
stopping), the sessions it opened end with it.

A call is answered as one JSON body when nothing can come before its result: it asks for no
progress (no progress token) and is not one of the long tools (`progress.STREAMED`, which
stream their progress and whose stream keeps a proxy from timing out a silent wait). Every other
call, and the request that opens a connection, is answered as an SSE stream. The SDK's JSON
mode costs a call a third less of the server's CPU than its stream (docs/mcp.md); cancelling
(`notifications/cancelled`, a connection's end) works the same either way.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any

from fastapi import APIRouter, FastAPI
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from starlette.types import Message, Receive, Scope, Send

from sandlot.mcp import caller, python_tool
from sandlot.mcp.progress import STREAMED
from sandlot.mcp.server import build
from sandlot.service import Service
from sandlot.tenancy import tenant_of

PATH = "/mcp"
SMALL = 64 << 10  # bytes: a larger call is answered as a stream, its body read once only

# Whether the request this task serves is answered as JSON. Only a request's own task sets it:
# the connection's task (which routes every answer and notification) keeps the default.
_AS_JSON: ContextVar[bool] = ContextVar("mcp_as_json", default=False)


class _Answering(StreamableHTTPServerTransport):
    """The SDK's transport, its JSON mode chosen per request (`_AS_JSON`) instead of once."""

    @property
    def is_json_response_enabled(self) -> bool:  # type: ignore[override]
        return _AS_JSON.get()


class _Connections(StreamableHTTPSessionManager):
    """The SDK's manager, telling `opened` when a connection is gone, however it went, and
    answering each call as JSON or as a stream as it needs."""

    def __init__(self, opened: caller.Opened, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened = opened

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None:  # the SDK builds it; ours only reads its JSON mode differently
            transport.__class__ = _Answering
        return transport

    async def _discard_session(self, session_id: str, transport: Any) -> None:
        await super()._discard_session(session_id, transport)
        await self.opened.ended(session_id)


class MCPEndpoint:
    """The ASGI app served at `/mcp`; `running()` must wrap the app's life."""

    def __init__(self, service: Service, max_body: int) -> None:
        cfg = service.config
        server, opened = build(service)
        self.connections = _Connections(
            opened,
            server._lowlevel_server,  # the SDK's way to a manager of our own (see its docs)
            session_idle_timeout=cfg.mcp_idle_timeout,
            max_sessions=cfg.mcp_connections,
            max_request_body_size=max_body,
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.connections.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        identify(scope, PATH)
        if scope["method"] != "POST" or not _has_header(scope, MCP_SESSION_ID_HEADER):
            await self.connections.asgi_app(scope, receive, send)  # a GET, DELETE, or an opening
            return
        body, replay = await _read_body(receive)
        token = _AS_JSON.set(_answer_as_json(body))
        try:
            await self.connections.asgi_app(scope, replay, send)
        finally:
            _AS_JSON.reset(token)


def _has_header(scope: Scope, name: str) -> bool:
    key = name.encode()
    return any(k == key for k, _ in scope["headers"])


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The request's body (the app's body cap has bounded it), and a `receive` that gives it
    again, then what follows (the client leaving)."""
    chunks: list[bytes] = []
    pending: list[Message] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            pending.append(message)  # the client left: the SDK finds out from the replay
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    pending.insert(0, {"type": "http.request", "body": body, "more_body": False})

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return body, replay


def _answer_as_json(body: bytes) -> bool:
    """Whether nothing but its result can answer this message: a small request with no
    progress token that calls no long tool. Anything unexpected goes to the stream, whose
    path the SDK's own checks guard as before."""
    if len(body) > SMALL:
        return False
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict):
        return False
    params = message.get("params", {})
    if not isinstance(params, dict) or progress_token_from_params(params) is not None:
        return False
    return not (message.get("method") == "tools/call" and params.get("name") in STREAMED)


def identify(scope: Scope, endpoint: str) -> None:
    """The caller, for the SDK: its tenant (found by the API keys middleware), so that an MCP
    connection's id is refused with another key; and the endpoint, for the access log and
    the metrics (a raw ASGI route leaves it unset)."""
    scope.setdefault("route", SimpleNamespace(path=endpoint))
    tenant = str(tenant_of(scope))
    scope["user"] = AuthenticatedUser(AccessToken(token=tenant, client_id=tenant, scopes=[]))


def install(app: FastAPI, service: Service, max_body: int) -> None:
    """Serve `/mcp` in `app`, its connections kept for the app's life; and gpt-oss's `python`
    tool at `/python/sse` (python_tool.py)."""
    endpoint = MCPEndpoint(service, max_body)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with endpoint.running():
            yield

    router = APIRouter(lifespan=lifespan)
    # an ASGI app as the endpoint: starlette serves it as it is (its typing names functions only)
    router.add_route(PATH, endpoint, methods=["GET", "POST", "DELETE"],  # type: ignore[arg-type]
                     include_in_schema=False)  # fmt: skip
    python_tool.install(router, service, identify)
    app.include_router(router)
