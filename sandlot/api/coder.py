"""HTTP routes of the AI-coding route: POST /route, /repo_tests and /code (for agents).

Thin: validate, call sandlot.coder through the Service, shape the answer.
"""

from __future__ import annotations

from fastapi import APIRouter

from sandlot import convert, usecases
from sandlot.api.deps import ServiceDep, TenantDep
from sandlot.api.errors import responses
from sandlot.coder import CodeTask
from sandlot.coder import route as route_request
from sandlot.wire import CodeRequest, RepoTestsRequest, RouteRequest, RouteResponse

router = APIRouter(tags=["coder"])


@router.post("/route", response_model=RouteResponse, responses=responses(400))
async def route(req: RouteRequest) -> RouteResponse:
    """Which tool serves a request (sandbox run/judge, coder code/ask), why, what next."""
    decision = route_request(req.request, repo=req.repo, files=tuple(req.files))
    return RouteResponse(**decision.to_dict())


@router.post("/repo_tests", responses=responses(400, 413, 503, 504))
async def repo_tests(req: RepoTestsRequest, service: ServiceDep) -> dict[str, object]:
    """A repository's test command over its files, in a fresh box (what `sandlot test
    --sandbox-url` sends). HTTP 200 whatever the tests say; `passed` and `status` tell."""
    outcome = await usecases.repo_tests(
        service, convert.decode_files(req.files), req.cmd, req.timeout
    )
    return outcome.to_dict(full=True)


@router.post("/code", responses=responses(400, 403, 503, 504))
async def code(req: CodeRequest, service: ServiceDep, tenant: TenantDep) -> dict[str, object]:
    """Aider on a new branch in a worktree, tests in the sandbox, failures fed back.

    HTTP 200 whatever the outcome (`status`: passed, failed_tests, no_changes, llm_error,
    timeout, answered); 4xx for a request that cannot run, before anything runs.
    """
    task = CodeTask(
        repo=req.repo, message=req.message, files=req.files, read=req.read,
        model=req.model, edit_format=req.edit_format, test_cmd=req.test_cmd,
        max_attempts=req.max_attempts, ask=req.ask, apply=req.apply,
        allow_dirty=req.allow_dirty, aider_config=req.aider_config,
        attempt_timeout=req.timeout, test_timeout=req.test_timeout,
        llm_grace=req.llm_grace, stream=req.stream, setup=req.setup,
        allow_test_changes=req.allow_test_changes, tenant=str(tenant),
    )  # fmt: skip
    result = await usecases.code(service, task)
    return result.to_dict()
