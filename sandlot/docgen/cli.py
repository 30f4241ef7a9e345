"""The CLI reference: every command's help, as typer's own docs generator writes it."""

from __future__ import annotations

import typer
import typer.main
from typer.cli import get_docs_for_click

from sandlot.cli import app


def render() -> str:
    command = typer.main.get_command(app)
    text = get_docs_for_click(
        obj=command, ctx=typer.Context(command, info_name="sandlot"), name="sandlot"
    )
    # The page has its own title: the generator's first heading (the app's) goes.
    return text.split("\n", 1)[1].strip("\n")
