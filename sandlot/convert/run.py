"""A run's request from the wire's shapes, and its answer in them. No I/O, no policy."""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from sandlot.errors import InvalidRequest
from sandlot.executor import (
    CaseResult,
    CodeRequest,
    Execution,
    Outcome,
    TestCase,
    TestRun,
    command_status,
    return_code,
)
from sandlot.limits import RUN_LIMITS, RUN_TIMEOUT
from sandlot.wire import (
    CaseOut,
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)

POD = os.environ.get("MY_POD_NAME")


def decode_base64(content: str, what: str) -> bytes:
    """A request's base64 field as bytes; what it is called in the request names a bad one."""
    try:
        return base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequest(f"{what} is not valid base64") from None


def decode_files(files: Mapping[str, str | None] | None) -> dict[str, bytes]:
    """`files` as sent (path -> base64); null entries are skipped, as SandboxFusion does."""
    return {
        name: decode_base64(content, f"files[{name!r}]")
        for name, content in (files or {}).items()
        if content is not None
    }


def run_limits(model: BaseModel) -> dict[str, Any]:
    """The run limits a request model carries under their wire names, by the names of their
    settings (those of CodeRequest's, the judge's and the batch's fields)."""
    return {limit.setting: getattr(model, limit.field) for limit in RUN_LIMITS}


def code_request(req: RunCodeRequest) -> CodeRequest:
    asked = run_limits(req)
    if req.run_timeout is None:  # the simple shape's name
        asked[RUN_TIMEOUT.setting] = req.timeout
    return CodeRequest(
        language=req.language,
        code=req.code,
        files=decode_files(req.files),
        stdin=(req.stdin or "").encode(),
        fetch=tuple(req.fetch_files or ()),
        strict=bool(req.strict),
        run_timeout_field="run_timeout" if req.run_timeout is not None else "timeout",
        **asked,
    )


def test_cases(req: RunCodeRequest) -> list[TestCase]:
    return [
        TestCase(input=c.input, expected=c.expected)
        if c.input is not None and c.expected is not None  # TestCaseIn requires them together
        else TestCase(stdin=c.stdin or "", expected=c.expected_stdout or "")
        for c in req.test_cases or []
    ]


def command_result(outcome: Outcome | None) -> CommandRunResult | None:
    if outcome is None:
        return None
    return CommandRunResult(
        status=CommandRunStatus(command_status(outcome)),
        execution_time=round(outcome.wall_time, 6),
        return_code=return_code(outcome),
        stdout=outcome.stdout.decode(errors="replace"),
        stderr=outcome.stderr.decode(errors="replace"),
        cpu_time=round(outcome.cpu_time, 6),
        memory_peak_bytes=outcome.memory_peak,
        limit=outcome.limit.value if outcome.limit else None,
        signal=outcome.signal,
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=outcome.stderr_truncated,
    )


def run_response(execution: Execution, judged: bool = False) -> RunCodeResponse:
    """The wire response; `judged`: a judge's exec_info, whose status and message say how the
    run ended, as SandboxFusion's do (the judge's verdict says whether its tests were proven)."""
    run = command_result(execution.run)
    last = run or command_result(execution.compile)
    return RunCodeResponse(
        status=RunStatus(execution.run_status if judged else execution.status),
        message=(execution.error or "") if judged else execution.message,
        compile_result=command_result(execution.compile),
        run_result=run,
        executor_pod_name=POD,
        files={k: base64.b64encode(v).decode() for k, v in execution.files.items()},
        stdout=last.stdout if last else None,
        stderr=last.stderr if last else execution.error,
        exit_code=last.return_code if last else None,
        cached_build=execution.cached,
    )


def case_out(case: CaseResult) -> CaseOut:
    return CaseOut(
        passed=case.passed,
        input=case.input,
        stdin=case.stdin,
        expected=case.expected,
        actual=case.actual,
        error=case.error,
        run_result=command_result(case.run),
    )


def test_response(run: TestRun) -> RunCodeResponse:
    out = run_response(run.execution)
    out.tests = [case_out(c) for c in run.cases]
    out.passed = run.passed
    out.message = run.message
    if out.status == RunStatus.Success and not run.passed:
        out.status = RunStatus.Failed
    return out
