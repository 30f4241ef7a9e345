"""Coding tasks on a server (`POST /code`): each runs in a worker thread (Aider is a minutes-long
subprocess), and each of its test runs goes back to the server's event loop, through the same
executor (slots, queue, jail) as `/run_code`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from sandlot.coder.loop import prepare, run_task
from sandlot.coder.task import CodeResult, CodeTask
from sandlot.coder.testrun import TestOutcome, run_tests
from sandlot.config import Config
from sandlot.errors import InvalidRequest
from sandlot.executor import Executor


class CoderJobs:
    def __init__(self, config: Config, executor: Callable[[], Executor]) -> None:
        self.config = config
        self._executor = executor  # resolved per task: the service may have no jail

    async def run(self, task: CodeTask) -> CodeResult:
        """Every check first (InvalidRequest before anything is created), then the loop."""
        self._allowed(task.repo)
        prep = await asyncio.to_thread(prepare, task, self.config.runtime_dir)  # runs git
        executor = self._executor()
        loop = asyncio.get_running_loop()

        def tests(root: Path, cmd: str, timeout: float) -> TestOutcome:
            job = run_tests(executor, root, cmd, timeout)
            return asyncio.run_coroutine_threadsafe(job, loop).result()

        return await asyncio.to_thread(run_task, prep, tests)

    def _allowed(self, repo: str) -> None:
        """`coder_roots` (colon-separated) confines /code to those directories."""
        roots = [r for r in self.config.coder_roots.split(":") if r]
        if not roots:
            return
        real = Path(repo).resolve()
        if not any(real.is_relative_to(Path(r).resolve()) for r in roots):
            raise InvalidRequest(f"{repo} is outside the directories this server may edit")
