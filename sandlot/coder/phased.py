"""A coding task in phases (`--setup`): its test runs and its proof go through repository tasks
(sandlot/repos), on the environment its setup made once.

Each test run applies the branch's diff to the base in a fresh box on the cached environment,
with no network; the proof grades the final diff against the base's tests (Aider's test edits
put back unless the task allows them). `call(kind, fields)` runs a repository task ("test",
"grade") and answers as POST /repo/KIND does: a server's, or a Service in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandlot.coder.loop import Prepared, Prover, TestRunner
from sandlot.coder.testrun import TestOutcome
from sandlot.repos import run_git

RepoCall = Callable[[str, dict[str, Any]], dict[str, Any]]


def phased_runners(call: RepoCall, prep: Prepared) -> tuple[TestRunner, Prover]:
    task, base = prep.task, prep.state.head

    def tests(root: Path, cmd: str, timeout: float) -> TestOutcome:
        patch = run_git(root, "diff", "--binary", "--no-color", f"{base}..HEAD",
                        owner=prep.state.owner, user_config=False)  # fmt: skip
        fields = {"base": base, "setup": task.setup, "test": cmd, "patch": patch,
                  "timeout": timeout}  # fmt: skip
        return repo_test_outcome(call("test", fields))

    def prove(diff: str) -> dict[str, Any]:
        fields = {"base": base, "setup": task.setup, "test": prep.test_cmd, "patch": diff,
                  "allow_test_changes": task.allow_test_changes}  # fmt: skip
        return call("grade", fields)

    return tests, prove


def repo_test_outcome(answer: dict[str, Any]) -> TestOutcome:
    """POST /repo/test's answer as the loop's TestOutcome."""
    run = answer.get("run")
    if not isinstance(run, dict):
        setup = answer.get("setup") or {}
        why = answer.get("error") or (setup.get("error") if isinstance(setup, dict) else None)
        return TestOutcome(False, None, None, None, 0.0, "", "", error=str(why or "no run"))
    return TestOutcome(
        passed=bool(answer.get("passed")), exit_code=run.get("exit_code"),
        signal=run.get("signal"), limit=run.get("limit"),
        wall_time=float(run.get("wall_time") or 0.0), stdout=str(run.get("stdout_tail") or ""),
        stderr=str(run.get("stderr_tail") or ""),
    )  # fmt: skip
