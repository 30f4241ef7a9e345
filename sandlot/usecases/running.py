"""Running code: once (`/run_code`, `sandlot run`, the MCP run tool), against test cases, a batch
of programs scored for RL (`/run_batch`), and a repository's test command over its files
(`/repo_tests`). Each runs on this machine's executor, which refuses when there is no jail.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandlot.coder import TestOutcome
    from sandlot.executor import CodeRequest, Execution, TestCase, TestRun
    from sandlot.judge import ItemResult, RewardItem
    from sandlot.service import Service


async def run(service: Service, req: CodeRequest) -> Execution:
    """Compile if the language needs it, then run once."""
    return await service.require_executor().execute(req)


async def run_tests(service: Service, req: CodeRequest, cases: list[TestCase]) -> TestRun:
    """Build once, then every case in its own box."""
    return await service.require_executor().run_tests(req, cases)


async def run_batch(
    service: Service, items: list[RewardItem], stop_on_first_failure: bool = False
) -> list[ItemResult]:
    """Score every item against its tests (a reward each), in item order."""
    from sandlot.judge import score_batch

    return await score_batch(service.require_executor(), items, stop_on_first_failure)


async def repo_tests(
    service: Service, files: dict[str, bytes] | Path, cmd: str, timeout: float | None
) -> TestOutcome:
    """A repository's test command over its files (relative path -> content; or, given the
    repository's root, the files git lists there), in a fresh box."""
    from sandlot.coder import run_files, run_tests

    executor = service.require_executor()
    if isinstance(files, Path):
        return await run_tests(executor, files, cmd, timeout)
    return await run_files(executor, files, cmd, timeout)
