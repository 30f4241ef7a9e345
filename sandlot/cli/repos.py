"""Commands of repository tasks: `grade` (a patch, SWE-bench style) and `env list` / `env rm`
(the cached environments of this machine)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from sandlot.cli.common import ConfigOpt, SandboxOpt, console, err, fail, load_config
from sandlot.errors import SandlotError

PatchOpt = Annotated[Path | None, typer.Option(help="a unified diff file ('-': stdin)")]


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    return sys.stdin.read() if str(path) == "-" else path.read_text()


def grade_cmd(
    repo: Annotated[str, typer.Option("--repo", help="the git repository")] = ".",
    base: Annotated[str, typer.Option(help="the base commit")] = "HEAD",
    patch: PatchOpt = None,
    test_patch: Annotated[Path | None, typer.Option(help="applied at grading only")] = None,
    f2p: Annotated[list[str] | None, typer.Option("--f2p", help="a FAIL_TO_PASS test id")] = None,
    p2p: Annotated[list[str] | None, typer.Option("--p2p", help="a PASS_TO_PASS test id")] = None,
    setup: Annotated[str, typer.Option(help="setup command ('auto'; '' for none)")] = "auto",
    test: Annotated[str, typer.Option(help="test command ('auto': by ecosystem)")] = "auto",
    allow_test_changes: Annotated[
        bool, typer.Option("--allow-test-changes", help="grade the patch's test edits as they are")
    ] = False,
    test_path: Annotated[
        list[str] | None, typer.Option("--test-path", help="a glob of test files (repeatable)")
    ] = None,
    timeout: Annotated[float | None, typer.Option(help="seconds for the test run")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    sandbox_url: SandboxOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Grade a patch against a repository's tests at a base commit: tests restored from the
    base, per-test verdicts, resolved or not (exit 0 only if resolved)."""
    fields = {
        "base": base, "patch": _read(patch), "test_patch": _read(test_patch),
        "fail_to_pass": list(f2p or ()), "pass_to_pass": list(p2p or ()), "setup": setup,
        "test": test, "allow_test_changes": allow_test_changes,
        "test_paths": list(test_path or ()), "timeout": timeout,
    }  # fmt: skip
    result = _repo_task("grade", Path(repo), fields, sandbox_url, config)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        for test_id, status in {**result["fail_to_pass"], **result["pass_to_pass"]}.items():
            colour = "green" if status == "passed" else "red"
            console.print(f"[{colour}]{status:8}[/{colour}] {test_id}", highlight=False)
        colour = "green" if result["resolved"] else "red"
        err.print(f"[{colour}]{result['status']}[/{colour}]: {result['message']}", highlight=False)
    raise typer.Exit(0 if result["resolved"] else 1)


def _repo_task(kind: str, root: Path, fields: dict[str, object], sandbox_url: str | None,
               config: Path | None) -> dict[str, Any]:  # fmt: skip
    from sandlot.cli.sandbox import sandbox

    cfg = load_config(config, slots=2)
    try:
        with sandbox(sandbox_url, cfg) as box:
            if box.problem:
                raise fail(f"the sandbox cannot run here: {box.problem}")
            return box.repo(kind, root.resolve(), dict(fields))
    except SandlotError as exc:
        raise fail(str(exc)) from None


def env_list(
    as_json: Annotated[bool, typer.Option("--json", help="print the entries as JSON")] = False,
    config: ConfigOpt = None,
) -> None:
    """The cached environments (and checkouts) of this machine, least recently used first."""
    store = _store(config)
    entries = sorted(store.entries(), key=lambda e: e.last_used)
    if as_json:
        print(json.dumps([e.to_dict() for e in entries], indent=2))
        return
    table = Table("kind", "key", "size", "last used", "repository")
    table.columns[1].no_wrap = True
    for e in entries:
        origin = str(e.info.get("repository", e.info.get("base", "")))
        table.add_row(
            e.kind[:-1], e.key, f"{e.size / (1 << 20):.1f} MiB", _ago(e.last_used), origin
        )
    console.print(table)
    total = sum(e.size for e in entries)
    console.print(f"{total / (1 << 20):.1f} MiB of {store.quota / (1 << 20):.0f} MiB (quota)")


def env_rm(
    keys: Annotated[list[str], typer.Argument(help="keys from `sandlot env list`")],
    config: ConfigOpt = None,
) -> None:
    """Remove cached environments or checkouts (not those a run holds now)."""
    store = _store(config)
    busy = []
    for key in keys:
        try:
            kind = "envs" if store.path("envs", key).exists() else "checkouts"
            if not store.remove(kind, key):
                busy.append(key)
        except SandlotError as exc:
            raise fail(str(exc)) from None
    if busy:
        raise fail(f"in use by a run now, not removed: {', '.join(busy)}", code=1)


def _store(config: Path | None):  # type: ignore[no-untyped-def]
    from sandlot.repos import Store

    cfg = load_config(config)
    store = Store(cfg.repo_dir, cfg.repo_env_quota)
    try:
        store.setup()
    except OSError as exc:
        raise fail(f"cannot open {cfg.repo_dir}: {exc} (run as root)") from None
    return store


def _ago(t: float) -> str:
    import time

    s = max(0, time.time() - t)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s / size:.0f}{unit} ago"
    return f"{s:.0f}s ago"
