"""The official MCP SDK's client, aimed at a sandlot server's `/mcp` or at `sandlot mcp` over
stdio, for the tests (and the benchmark): a connected `ClientSession` and small helpers."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.conftest import ROOT


@contextlib.asynccontextmanager
async def over_http(
    url: str, key: str | None = None, terminate_on_close: bool = True
) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    timeout = httpx2.Timeout(30.0, read=None)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(
            url + "/mcp", http_client=http, terminate_on_close=terminate_on_close
        ) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def over_stdio(*args: str, env: dict[str, str]) -> AsyncIterator[ClientSession]:
    """`sandlot mcp ARGS` started by the SDK's stdio client."""
    params = StdioServerParameters(
        command=sys.executable, args=["-P", "-m", "sandlot", "mcp", *args], env=env, cwd=ROOT
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    return await session.call_tool(tool, arguments)


async def ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool call that must succeed: its structured content."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content
