"""Who calls a tool, and what they opened: the owner a tool acts for, and the sessions each MCP
connection opened, so that they end when it does.

Over HTTP the owner is the caller's API key (the `/mcp` face puts it in the request's scope,
`OWNER`), or the client's address on a server without keys, as for the HTTP routes. Over stdio
there is one caller, `LOCAL`. A tool reaches only its owner's sessions: another's answer as if
they did not exist.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Awaitable, Callable

from mcp.server.mcpserver import Context

LOCAL = "local"
OWNER = "sandlot.mcp.owner"  # the scope's key for the owner the /mcp face found
CONNECTION_HEADER = "mcp-session-id"


def key_owner(token: bytes) -> str:
    """An owner named by an API key, without the key in it (it shows in logs and listings)."""
    return "key:" + hashlib.sha256(token).hexdigest()[:32]


def owner(ctx: Context) -> str:
    request = ctx.request_context.request
    if request is None:
        return LOCAL
    return str(request.scope.get(OWNER) or LOCAL)


def connection(ctx: Context) -> str:
    """The MCP connection a call came on: its session id over streamable HTTP (none for the
    stateless protocol: then its sessions end by idling out), one for all of stdio."""
    request = ctx.request_context.request
    if request is None:
        return LOCAL
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
