"""The command line: thin commands over the Service (and the installer)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sandlot.config import SETTINGS, Config
from sandlot.errors import SandlotError

app = typer.Typer(help="sandlot: run untrusted code in isolated boxes.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file")]


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}")
    return typer.Exit(code)


def _config(path: Path | None, **overrides: object) -> Config:
    try:
        return Config.load(path, **overrides)
    except SandlotError as exc:
        raise _fail(str(exc)) from None


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="bind address (default 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="port (default 8080)")] = None,
    slots: Annotated[int | None, typer.Option(help="concurrent runs (default: CPU count)")] = None,
    config: ConfigOpt = None,
) -> None:
    """Start the HTTP server."""
    import uvicorn

    from sandlot.api import create_app
    from sandlot.service import Service

    cfg = _config(config, host=host, port=port, slots=slots)
    service = Service(cfg).start()
    if service.problem:
        err.print(f"[red]isolation unavailable, no code will run:[/red] {service.problem}")
    try:
        uvicorn.run(create_app(service), host=cfg.host, port=cfg.port, log_level="warning")
    finally:
        service.close()  # also when uvicorn stops without running the app's shutdown


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="source file to run", exists=True, dir_okay=False)],
    language: Annotated[
        str | None, typer.Option("--language", "-l", help="default: from the file suffix")
    ] = None,
    stdin: Annotated[
        str | None, typer.Option(help="text to feed on stdin ('-' reads ours)")
    ] = None,
    timeout: Annotated[float | None, typer.Option(help="run timeout in seconds")] = None,
    memory: Annotated[int | None, typer.Option(help="memory limit in MiB")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the API's JSON response")] = False,
    config: ConfigOpt = None,
) -> None:
    """Run a file through the engine on this machine (no server needed)."""
    from sandlot.api import convert
    from sandlot.executor import CodeRequest
    from sandlot.service import Service

    cfg = _config(config, slots=1)
    service = Service(cfg).start()
    try:
        name = language or _language_of(file, service)
        data = sys.stdin.read() if stdin == "-" else (stdin or "")
        req = CodeRequest(
            language=name, code=file.read_text(), stdin=data.encode(),
            run_timeout=timeout, memory_mb=memory,
        )  # fmt: skip
        try:
            executor = service.require_executor()
            result = asyncio.run(executor.execute(req))
        except SandlotError as exc:
            raise _fail(str(exc)) from None
    finally:
        service.close()
    body = convert.response(result)
    if as_json:
        console.print_json(body.model_dump_json())
    else:
        for step, res in (("compile", body.compile_result), ("run", body.run_result)):
            if res is None:
                continue
            if res.stdout:
                sys.stdout.write(res.stdout)
            if res.stderr:
                sys.stderr.write(res.stderr)
            if step == "compile" and res.return_code == 0:
                continue
            err.print(
                f"[dim]{step}: {res.status.value} exit={res.return_code} "
                f"time={res.execution_time:.3f}s cpu={res.cpu_time:.3f}s "
                f"mem={(res.memory_peak_bytes or 0) / 2**20:.1f}MiB"
                + (f" limit={res.limit}" if res.limit else "")
                + "[/dim]"
            )
        if body.message:
            err.print(f"[red]{body.message}[/red]")
    raise typer.Exit(0 if body.status == "Success" else 1)


def _language_of(file: Path, service) -> str:
    suffix = file.suffix
    for row in service.registry.rows.values():
        if Path(row.source).suffix == suffix:
            return row.name
    raise _fail(f"cannot tell the language of {file.name}; pass --language")


@app.command()
def languages(
    as_json: Annotated[bool, typer.Option("--json")] = False, config: ConfigOpt = None
) -> None:
    """List the languages this server can run, with versions."""
    from sandlot.service import Service

    service = Service(_config(config))
    service.registry.probe()
    rows = service.languages()
    if as_json:
        console.print_json(json.dumps(rows))
        return
    table = Table("language", "aliases", "version", "status")
    for r in rows:
        table.add_row(
            str(r["name"]), ", ".join(r["aliases"]), str(r["version"] or ""),  # type: ignore[arg-type]
            "ok" if r["available"] else f"[yellow]{r['reason']}[/yellow]",
        )  # fmt: skip
    console.print(table)


@app.command()
def setup(
    languages: Annotated[
        str | None, typer.Option(help="comma-separated subset (default: all)")
    ] = None,
    with_aider: Annotated[
        bool, typer.Option("--with-aider", help="also Aider, in its own venv (for `code`)")
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Install what is missing: bubblewrap, toolchains, the sandbox runtimes."""
    from sandlot import install

    cfg = _config(config)
    chosen = [x.strip() for x in languages.split(",")] if languages else None
    try:
        install.install(
            chosen, runtime_dir=cfg.runtime_dir,
            log=lambda line: console.print(line, markup=False, highlight=False),
        )  # fmt: skip
        if with_aider:
            from sandlot.coder.install import install_aider

            console.print(install_aider(cfg.runtime_dir, log=console.print), highlight=False)
    except SandlotError as exc:
        raise _fail(str(exc), 1) from None


@app.command("config")
def show_config(config: ConfigOpt = None) -> None:
    """Show every setting with its value and meaning."""
    cfg = _config(config)
    table = Table("setting", "value", "env", "help")
    for s in SETTINGS:
        table.add_row(s.name, str(getattr(cfg, s.name)), f"SANDLOT_{s.name.upper()}", s.help)
    console.print(table)


import sandlot.cli_coder  # noqa: E402,F401  (registers route, test, code)
from sandlot import cli_eval  # noqa: E402,F401  (registers eval)
