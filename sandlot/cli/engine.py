"""Commands of the engine on this machine: serve, run, languages, setup, config."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sandlot.cli.common import ConfigOpt, console, err, fail, load_config, show_table
from sandlot.config import SETTINGS, VARIABLES
from sandlot.errors import SandlotError

if TYPE_CHECKING:
    from sandlot.config import Config
    from sandlot.executor import Execution
    from sandlot.install import Mirrors
    from sandlot.wire import RunCodeResponse

SERVER_EXTRA = "the server needs sandlot's server extra: pip install 'sandlot[server]'"


def serve(
    host: Annotated[str | None, typer.Option(help="bind address (default 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="port (default 8080)")] = None,
    slots: Annotated[int | None, typer.Option(help="concurrent runs (default: CPU count)")] = None,
    workers: Annotated[
        int | None, typer.Option(help="server processes sharing the slots (default: 1 per 16)")
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option("--insecure", help="listen beyond loopback with no API keys (see the docs)"),
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Start the HTTP server."""
    try:
        from sandlot.api import serve as server_serve
    except ImportError as exc:  # a client-only install
        raise fail(f"{SERVER_EXTRA} ({exc})") from None
    cfg = load_config(
        config, host=host, port=port, slots=slots, workers=workers, insecure=insecure or None
    )
    try:
        server_serve(cfg)
    except (SandlotError, OSError) as exc:  # a setting it refuses, a port in use
        raise fail(str(exc)) from None


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
    from sandlot.convert import run_response
    from sandlot.executor import CodeRequest
    from sandlot.service import Service
    from sandlot.usecases import language_of_file, language_row
    from sandlot.usecases import run as run_code

    cfg = load_config(config, slots=1)
    service = Service(cfg).start()
    try:
        name = language or language_of_file(service, file)
        if name is None:
            raise fail(f"cannot tell the language of {file.name}; pass --language")
        data = sys.stdin.read() if stdin == "-" else (stdin or "")
        req = CodeRequest(
            language=name, code=file.read_text(), stdin=data.encode(),
            run_timeout=timeout, memory_mb=memory,
        )  # fmt: skip
        try:
            result = asyncio.run(run_code(service, req))
        except SandlotError as exc:
            raise fail(str(exc)) from None
    finally:
        service.close()
    body = run_response(result)
    if as_json:
        console.print_json(body.model_dump_json())
    else:
        _print_steps(body)
    row = language_row(service, name)
    built = body.compile_result
    if built is not None and built.return_code != 0 and file.name != row.source:
        # e.g. Java's `public class Hello`, which must be in Hello.java
        err.print(f"note: {file.name} was compiled as {row.source}, the file the {row.name} "
                  "row writes its code to", markup=False, highlight=False)  # fmt: skip
    raise typer.Exit(exit_status(result))


def exit_status(result: Execution) -> int:
    """A shell's status for a run: its exit code, 124 past a time limit, 128+N on signal N (as
    timeout(1) and a shell say them), the compiler's when the build failed, 125 when the
    sandbox could not run it."""
    from sandlot.executor import TIME_LIMITS

    if result.error is not None:
        return 125
    for step in (result.compile, result.run):
        if step is None or step.ok:
            continue
        if step.limit in TIME_LIMITS:
            return 124
        if step.signal is not None:
            return 128 + step.signal
        return step.exit_code or 1
    return 1 if result.unproven else 0


def _print_steps(body: RunCodeResponse) -> None:
    """The program's own output on ours, then one dim line per step that did not just succeed."""
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


def languages(
    as_json: Annotated[bool, typer.Option("--json")] = False, config: ConfigOpt = None
) -> None:
    """List the languages this server can run, with versions."""
    from sandlot.service import Service
    from sandlot.usecases import probed_languages

    rows = probed_languages(Service(load_config(config)))
    if as_json:
        console.print_json(json.dumps(rows))
        return
    show_table(("language", "aliases", "version", "status"), [
        (str(r["name"]), ", ".join(r["aliases"]), str(r["version"] or ""),  # type: ignore[arg-type]
         "ok" if r["available"] else str(r["reason"]))
        for r in rows
    ])  # fmt: skip


