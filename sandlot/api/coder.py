"""HTTP routes of the AI-coding route: POST /route and POST /code (for agents).

Thin: validate, call sandlot.coder, shape the answer. /code runs for minutes; the Aider
subprocess runs in a worker thread and each test run goes back to the server's event loop,
through the same executor (slots, queue, jail) as /run_code.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
from pathlib import Path

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from sandlot.coder import route as route_request
from sandlot.coder import testrun
from sandlot.coder.loop import CodeTask, prepare, run_task
from sandlot.errors import InvalidRequest, TooLarge
from sandlot.jail.workdir import safe_relpath
from sandlot.service import Service


class RouteRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    request: str = Field(description="what the user wants done, in words")
    repo: str | None = Field(None, description="a repository the request is about")
    files: list[str] = Field(default_factory=list, description="files it is about")


class RouteResponse(BaseModel):
    route: str
    mode: str
    reasons: list[str]
    next_steps: list[str]


class CodeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    repo: str = Field(description="path of a git repository on the server")
    message: str = Field(description="what the coder should do")
    files: list[str] = Field(default_factory=list, description="files Aider may edit")
    read: list[str] = Field(default_factory=list, description="read-only context files")
    model: str | None = Field(None, description="litellm model name; default from the env")
    edit_format: str | None = None
    test_cmd: str | None = Field(None, description="e.g. 'pytest -q'; run in the sandbox")
    max_attempts: int = Field(2, ge=1, le=10)
    ask: bool = False
    apply: bool = False
    allow_dirty: bool = False
    aider_config: bool = False
    timeout: float = Field(600.0, gt=0, le=3600, description="seconds per Aider attempt")
    test_timeout: float = Field(120.0, gt=0, description="seconds per test run")
    llm_grace: float = Field(20.0, ge=0, le=600, description="seconds of model retries allowed")
    stream: bool = False


class RepoTestsRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cmd: str = Field(description="the test command, run as `/bin/bash -c CMD` in the box")
    files: dict[str, str] = Field(default_factory=dict, description="path -> base64 content")
    timeout: float = Field(testrun.DEFAULT_TIMEOUT, gt=0, description="wall-clock seconds")


def _allowed(repo: str) -> None:
    """SANDLOT_CODER_ROOTS (colon-separated) confines /code to those directories."""
    roots = [r for r in os.environ.get("SANDLOT_CODER_ROOTS", "").split(":") if r]
    if not roots:
        return
    real = Path(repo).resolve()
    if not any(real.is_relative_to(Path(r).resolve()) for r in roots):
        raise InvalidRequest(f"{repo} is outside the directories this server may edit")


def router(service: Service) -> APIRouter:
    api = APIRouter(tags=["coder"])

    @api.post("/route", response_model=RouteResponse)
    async def route(req: RouteRequest) -> RouteResponse:
        """Which tool serves a request (sandbox run/judge, coder code/ask), why, what next."""
        decision = route_request(req.request, repo=req.repo, files=tuple(req.files))
        return RouteResponse(**decision.to_dict())

    @api.post("/repo_tests")
    async def repo_tests(req: RepoTestsRequest) -> dict[str, object]:
        """A repository's test command over its files, in a fresh box (what `sandlot test
        --sandbox-url` sends). HTTP 200 whatever the tests say; `passed` and `status` tell."""
        executor = service.require_executor()
        files = {}
        for name, data in req.files.items():
            safe_relpath(name)
            try:
                files[name] = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidRequest(f"files[{name!r}] is not valid base64") from None
        if sum(len(v) for v in files.values()) > service.config.max_files_bytes:
            raise TooLarge(f"files total more than the {service.config.max_files_bytes} bytes")
        outcome = await testrun.run_files(executor, files, req.cmd, req.timeout)
        return outcome.to_dict(full=True)

    @api.post("/code")
    async def code(req: CodeRequest) -> dict[str, object]:
        """Aider on a new branch in a worktree, tests in the sandbox, failures fed back.

        HTTP 200 whatever the outcome (`status`: passed, failed_tests, no_changes, llm_error,
        timeout, answered); 4xx for a request that cannot run, before anything runs.
        """
        _allowed(req.repo)
        task = CodeTask(
            repo=req.repo, message=req.message, files=req.files, read=req.read,
            model=req.model, edit_format=req.edit_format, test_cmd=req.test_cmd,
            max_attempts=req.max_attempts, ask=req.ask, apply=req.apply,
            allow_dirty=req.allow_dirty, aider_config=req.aider_config,
            attempt_timeout=req.timeout, test_timeout=req.test_timeout,
            llm_grace=req.llm_grace, stream=req.stream,
        )  # fmt: skip
        prep = await asyncio.to_thread(prepare, task, service.config.runtime_dir)  # runs git
        executor = service.require_executor()
        loop = asyncio.get_running_loop()

        def tests(root: Path, cmd: str, timeout: float) -> testrun.TestOutcome:
            job = testrun.run_tests(executor, root, cmd, timeout)
            return asyncio.run_coroutine_threadsafe(job, loop).result()

        result = await asyncio.to_thread(run_task, prep, tests)
        return result.to_dict()

    return api
