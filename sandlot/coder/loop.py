"""`sandlot code`: edit with Aider in a worktree → run the tests in the sandbox → feed the failure
back → try again, up to N attempts. Every check that can fail on bad input runs first
(`prepare`), so nothing is created, edited or run for a request that cannot succeed.

The result is a plain record (JSON-able): status, branch, base/head, diff, every attempt's
test outcome. Keys and endpoints are redacted from everything in it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandlot.coder import aider, worktree
from sandlot.coder.install import find_aider
from sandlot.coder.task import (
    ANSWERED,
    FAILED_TESTS,
    LLM_ERROR,
    MAX_ATTEMPTS,
    NO_CHANGES,
    PASSED,
    TIMEOUT,
    Attempt,
    CodeResult,
    CodeTask,
)
from sandlot.coder.testrun import TestOutcome
from sandlot.errors import InvalidRequest
from sandlot.repos import Owner

CONF = ".aider.conf.yml"
# Which key a model needs, by litellm-style prefix; other providers are not checked up front.
KEY_FOR = (
    (re.compile(r"^(?:anthropic/|claude)"), "ANTHROPIC_API_KEY"),
    (re.compile(r"^(?:openai/|gpt-|o[1-9]\b|o[1-9]-|chatgpt)"), "OPENAI_API_KEY"),
    (re.compile(r"^gemini/"), "GEMINI_API_KEY"),
    (re.compile(r"^deepseek/"), "DEEPSEEK_API_KEY"),
    (re.compile(r"^openrouter/"), "OPENROUTER_API_KEY"),
)

# Runs a test command over a directory and says how it went (the sandbox, or a stand-in).
TestRunner = Callable[[Path, str, float], TestOutcome]
# Grades the final diff against the base's tests in a fresh box (a phased task's proof).
Prover = Callable[[str], dict[str, Any]]


@dataclass(slots=True)
class Prepared:
    task: CodeTask
    state: worktree.RepoState
    files: list[str]
    read: list[str]
    model: str
    test_cmd: str | None
    options: aider.AiderOptions
    keys: dict[str, str]


def conf_value(path: Path, key: str) -> str | None:
    """A top-level scalar of a YAML config, read by hand (no YAML parser in sandlot's deps)."""
    if not path.is_file():
        return None
    for line in path.read_text(errors="replace").splitlines():
        m = re.match(rf"^{re.escape(key)}\s*:\s*(.*?)\s*(?:#.*)?$", line)
        if m and m.group(1):
            return m.group(1).strip("'\"")
    return None


def prepare(task: CodeTask, runtime_dir: str = "/opt/sandlot", owner: Owner | None = None
            ) -> Prepared:  # fmt: skip
    """Every check on the request; InvalidRequest (or AiderMissing) says what to change. git
    and Aider run as `owner` when given (a server's task), else as this process's user."""
    if not task.message.strip():
        raise InvalidRequest("the message is empty: say what the coder should do")
    if not 1 <= task.max_attempts <= MAX_ATTEMPTS:
        raise InvalidRequest(f"max attempts must be between 1 and {MAX_ATTEMPTS}")
    state = worktree.inspect(task.repo, owner)
    if state.dirty and (task.apply or not task.allow_dirty):
        raise InvalidRequest(
            f"{state.root} has uncommitted changes ({', '.join(state.dirty[:5])}): the coder "
            "works from the last commit, so they would not be seen"
            + (" and --apply could not fast-forward" if task.apply else "")
            + "; commit or stash them"
            + ("" if task.apply else ", or pass --allow-dirty to work from HEAD anyway")
        )
    if task.apply and state.branch is None:
        raise InvalidRequest("HEAD is detached: --apply needs a branch to fast-forward")
    files = worktree.resolve_files(state, task.files, "files")
    read = worktree.resolve_files(state, task.read, "--read files")
    home = Path(owner.home if owner is not None else os.path.expanduser("~"))
    conf_paths = [state.root / CONF, home / CONF]
    model = task.model or os.environ.get("SANDLOT_CODER_MODEL") or os.environ.get("AIDER_MODEL")
    if not model and task.aider_config:
        model = next((v for p in conf_paths if (v := conf_value(p, "model"))), None)
    if not model:
        raise InvalidRequest(
            "no model: pass --model (e.g. openai/gpt-4o or anthropic/claude-sonnet-4-5) or set "
            "SANDLOT_CODER_MODEL"
        )
    keys = aider.model_env()
    needed = next((name for rx, name in KEY_FOR if rx.search(model)), None)
    key_in_conf = task.aider_config and any(
        conf_value(p, k) for p in conf_paths for k in ("api-key", "openai-api-key",
                                                       "anthropic-api-key")
    )  # fmt: skip
    if needed and needed not in keys and not key_in_conf:
        raise InvalidRequest(
            f"model {model} needs {needed} in the environment; it is not set (keys are read "
            "from the environment only, never from the command line)"
        )
    test_cmd = task.test_cmd
    if not test_cmd and task.aider_config:
        test_cmd = next((v for p in conf_paths[:1] if (v := conf_value(p, "test-cmd"))), None)
    if not test_cmd and not task.ask:
        test_cmd = guess_test_cmd(state.root)
    if not test_cmd and not task.ask:
        raise InvalidRequest("no test command: pass --test-cmd (e.g. 'pytest -q')")
    options = aider.AiderOptions(
        executable=find_aider(runtime_dir), model=model, edit_format=task.edit_format,
        ask=task.ask, stream=task.stream, honour_config=task.aider_config,
        timeout=task.attempt_timeout, llm_grace=task.llm_grace, owner=owner, cancel=task.cancel,
    )  # fmt: skip
    return Prepared(task, state, files, read, model, test_cmd, options, keys)


def guess_test_cmd(root: Path) -> str | None:
    """pytest's command if the repository looks like it has pytest tests, else None."""
    if any((root / n).exists() for n in ("pytest.ini", "conftest.py", "tests", "test")):
        return "python -m pytest -q"
    if any(root.glob("test_*.py")) or any(root.glob("*_test.py")):
        return "python -m pytest -q"
    return None


def feedback(message: str, cmd: str, outcome: TestOutcome) -> str:
    return (
        f"{message}\n\n"
        f"Your previous change is in place, but the tests still fail. The test command "
        f"`{cmd}` ended with exit status {outcome.status} in the sandbox. The end of its "
        f"output:\n\n```\n{outcome.tail(6000)}\n```\n\n"
        "Fix the code so that these tests pass. Do not weaken or delete the tests unless the "
        "request above asked you to change them."
    )


def run_task(prep: Prepared, tests: TestRunner, log: Callable[[str], None] = lambda _: None,
             prove: Prover | None = None) -> CodeResult:  # fmt: skip
    """The loop. What the model or the tests do is the result's status, never an exception;
    only a sandbox that cannot run at all raises (SandlotError), after cleaning up. With a
    `prove` (a phased task), Aider works on the base's history alone and a pass is proved."""
    task = prep.task
    result = CodeResult(status=NO_CHANGES, message="", model=prep.model, test_cmd=prep.test_cmd)
    run = _Run(prep, tests, log, result, aider.Redactor(prep.keys),
               Path(tempfile.mkdtemp(prefix="sandlot-coder-")), prove=prove)  # fmt: skip
    try:
        make = worktree.Worktree.create_sealed if prove else worktree.Worktree.create
        run.tree = make(prep.state, run.scratch, task.message)
        result.branch, result.base = run.tree.branch, run.tree.base
        if not task.aider_config:
            run.tree.hide(CONF)  # the repo's aider config is honoured only when asked for
        log(f"worktree {run.tree.path} on branch {run.tree.branch} from {run.tree.base[:10]}")
        message: str | None = task.message
        for number in range(1, task.max_attempts + 1):
            if message is None:
                break
            message = _attempt(run, number, message)
        _conclude(run)
    except CancelledError:
        tree = run.tree
        if tree is not None and not task.keep_worktree and tree.head() == tree.base:
            tree.remove()  # a cancelled task with no commit leaves no branch either
            tree.drop_branch()
            run.tree = None
        raise
    finally:
        result.log_tail = run.redact(_tail("".join(run.outputs), 6000))
        if run.tree is not None:
            if task.keep_worktree:
                result.worktree = str(run.tree.path)
            else:
                run.tree.remove()
        if not task.keep_worktree:
            shutil.rmtree(run.scratch, ignore_errors=True)
    return result


@dataclass(slots=True)
class _Run:
    """One task's moving parts while its loop runs."""

    prep: Prepared
    tests: TestRunner
    log: Callable[[str], None]
    result: CodeResult
    redact: aider.Redactor
    scratch: Path
    tree: worktree.Worktree | None = None
    outputs: list[str] = field(default_factory=list)
    last: TestOutcome | None = None  # the latest test run
    prove: Prover | None = None


def _attempt(run: _Run, number: int, message: str) -> str | None:
    """One edit (and test) round; the message for the next round, or None to stop."""
    prep, task, result, redact, tree = run.prep, run.prep.task, run.result, run.redact, run.tree
    assert tree is not None
    work = run.scratch / f"attempt-{number}"
    work.mkdir()
    run.log(f"attempt {number}: aider ({prep.model})")
    edit = aider.run(prep.options, tree.path, work, message, prep.files, prep.read, prep.keys)
    run.outputs.append(edit.output)
    if task.cancel is not None and task.cancel.is_set():
        raise CancelledError  # nothing more runs; the worktree goes (run_task's finally)
    commit = None if task.ask else tree.commit_all(
        f"sandlot code: {task.message.strip().splitlines()[0][:60]} (attempt {number})"
    )  # fmt: skip
    attempt = Attempt(
        number, round(edit.seconds, 2), edit.applied, commit,
        llm_error=redact(edit.llm_error) if edit.llm_error else None,
        stopped_for_llm=edit.stopped_for_llm, log_tail=redact(_tail(edit.output, 2000)),
    )  # fmt: skip
    result.attempts.append(attempt)
    if edit.timed_out:
        result.status = TIMEOUT
        result.message = f"aider did not finish within {task.attempt_timeout:g}s"
        return None
    if edit.llm_error and (edit.stopped_for_llm or commit is None):
        result.status = LLM_ERROR
        result.message = (
            f"the model could not be used ({redact(edit.llm_error)}); check the model "
            "name, the API key and the endpoint (OPENAI_API_BASE / OPENAI_BASE_URL)"
        )
        return None
    if task.ask:
        result.status, result.answer = ANSWERED, redact(aider.answer_text(edit.output))
        result.message = "answered; nothing was edited"
        return None
    if commit is None and run.last is None:
        result.status = NO_CHANGES
        result.message = "aider made no change to the repository"
        return None
    run.log(f"attempt {number}: tests in the sandbox: {prep.test_cmd}")
    assert prep.test_cmd is not None and task.test_timeout is not None
    run.last = last = run.tests(tree.path, prep.test_cmd, task.test_timeout)
    attempt.tests = last.to_dict()
    attempt.tests["output_tail"] = redact(str(attempt.tests["output_tail"]))
    run.log(f"attempt {number}: {last.summary()}")
    if last.passed:
        result.status = PASSED
        result.message = f"tests pass after {number} attempt(s)"
        return None
    result.status = FAILED_TESTS
    result.message = f"tests still fail after {number} attempt(s): {last.summary()}"
    return feedback(task.message, prep.test_cmd, last)


def _conclude(run: _Run) -> None:
    """Record the branch's end state; drop a branch without commits; apply when asked and passed."""
    prep, task, result, tree = run.prep, run.prep.task, run.result, run.tree
    assert tree is not None
    result.head = tree.head()
    diff = tree.git("diff", "--binary", "--no-color", f"{tree.base}..HEAD")
    result.diff = run.redact(tree.diff())
    result.files_changed = tree.changed_files()
    if run.prove is not None and result.status == PASSED:
        _prove(run, diff)
    if result.head != tree.base:
        tree.deliver()  # a sealed clone's branch into the repository
    if result.head == tree.base and not task.keep_worktree:
        # A branch without a commit is noise in the user's repository: drop it.
        tree.remove()
        tree.drop_branch()
        result.branch, run.tree = None, None
    if task.apply and result.status == PASSED and result.head:
        try:
            worktree.apply(prep.state, result.head)
        except InvalidRequest as exc:
            result.message += f"; not applied: {exc}"
        else:
            result.applied = True
            result.message += f"; {prep.state.branch} fast-forwarded to {result.head[:10]}"


def _prove(run: _Run, diff: str) -> None:
    """Grade the branch in a fresh box against the base's tests (Aider's test edits put back
    unless the task allows them): a pass that holds only with changed tests is no pass."""
    assert run.prove is not None
    run.log("proof: the branch graded against the base's tests in a fresh box")
    proof = run.prove(diff)
    run.result.proof = proof
    tamper = proof.get("tamper") or {}
    touched = list(tamper.get("test_files_touched") or []) if isinstance(tamper, dict) else []
    if proof.get("resolved"):
        if touched:
            how = "counted as Aider left them" if tamper.get("counted") else "put back first"
            run.result.message += f"; proved (Aider changed test files {touched}: {how})"
        else:
            run.result.message += "; proved against the base's tests"
        return
    run.result.status = FAILED_TESTS
    run.result.message = (
        f"the tests passed in the loop but not in the proof: {proof.get('message')}"
    )


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[...]\n" + text[-limit:]
