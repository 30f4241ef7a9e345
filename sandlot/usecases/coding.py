"""The AI-coding route (`/code`, the MCP code tool) and a served repository's tests (the MCP
repo_tests tool): both only on a repository under the server's `coder_roots`, read by git as
its owner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandlot.coder import CodeResult, CodeTask, TestOutcome
    from sandlot.service import Service


async def code(
    service: Service, task: CodeTask, log: Callable[[str], None] = lambda _: None
) -> CodeResult:
    """Aider on a new branch in a worktree, tests in the sandbox, failures fed back; every
    check first (4xx before anything is created). `log` hears of its steps."""
    return await service.coder.run(task, log)


async def served_repo_tests(
    service: Service, repo: str, cmd: str | None, timeout: float | None
) -> TestOutcome:
    """The tests of the repository at `repo` in a fresh box; `cmd` guessed from its files when
    not given."""
    return await service.coder.repo_tests(repo, cmd, timeout)
