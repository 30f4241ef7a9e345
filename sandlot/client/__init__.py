"""Python client for a sandlot server (or any SandboxFusion-compatible one), sync and async.

    from sandlot.client import Client
    with Client("http://127.0.0.1:8080") as sb:
        result = sb.run_code("print(1)", "python")
        print(result.status, result.run_result.stdout)

One retry policy for both (`RetryPolicy`): a 504 (the server is full) or a lost connection is
retried after a jittered, exponentially growing wait, a bounded number of times; any other error
status raises ServerError at once. Give several URLs to spread requests over several servers:
each attempt goes to the one with the fewest requests outstanding, and a server that cannot be
reached is drained for a while and its requests retried on the others. Both classes accept an
httpx transport, so tests can aim them at the ASGI app with no socket.

Sessions (a box that keeps its state across calls, for an agent's loop) are `Client.session()`
and `AsyncClient.session()`; a session's `fork()` and `snapshot()` branch it, and
`from_snapshot()` starts a session from a `Snapshot`. `ToolSessions` keeps one per trajectory
for an agent framework's tool interface, and `feedback()` turns an execution into the text a
model reads next.

Imports neither FastAPI nor the server: a client-only install (`pip install sandlot`) has it.
"""

from sandlot.client._async import AsyncClient
from sandlot.client._base import DEFAULT_URL, RetryPolicy
from sandlot.client._servers import Servers
from sandlot.client._sessions import AsyncSession, Session, Snapshot, ToolSessions, feedback
from sandlot.client._sync import Client
from sandlot.errors import ServerError, Unreachable

__all__ = ["DEFAULT_URL", "AsyncClient", "AsyncSession", "Client", "RetryPolicy", "ServerError",
           "Servers", "Session", "Snapshot", "ToolSessions", "Unreachable",
           "feedback"]  # fmt: skip
