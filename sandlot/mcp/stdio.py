"""`sandlot mcp`: the MCP server over stdio, for a coding assistant that starts it.

Two ways to serve, one set of tools:
- with a server (`--server URL` or SANDBOX_FUSION_URL): a bridge (`bridge.py`) that passes
  every message between stdio and the server's `/mcp`, with SANDLOT_API_KEY as its key; the
  server runs the tools (its jail, its repositories, its limits);
- as root without one: the tools over a Service in this process (a local jail).
Neither (not root, no server): a message saying how to get one, and exit status 2.

Ready to answer at once: the local jail starts once `initialize` is answered, and a tool call
waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any

from sandlot.config import Config

NEITHER = (
    "sandlot mcp runs code in a local jail only as root. Run it as root (e.g. `sudo sandlot "
    "mcp`), or give it a sandlot server to use: `sandlot mcp --server http://HOST:8080` or "
    "SANDBOX_FUSION_URL=http://HOST:8080 (with SANDLOT_API_KEY if the server needs a key)."
)


async def serve_local(config: Config) -> None:
    """The tools over a Service of this process; its sessions and jail end with stdin."""
    from sandlot.mcp import caller
    from sandlot.mcp.server import build
    from sandlot.service import Service

    service = Service(config)
    server, opened = build(service)
    starting: list[asyncio.Task[None]] = []

    async def start() -> None:
        await asyncio.to_thread(service.start)  # a failed start is said by each tool
        await service.open_sessions()

    async def started_after_answer(ctx: Any, call_next: Any) -> Any:
        """The jail starts once the first message is answered (a start in the background
        would slow that answer on a busy machine); a tool call waits for it."""
        if ctx.method == "tools/call":
            if not starting:
                starting.append(asyncio.create_task(start()))
            await asyncio.shield(starting[0])
        answer = await call_next(ctx)
        if not starting:
            starting.append(asyncio.create_task(start()))
        return answer

    server.middleware.append(started_after_answer)
    try:
        await server.run_stdio_async()
    finally:
        for task in starting:
            with contextlib.suppress(BaseException):
                await task
        await opened.ended(str(caller.STDIO))
        await service.close_sessions()
        service.close()


def main(server: str | None, api_key: str | None, config: Config) -> int:
    if server:
        from sandlot.mcp import bridge

        bridge.main(server, api_key)
        return 0
    if os.geteuid() != 0:
        print(NEITHER, file=sys.stderr)
        return 2
    import anyio

    anyio.run(serve_local, config)
    return 0
