"""coder — the AI-coding route: `route` (which tool serves a request), Aider run as a subprocess
in a git worktree, and the edit → tests in the sandbox → feedback loop (research/aider.md §4).

Its other names are imported on first use (sandlot/faces.py): wire's models take the defaults
and `route` from here, which must not load the loop. `route` is imported at once (it is cheap):
a lazy name cannot hide the module of the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.coder.route import Decision, route
from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.coder.install import install_aider
    from sandlot.coder.jobs import CoderJobs
    from sandlot.coder.loop import prepare, run_task
    from sandlot.coder.phased import phased_runners, repo_test_outcome
    from sandlot.coder.route import MAX_REQUEST_CHARS
    from sandlot.coder.task import (
        ATTEMPT_TIMEOUT,
        ATTEMPTS,
        LLM_GRACE,
        MAX_ATTEMPT_TIMEOUT,
        MAX_ATTEMPTS,
        MAX_LLM_GRACE,
        TEST_TIMEOUT,
        CodeResult,
        CodeTask,
    )
    from sandlot.coder.testrun import TestOutcome, collect_files, run_files, run_tests

__all__ = [
    "ATTEMPTS",
    "ATTEMPT_TIMEOUT",
    "LLM_GRACE",
    "MAX_ATTEMPTS",
    "MAX_ATTEMPT_TIMEOUT",
    "MAX_LLM_GRACE",
    "MAX_REQUEST_CHARS",
    "TEST_TIMEOUT",
    "CodeResult",
    "CodeTask",
    "CoderJobs",
    "Decision",
    "TestOutcome",
    "collect_files",
    "install_aider",
    "phased_runners",
    "prepare",
    "repo_test_outcome",
    "route",
    "run_files",
    "run_task",
    "run_tests",
]
__getattr__ = lazy(
    __name__,
    {
        "ATTEMPTS": "sandlot.coder.task",
        "ATTEMPT_TIMEOUT": "sandlot.coder.task",
        "CodeResult": "sandlot.coder.task",
        "CodeTask": "sandlot.coder.task",
        "CoderJobs": "sandlot.coder.jobs",
        "LLM_GRACE": "sandlot.coder.task",
        "MAX_ATTEMPTS": "sandlot.coder.task",
        "MAX_ATTEMPT_TIMEOUT": "sandlot.coder.task",
        "MAX_LLM_GRACE": "sandlot.coder.task",
        "MAX_REQUEST_CHARS": "sandlot.coder.route",
        "TEST_TIMEOUT": "sandlot.coder.task",
        "TestOutcome": "sandlot.coder.testrun",
        "collect_files": "sandlot.coder.testrun",
        "install_aider": "sandlot.coder.install",
        "phased_runners": "sandlot.coder.phased",
        "prepare": "sandlot.coder.loop",
        "repo_test_outcome": "sandlot.coder.phased",
        "run_files": "sandlot.coder.testrun",
        "run_task": "sandlot.coder.loop",
        "run_tests": "sandlot.coder.testrun",
    },
)
