"""`POST /run_code`: SandboxFusion's contract plus extra fields, once or against test cases.

A run whose client goes away is cancelled: its boxes are killed, their slots freed."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sandlot import convert
from sandlot.api.deps import ServiceDep
from sandlot.api.disconnect import unless_gone
from sandlot.api.errors import responses
from sandlot.api.sessions import run_code_in_session
from sandlot.usecases import run, run_tests
from sandlot.wire import RunCodeRequest, RunCodeResponse

router = APIRouter(tags=["sandbox"])


@router.post(
    "/run_code", response_model=RunCodeResponse, responses=responses(400, 404, 410, 413, 503, 504)
)
async def run_code(
    req: RunCodeRequest, request: Request, service: ServiceDep
) -> RunCodeResponse | Response:
    """Run code once, or against `test_cases`; SandboxFusion's contract plus extra fields. With a
    `session_id`, in that session (see /sessions). A run whose client goes away is stopped."""
    if req.session_id is not None:
        return await run_code_in_session(service, req, request)
    code_req = convert.code_request(req)
    if req.test_cases is not None:
        tested = await unless_gone(request, run_tests(service, code_req, convert.test_cases(req)))
        return tested if isinstance(tested, Response) else convert.test_response(tested)
    ran = await unless_gone(request, run(service, code_req))
    return ran if isinstance(ran, Response) else convert.run_response(ran)