def setup(
    languages: Annotated[
        str | None,
        typer.Option(help="comma-separated subset (default: the `languages` setting, or all)"),
    ] = None,
    with_aider: Annotated[
        bool, typer.Option("--with-aider", help="also Aider, in its own venv (for `code`)")
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Install what is missing: bubblewrap, toolchains, the sandbox runtimes, the boxes' init."""
    from sandlot import install
    from sandlot.jail import build_box_init

    cfg = load_config(config)
    languages = languages or cfg.languages
    chosen = [x.strip() for x in languages.split(",") if x.strip()] if languages else None
    try:
        install.install(
            chosen, runtime_dir=cfg.runtime_dir,
            log=lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True),
            mirrors=mirrors_of(cfg),
        )  # fmt: skip
        console.print(f"the boxes' init: {build_box_init()}", highlight=False)
        if with_aider:
            from sandlot.coder import install_aider

            console.print(install_aider(cfg.runtime_dir, log=console.print), highlight=False)
    except SandlotError as exc:
        raise fail(str(exc), 1) from None
    console.print("done: start the server with `make serve` (or `sandlot serve`); "
                  "`sandlot languages` shows what it can run", highlight=False)  # fmt: skip


def mirrors_of(cfg: Config) -> Mirrors:
    from sandlot.install import Mirrors

    return Mirrors(maven=cfg.maven_repository, goproxy=cfg.goproxy, cargo=cfg.cargo_registry)


def packages_lock(
    sets: Annotated[
        str | None, typer.Option(help="comma-separated: go, rust-toolchain, crates, jars")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Rewrite the package sets' locks (sandlot/languages/packages/) from the registries."""
    from sandlot.install import LOCKERS, Setup, select_rows

    cfg = load_config(config)
    chosen = [s.strip() for s in sets.split(",")] if sets else list(LOCKERS)
    unknown = [s for s in chosen if s not in LOCKERS]
    if unknown:
        raise fail(f"unknown set {', '.join(unknown)}; choose from {', '.join(LOCKERS)}", 2)
    setup = Setup(Path(cfg.runtime_dir), select_rows(None, cfg.runtime_dir), console.print,
                  mirrors_of(cfg))  # fmt: skip
    try:
        for name in chosen:
            console.print(f"{name}: {LOCKERS[name](setup)}", highlight=False)
    except SandlotError as exc:
        raise fail(str(exc), 1) from None


def packages_check(config: ConfigOpt = None) -> None:
    """Check that the installed package sets agree with their locks; exit 1 if not."""
    from sandlot.install import check_locks

    problems = check_locks(Path(load_config(config).runtime_dir))
    for line in problems:
        console.print(line, markup=False, highlight=False)
    if problems:
        raise typer.Exit(1)
    console.print("the package sets agree with their locks")


def show_config(
    as_json: Annotated[bool, typer.Option("--json", help="print them as JSON")] = False,
    config: ConfigOpt = None,
) -> None:
    """Show every setting with its value and meaning, then the other variables sandlot reads."""
    cfg = load_config(config)
    settings = [
        {"name": s.name, "value": "(set)" if s.name == "api_keys" and cfg.api_keys
         else getattr(cfg, s.name), "env": s.env, "help": s.help}
        for s in SETTINGS
    ]  # fmt: skip
    if as_json:
        variables = [{"env": name, "help": meaning} for name, meaning in VARIABLES.items()]
        print(json.dumps({"settings": settings, "variables": variables}, indent=2))
        return
    rows = [(s["name"], str(s["value"]), s["env"], s["help"]) for s in settings]
    rows += [("", "", name, meaning) for name, meaning in VARIABLES.items()]
    show_table(("setting", "value", "env", "help"), rows)
