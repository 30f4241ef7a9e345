"""Coding tasks on a server (`POST /code`), under the server's policy:

- only in repositories under `coder_roots`; with none configured, /code is off (fails closed);
- git and Aider run as the repository's owner, never as root (`owner.py`);
- at most `coder_jobs` tasks at once; past that the answer is Overloaded (504, retry later).

Each task runs in a worker thread (Aider is a minutes-long subprocess), and each of its test
runs goes back to the server's event loop, through the same executor (slots, queue, jail) as
`/run_code`. A task whose caller is cancelled stops: Aider is killed, no further test starts,
the worktree is removed, and only then does the cancellation go on up.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandlot.coder.loop import TestRunner, guess_test_cmd, prepare, run_task
from sandlot.coder.task import TEST_TIMEOUT, CodeResult, CodeTask
from sandlot.coder.testrun import TestOutcome, run_tests
from sandlot.config import Config
from sandlot.errors import InvalidRequest, Overloaded
from sandlot.executor import Executor
from sandlot.repos import Owner, confined

if TYPE_CHECKING:
    from sandlot.repos import Repos


class CoderJobs:
    def __init__(self, config: Config, executor: Callable[[], Executor],
                 repos: Callable[[], Repos] | None = None) -> None:  # fmt: skip
        self.config = config
        self._executor = executor  # resolved per task: the service may have no jail
        self._repos = repos  # a phased task's (`setup`) environments and grading
        self.running = 0

    async def run(self, task: CodeTask, log: Callable[[str], None] = lambda _: None) -> CodeResult:
        """Every check first (4xx before anything is created), then the loop; `log` hears of
        its steps (from the task's thread)."""
        repo = self._confined(task.repo)
        owner = Owner.of(repo)
        task.repo = str(repo)  # what was checked is what runs, not a link that may change
        cap = self.config.max_run_timeout
        if task.test_timeout is None:
            task.test_timeout = min(TEST_TIMEOUT, cap)
        elif task.test_timeout > cap:
            raise InvalidRequest(f"test_timeout={task.test_timeout:g} is above this server's "
                                 f"maximum of {cap:g}")  # fmt: skip
        if self.running >= self.config.coder_jobs:
            raise Overloaded(
                f"{self.running} /code jobs are running, the most this server runs at once "
                "(coder_jobs); retry later"
            )
        self.running += 1
        try:
            return await self._run(task, owner, log)
        finally:
            self.running -= 1

    async def repo_tests(
        self, repo: str, cmd: str | None = None, timeout: float | None = None
    ) -> TestOutcome:
        """A repository's tests in a fresh box: only a repository under `coder_roots` (its file
        list from git run as its owner); `cmd` guessed from its files when not given."""
        root = self._confined(repo)
        cmd = cmd or guess_test_cmd(root)
        if not cmd:
            raise InvalidRequest(f"no test command found for {repo}: pass one (e.g. 'pytest -q')")
        return await run_tests(self._executor(), root, cmd, timeout, Owner.of(root))

    async def _run(
        self, task: CodeTask, owner: Owner | None, log: Callable[[str], None]
    ) -> CodeResult:
        runtime = self.config.runtime_dir
        cancel = task.cancel = task.cancel or threading.Event()
        prep = await asyncio.to_thread(prepare, task, runtime, owner)  # runs git
        executor = self._executor()
        loop = asyncio.get_running_loop()

        def boxed(root: Path, cmd: str, timeout: float) -> TestOutcome:
            if cancel.is_set():
                raise CancelledError
            job = run_tests(executor, root, cmd, timeout, owner)
            return asyncio.run_coroutine_threadsafe(job, loop).result()

        tests: TestRunner = boxed
        prove = None
        if task.setup and self._repos is not None:
            from sandlot.coder.phased import phased_runners
            from sandlot.repos import Repository, by_kind

            repos, repo = self._repos(), Repository(path=str(prep.state.root), owner=owner)

            def call(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
                if cancel.is_set():
                    raise CancelledError
                job = by_kind(repos, kind, repo, {**fields, "owner": task.tenant})
                return asyncio.run_coroutine_threadsafe(job, loop).result()

            tests, prove = phased_runners(call, prep)
        work = asyncio.ensure_future(asyncio.to_thread(run_task, prep, tests, log, prove))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()  # the thread kills Aider, starts no test, removes its worktree
            while not work.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait([work])
            with contextlib.suppress(BaseException):
                work.result()
            raise

    def _confined(self, repo: str) -> Path:
        return confined(self.config, repo, "POST /code")
