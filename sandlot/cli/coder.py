"""Commands of the AI-coding route: `route`, `test` and `code`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from sandlot.cli.common import ConfigOpt, SandboxOpt, console, err, fail, load_config
from sandlot.coder import ATTEMPT_TIMEOUT, ATTEMPTS, LLM_GRACE, TEST_TIMEOUT, CodeResult, CodeTask
from sandlot.errors import SandlotError

EXIT = {"passed": 0, "answered": 0, "failed_tests": 1, "llm_error": 3, "no_changes": 4,
        "timeout": 124}  # fmt: skip
RepoOpt = Annotated[str, typer.Option("--repo", help="the repository (default: here)")]
SetupOpt = Annotated[
    str | None,
    typer.Option(help="set the repository's environment up first ('auto', or its own command; "
                 "cached), and work in phases"),
]  # fmt: skip


def route_cmd(
    request: Annotated[str, typer.Argument(help="what you want done, in words")],
    files: Annotated[list[str] | None, typer.Argument(help="files it is about")] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="a repository it is about")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the decision as JSON")] = False,
) -> None:
    """Say which tool serves a request (sandbox: run/judge, coder: code/ask), why, and next."""
    from sandlot.coder import route

    try:
        decision = route(request, repo=repo, files=tuple(files or ()))
    except SandlotError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print(json.dumps(decision.to_dict()))
        return
    console.print(f"[bold]{decision.route}[/bold] (mode: {decision.mode})", highlight=False)
    console.print("because:", highlight=False)
    for reason in decision.reasons:
        console.print(f"  - {reason}", markup=False, highlight=False)
    console.print("next:", highlight=False)
    for i, step in enumerate(decision.next_steps, 1):
        console.print(f"  {i}. {step}", markup=False, highlight=False)


def test_cmd(
    cmd: Annotated[str, typer.Option("--cmd", help="the test command, run by bash in the box")],
    repo: RepoOpt = ".",
    timeout: Annotated[
        float, typer.Option(help="wall-clock seconds for the command")
    ] = TEST_TIMEOUT,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as JSON")] = False,
    setup: SetupOpt = None,
    sandbox_url: SandboxOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run a repository's tests in the sandbox (no network, limits) and exit with their status.

    Usable as Aider's --test-cmd and from CI: `sandlot test --cmd 'pytest -q'`. With --setup,
    on the repository's environment (set up once, cached) and its working tree's changes.
    """
    cfg = load_config(config, slots=2 if setup else 1)
    try:
        from sandlot.cli.sandbox import sandbox  # the client or a Service: only when used

        with sandbox(sandbox_url, cfg) as box:
            if setup:
                outcome = _phased_test(box, Path(repo), cmd, setup, timeout)
            else:
                outcome = box.run(Path(repo), cmd, timeout)
    except SandlotError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print(json.dumps(outcome.to_dict()))
    else:
        sys.stdout.write(outcome.stdout)
        sys.stderr.write(outcome.stderr)
        err.print(f"[dim]sandlot test: {outcome.summary()}[/dim]", highlight=False)
    raise typer.Exit(outcome.status)


def _phased_test(box, repo: Path, cmd: str, setup: str, timeout: float):  # type: ignore[no-untyped-def]
    """The test command over HEAD with the working tree's changes, on the cached environment."""
    from sandlot.coder import repo_test_outcome
    from sandlot.repos import run_git, working_patch

    root = Path(run_git(repo, "rev-parse", "--show-toplevel", user_config=False).strip())
    fields = {"base": "HEAD", "setup": setup, "test": cmd, "patch": working_patch(root),
              "timeout": timeout}  # fmt: skip
    answer = box.repo("test", root, fields)
    setup_result = answer.get("setup") or {}
    if not setup_result.get("cached") and setup_result.get("command"):
        err.print(f"[dim]sandlot test: environment {setup_result.get('key')} set up in "
                  f"{setup_result.get('seconds')}s[/dim]", highlight=False)  # fmt: skip
    return repo_test_outcome(answer)


