"""Who calls a tool, and what they opened: the owner a tool acts for, and the sessions each MCP
connection opened, so that they end when it does.

Over HTTP the owner is the HTTP routes' (`sandlot.tenancy`): the tenant the request's API key
names (the API keys middleware found it), from the client's address. Over stdio there is one
caller, `STDIO`. A tool reaches only its tenant's sessions: another's answer as if they did not
exist.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable

from mcp.server.mcpserver import Context

from sandlot.tenancy import LOCAL, Owner, owner_of

STDIO = Owner(LOCAL, "stdio")
CONNECTION_HEADER = "mcp-session-id"


def owner(ctx: Context) -> Owner:
    request = ctx.request_context.request
    if request is None:
        return STDIO
    return owner_of(request.scope)


def connection(ctx: Context) -> str:
    """The MCP connection a call came on: its session id over streamable HTTP (none for the
    stateless protocol: then its sessions end by idling out), one for all of stdio."""
    request = ctx.request_context.request
    if request is None:
        return str(STDIO)
    return request.headers.get(CONNECTION_HEADER, "")


class Opened:
    """The sandlot sessions each MCP connection opened, to end them when it ends."""

    def __init__(self, close: Callable[[str], Awaitable[object]]) -> None:
        self._close = close
        self._by_connection: defaultdict[str, set[str]] = defaultdict(set)

    def add(self, connection: str, session_id: str) -> None:
        if connection:
            self._by_connection[connection].add(session_id)

    def discard(self, connection: str, session_id: str) -> None:
        self._by_connection.get(connection, set()).discard(session_id)

    async def ended(self, connection: str) -> None:
        """The connection is gone: end what it opened (ended sessions are skipped)."""
        for session_id in self._by_connection.pop(connection, set()):
            await self._close(session_id)
