"""What every command shares: the consoles, the config option, tables and how a command fails."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sandlot.config import Config
from sandlot.errors import SandlotError

# soft_wrap: a long line (a command, a JSON snippet) stays one line, for a pipe or a copy-paste.
console = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

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


def show_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table for a person at a terminal; tab-separated lines, header first, for a pipe (a
    table would be cut to 80 columns there)."""
    if console.is_terminal:
        table = Table(*headers)
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    for row in (headers, *rows):
        print("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in row))
