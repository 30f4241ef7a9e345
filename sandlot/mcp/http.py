"""`/mcp`: the MCP server over streamable HTTP, inside the HTTP app.

It sits behind the app's middleware like any route: API keys (a client without one gets 401),
the Host check, JSON-only POSTs and the body cap. The tenant its key names is what the tools
act for (`caller`), and the identity the SDK binds an MCP connection to: its id, presented with
another key, is refused (404). When a
connection ends (the client's DELETE, `mcp_idle_timeout` without a request, the server
stopping), the sessions it opened end with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from fastapi import APIRouter, FastAPI
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from sandlot.api.auth import tenant_of
from sandlot.mcp import caller, python_tool
from sandlot.mcp.server import build
from sandlot.service import Service

PATH = "/mcp"


class _Connections(StreamableHTTPSessionManager):
    """The SDK's manager, telling `opened` when a connection is gone, however it went."""

    def __init__(self, opened: caller.Opened, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened = opened

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
        await self.connections.asgi_app(scope, receive, send)


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
