"""gpt-oss's built-in `python` tool, served the way vLLM's `--tool-server` calls it.

vLLM reaches a tool server over MCP's SSE transport at `http://HOST:PORT/.../sse`, names the
tool after the server (`python`), and for each request of a conversation opens a connection
carrying `x-session-id` and calls the tool `python` with `{"code": ...}`, reading the first
text block. The model was trained for a stateful Jupyter, so each `x-session-id` (of each
caller) gets a live Python session that later connections of the same conversation find again;
it ends when it idles out, like any session. Served at `/python/sse` of the server, behind the
same API keys as everything else.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.sse import SseServerTransport
from mcp.types import ToolAnnotations
from pydantic import Field
from starlette.types import Receive, Scope, Send

from sandlot.mcp import caller
from sandlot.mcp.shape import clip, tool_errors
from sandlot.service import Service
from sandlot.usecases import bounded_timeout, check_code_size, conversation_kernel

PREFIX = "/python"
CONVERSATION_HEADER = "x-session-id"
DESCRIPTION = """\
Use this tool to execute Python code in your chain of thought. The code is run in a stateful
Jupyter notebook: variables, imports and files persist between calls of one conversation.
The box has no network access. It answers with the cell's output (stdout, stderr, the value of
its last expression, or the error)."""


def conversation(ctx: Context) -> str:
    request = ctx.request_context.request
    given = request.headers.get(CONVERSATION_HEADER, "") if request is not None else ""
    return given[:256] or caller.connection(ctx)


def build(service: Service) -> MCPServer:
    server: MCPServer = MCPServer("python", instructions=DESCRIPTION, log_level="WARNING")
    kernels: dict[tuple[str, str], str] = {}  # (tenant, conversation) -> session id

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False,
            open_world_hint=False,
        ),
    )  # fmt: skip
    async def python(
        code: Annotated[str, Field(description="the Python code of one notebook cell")],
        ctx: Context,
    ) -> str:
        """Run a cell in this conversation's Python notebook (state persists)."""
        with tool_errors():
            cfg = service.config
            check_code_size(cfg, code)
            session = await conversation_kernel(
                service, kernels, caller.owner(ctx), conversation(ctx)
            )
            result = await session.run(code, bounded_timeout(cfg, None))
        notes: list[str] = []
        parts = [result.text("stdout"), result.text("stderr")]
        for bundle in result.displays:
            parts.append(str(bundle.get("text/plain", "")))
        for error in result.errors:
            parts.append("\n".join(error["traceback"]) or f"{error['ename']}: {error['evalue']}")
        if result.limit:
            parts.append(f"[stopped by the {result.limit} limit]")
        if result.kernel_restarted:
            parts.append("[the kernel was restarted: variables are lost]")
        text = clip("".join(p if p.endswith("\n") else p + "\n" for p in parts if p), "output",
                    notes)  # fmt: skip
        return text + "".join(f"[{n}]\n" for n in notes) if text else "[no output]"

    return server


def install(router: APIRouter, service: Service, identify) -> None:  # type: ignore[no-untyped-def]
    """The SSE endpoint (`/python/sse`) and its message endpoint, on `router`; `identify`
    puts the caller in a request's scope, as for `/mcp`."""
    server = build(service)
    sse = SseServerTransport(PREFIX + "/messages/")
    low = server._lowlevel_server  # the SDK's way to serve it on a transport of our own

    async def stream(scope: Scope, receive: Receive, send: Send) -> None:
        identify(scope, PREFIX + "/sse")
        async with sse.connect_sse(scope, receive, send) as (read, write):
            await low.run(read, write, low.create_initialization_options())

    async def message(scope: Scope, receive: Receive, send: Send) -> None:
        identify(scope, PREFIX + "/messages/")
        await sse.handle_post_message(scope, receive, send)

    # starlette serves an ASGI app given as an endpoint as it is (its typing names functions only)
    router.add_route(PREFIX + "/sse", _Asgi(stream), methods=["GET"],  # type: ignore[arg-type]
                     include_in_schema=False)  # fmt: skip
    router.add_route(PREFIX + "/messages/", _Asgi(message), methods=["POST"],  # type: ignore[arg-type]
                     include_in_schema=False)  # fmt: skip


class _Asgi:
    """A plain ASGI callable as a route's endpoint (Starlette calls a class instance raw)."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)
