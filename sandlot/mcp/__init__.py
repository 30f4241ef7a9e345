"""mcp — sandlot as a Model Context Protocol server: its tools for agents, over stdio
(`sandlot mcp`) and streamable HTTP (`/mcp` in the server).

A face like the HTTP API and the CLI: tools build requests, call the service's layers and shape
results; no decision is made here. Imports the SDK (`mcp`), the service, the use cases and the
wire's conversions (sandlot.convert), never the API; only the API imports it (to serve `/mcp`).

Its names are imported on first use (sandlot/faces.py): the MCP SDK is imported only by the
face that serves it (stdio or `/mcp`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.mcp.http import install
    from sandlot.mcp.stdio import main

__all__: list[str] = ["install", "main"]
__getattr__ = lazy(__name__, {"install": "sandlot.mcp.http", "main": "sandlot.mcp.stdio"})