def code_cmd(
    message: Annotated[str, typer.Option("--message", "-m", help="what the coder should do")],
    files: Annotated[list[str] | None, typer.Argument(help="files Aider may edit")] = None,
    read: Annotated[list[str] | None, typer.Option("--read", help="read-only context")] = None,
    repo: RepoOpt = ".",
    model: Annotated[str | None, typer.Option(help="litellm name, e.g. openai/gpt-4o")] = None,
    test_cmd: Annotated[str | None, typer.Option("--test-cmd", help="e.g. 'pytest -q'")] = None,
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", help="edit+test rounds")
    ] = ATTEMPTS,
    edit_format: Annotated[
        str | None, typer.Option("--edit-format", help="whole, diff, ... (default: the model's)")
    ] = None,
    ask: Annotated[bool, typer.Option("--ask", help="answer a question, edit nothing")] = False,
    apply: Annotated[
        bool, typer.Option("--apply", help="fast-forward your branch once the tests pass")
    ] = False,
    allow_dirty: Annotated[
        bool, typer.Option("--allow-dirty", help="work from HEAD despite uncommitted changes")
    ] = False,
    aider_config: Annotated[
        bool, typer.Option("--aider-config", help="honour .aider.conf.yml (repo and home)")
    ] = False,
    timeout: Annotated[float, typer.Option(help="seconds per Aider attempt")] = ATTEMPT_TIMEOUT,
    test_timeout: Annotated[float, typer.Option(help="seconds per test run")] = TEST_TIMEOUT,
    llm_grace: Annotated[
        float, typer.Option(help="seconds Aider may retry after a model error before we stop it")
    ] = LLM_GRACE,
    stream: Annotated[bool, typer.Option(help="have Aider stream the model's replies")] = False,
    keep_worktree: Annotated[
        bool, typer.Option("--keep-worktree", help="leave the worktree for inspection")
    ] = False,
    setup: SetupOpt = None,
    allow_test_changes: Annotated[
        bool,
        typer.Option(
            "--allow-test-changes",
            help="with --setup: the proof grades Aider's test edits as they are",
        ),
    ] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write JSON here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    sandbox_url: SandboxOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Edit with Aider on a new branch in a worktree, prove it with the tests in the sandbox,
    feed failures back; exit 0 only when the tests pass."""
    task = CodeTask(
        repo=repo, message=message, files=list(files or ()), read=list(read or ()),
        model=model, edit_format=edit_format, test_cmd=test_cmd, max_attempts=max_attempts,
        ask=ask, apply=apply, allow_dirty=allow_dirty, aider_config=aider_config,
        attempt_timeout=timeout, test_timeout=test_timeout, keep_worktree=keep_worktree,
        llm_grace=llm_grace, stream=stream, setup=setup, allow_test_changes=allow_test_changes,
    )  # fmt: skip
    result = _run(task, sandbox_url, config)
    _report(result, output, as_json)
    raise typer.Exit(EXIT.get(result.status, 1))


def _run(task: CodeTask, sandbox_url: str | None, config: Path | None) -> CodeResult:
    """The task's attempts against a sandbox (a server, or one in this process), logged to
    stderr; a failure to start is the command's error."""
    from sandlot.coder import prepare, run_task

    cfg = load_config(config, slots=1)
    try:
        prep = prepare(task, cfg.runtime_dir)
        from sandlot.cli.sandbox import sandbox  # the client or a Service: only when used

        box = sandbox(sandbox_url, cfg)
    except SandlotError as exc:
        raise fail(str(exc)) from None
    try:
        if box.problem and not task.ask:
            raise fail(
                f"the sandbox cannot run the tests here: {box.problem}; run as root after "
                "`sandlot setup`, or point --sandbox-url (SANDBOX_FUSION_URL) at a sandlot server"
            )
        log = lambda line: err.print(f"[dim]{line}[/dim]", highlight=False)  # noqa: E731
        if task.setup:
            from sandlot.coder import phased_runners

            root = prep.state.root
            tests, prove = phased_runners(lambda kind, fields: box.repo(kind, root, fields), prep)
            return run_task(prep, tests, log=log, prove=prove)
        return run_task(prep, box.run, log=log)
    except SandlotError as exc:
        raise fail(str(exc)) from None
    finally:
        box.close()


def _report(result: CodeResult, output: Path | None, as_json: bool) -> None:
    """The result as JSON (to a file, to stdout), or the diff or answer with a summary."""
    body = json.dumps(result.to_dict(), indent=2)
    if output is not None:
        output.write_text(body + "\n")
    if as_json:
        print(body)
        return
    if result.answer:
        print(result.answer)
    elif result.diff:
        print(result.diff, end="" if result.diff.endswith("\n") else "\n")
    for a in result.attempts:
        tests = a.tests or {}
        verdict = "passed" if tests.get("passed") else ("failed" if tests else "not run")
        err.print(f"attempt {a.number}: edited {', '.join(a.edited) or 'nothing'}; "
                  f"tests {verdict}", highlight=False, markup=False)  # fmt: skip
    colour = "green" if result.ok else "red"
    err.print(f"[{colour}]{result.status}[/{colour}]: {result.message}", highlight=False)
    if result.branch:
        err.print(
            f"branch {result.branch} ({(result.base or '')[:10]}..{(result.head or '')[:10]})",
            highlight=False,
            markup=False,
        )
