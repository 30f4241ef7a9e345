"""`sandlot mcp --server URL`: stdio passed through to a server's `/mcp`, message by message.

The bridge holds no MCP logic: each line the client writes (one JSON-RPC message) goes out as a
POST of streamable HTTP, each in its own task (a long tool call never holds up a cancellation),
and what comes back (a JSON body, or the events of an SSE stream: progress, then the result) is
written to stdout a line per message. The connection's id and protocol version, from the answer
to `initialize`, go with every later POST; a DELETE ends the connection when stdin ends.

It imports httpx only, not the SDK (whose import alone is most of a second of CPU), so it is
ready to answer at once. An HTTP refusal (no key: 401) comes back as a JSON-RPC error that
carries the server's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any

import httpx

ACCEPT = "application/json, text/event-stream"
REFUSED = -32001  # a JSON-RPC error code of the implementation range: the server refused


def endpoint(url: str) -> str:
    """The server's `/mcp` URL from its base URL (or from the `/mcp` URL itself)."""
    url = url.rstrip("/")
    return url if url.endswith("/mcp") else url + "/mcp"


class Bridge:
    def __init__(self, url: str, api_key: str | None) -> None:
        self.url = endpoint(url)
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.http = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30.0, read=None))
        self.connection: dict[str, str] = {}  # mcp-session-id, mcp-protocol-version
        self.out = asyncio.Lock()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 30)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        calls: set[asyncio.Task[None]] = set()
        try:
            while line := await reader.readline():
                if not line.strip():
                    continue
                if b'"initialize"' in line and not self.connection:
                    await self.send(line)  # its answer names the connection: first, alone
                    continue
                task = asyncio.create_task(self.send(line))
                calls.add(task)
                task.add_done_callback(calls.discard)
        finally:
            for task in calls:
                task.cancel()
            if self.connection:
                with contextlib.suppress(httpx.HTTPError):
                    await self.http.delete(self.url, headers=self.connection)
            await self.http.aclose()

    async def send(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = {}
        request_id = message.get("id") if isinstance(message, dict) else None
        try:
            async with self.http.stream(
                "POST", self.url, content=line, headers=self.connection
            ) as response:
                if response.status_code >= 400:
                    await self.refused(request_id, response)
                elif response.headers.get("content-type", "").startswith("text/event-stream"):
                    await self.events(response)
                elif body := (await response.aread()).strip():
                    await self.write(body)
                if isinstance(message, dict) and message.get("method") == "initialize" \
                        and response.status_code < 400:  # fmt: skip
                    self.opened(response)
        except httpx.HTTPError as exc:
            await self.error(request_id, f"the sandlot server at {self.url} failed: {exc}")

    def opened(self, response: httpx.Response) -> None:
        session = response.headers.get("mcp-session-id")
        if session:
            self.connection["mcp-session-id"] = session
        if self.version:
            self.connection["mcp-protocol-version"] = self.version

    version: str | None = None

    async def events(self, response: httpx.Response) -> None:
        data: list[str] = []
        async for raw in response.aiter_lines():
            if raw.startswith("data:"):
                data.append(raw[5:].lstrip())
            elif not raw and data:
                await self.write("\n".join(data).encode())
                data = []
        if data:
            await self.write("\n".join(data).encode())

    async def refused(self, request_id: Any, response: httpx.Response) -> None:
        body = (await response.aread()).decode(errors="replace")
        try:
            parsed = json.loads(body)
            detail = parsed.get("detail") or parsed.get("error", {}).get("message") or body
        except (ValueError, AttributeError):
            detail = body
        await self.error(request_id, f"HTTP {response.status_code}: {str(detail)[:2000]}")

    async def error(self, request_id: Any, text: str) -> None:
        if request_id is not None:  # a notification has nobody to tell
            reply = {"jsonrpc": "2.0", "id": request_id,
                     "error": {"code": REFUSED, "message": text}}  # fmt: skip
            await self.write(json.dumps(reply).encode())
        print(f"sandlot mcp: {text}", file=sys.stderr)

    async def write(self, body: bytes) -> None:
        if self.version is None:
            with contextlib.suppress(ValueError, LookupError, TypeError):
                self.version = json.loads(body)["result"]["protocolVersion"]
        async with self.out:
            sys.stdout.buffer.write(body.replace(b"\n", b"") + b"\n")
            sys.stdout.buffer.flush()


def main(url: str, api_key: str | None) -> None:
    asyncio.run(Bridge(url, api_key).run())
