"""`sandlot mcp`: sandlot's tools for a coding assistant, as an MCP server over stdio."""

from __future__ import annotations

from typing import Annotated

import typer

from sandlot.cli.common import ConfigOpt, load_config


def mcp_cmd(
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            envvar="SANDBOX_FUSION_URL",
            help="a sandlot server whose /mcp to serve (default: a local jail, as root)",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(envvar="SANDLOT_API_KEY", help="the server's API key", show_default=False),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Serve sandlot's tools over MCP on stdin/stdout: `claude mcp add sandlot -- sandlot mcp`.

    Runs code in a local jail when run as root, else on the server given (docs/mcp.md).
    """
    from sandlot.mcp import main

    raise typer.Exit(main(server, api_key, load_config(config)))
