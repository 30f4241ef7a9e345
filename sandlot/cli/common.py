"""What every command shares: the consoles, the config option and how a command fails."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from sandlot.config import Config
from sandlot.errors import SandlotError

console = Console()
err = Console(stderr=True)

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file")]
SandboxOpt = Annotated[
    str | None,
    typer.Option(
        "--sandbox-url", envvar="SANDBOX_FUSION_URL",
        help="a sandlot server to run the tests on (default: a sandbox in this process)",
    ),
]  # fmt: skip


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print the error; the caller raises what this returns (exit status 2: bad usage)."""
    err.print(f"[red]error:[/red] {escape(message)}")  # a message's [brackets] are text
    return typer.Exit(code)


def load_config(path: Path | None, **overrides: object) -> Config:
    try:
        return Config.load(path, **overrides)
    except SandlotError as exc:
        raise fail(str(exc)) from None
