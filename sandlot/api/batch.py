"""`POST /run_batch`: many programs with their tests scored in one request (RL rewards).

Before FastAPI parses a body, its size is checked and its items and cases are counted from the
raw JSON (msgspec, without building them), so that a request of a million cases is a 413 in a
fraction of a second instead of a million objects in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import msgspec
from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from sandlot.api.deps import ServiceDep
from sandlot.api.errors import responses
from sandlot.convert import decode_files, run_limits
from sandlot.errors import TooLarge
from sandlot.executor import TestCase
from sandlot.judge import ItemResult, RewardItem, check_batch_size
from sandlot.usecases import run_batch as score_batch
from sandlot.wire import (
    BatchItem,
    BatchResult,
    CaseVerdict,
    CompileOut,
    RunBatchRequest,
    RunBatchResponse,
)

PARSE_ANYWAY = 1 << 20  # a body this small that msgspec refuses goes on to pydantic's 422


class _GroundTruth(msgspec.Struct):
    inputs: list[msgspec.Raw] | None = None
    assert_case: list[msgspec.Raw] | None = None


class _Item(msgspec.Struct):
    test_cases: list[msgspec.Raw] | None = None
    asserts: list[msgspec.Raw] | None = None
    ground_truth: _GroundTruth | str | None = None  # a JSON string is counted once parsed


class _Body(msgspec.Struct):
    items: list[_Item] = []


def _precheck(body: bytes, request: Request) -> None:
    cfg = request.app.state.service.config
    if len(body) > cfg.max_batch_bytes:
        raise TooLarge(f"a /run_batch body may have at most {cfg.max_batch_bytes} bytes")
    try:
        parsed = msgspec.json.decode(body, type=_Body)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        if len(body) <= PARSE_ANYWAY and not isinstance(exc, RecursionError):
            return  # small: pydantic's own 422 names the field (a NaN, which msgspec refuses)
        # RecursionError: nested deeper than any test data is
        error = {"loc": ("body",), "msg": str(exc), "type": "json"}
        raise RequestValidationError([error]) from None
    cases = 0
    for item in parsed.items:
        gt = item.ground_truth if isinstance(item.ground_truth, _GroundTruth) else None
        for part in (item.test_cases, item.asserts, gt and gt.inputs, gt and gt.assert_case):
            cases += len(part or ())
    check_batch_size(cfg, len(parsed.items), cases)


class _Counted(APIRoute):
    """A route whose body is size-checked and counted before FastAPI parses it."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def counted(request: Request) -> Response:
            cap = request.app.state.service.config.max_batch_bytes
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise TooLarge(f"a /run_batch body may have at most {cap} bytes")
            _precheck(await request.body(), request)  # the body is kept for the handler
            return await handler(request)

        return counted


router = APIRouter(tags=["rl"], route_class=_Counted)


@router.post("/run_batch", response_model=RunBatchResponse, responses=responses(400, 413, 503, 504))
async def run_batch(req: RunBatchRequest, service: ServiceDep) -> RunBatchResponse:
    """Score many programs against their tests: one result per item, in item order, each with a
    score (the fraction of cases passed) and a verdict per case. Every item compiles once and
    the cases of all items run in parallel across the slots, taking turns with other requests.
    A batch whose client goes away is stopped (api/gone.py cancels it)."""
    items = [_item(item, n) for n, item in enumerate(req.items)]
    results = await score_batch(service, items, req.stop_on_first_failure)
    return RunBatchResponse(results=[_result(r) for r in results])


def _item(item: BatchItem, n: int) -> RewardItem:
    cases = None
    if item.test_cases is not None:
        cases = [
            TestCase(input=c.input, expected=c.expected or "")
            if c.input is not None
            else TestCase(stdin=c.stdin or "", expected=c.expected_stdout or "")
            for c in item.test_cases
        ]
    return RewardItem(
        id=n if item.id is None else item.id, language=item.language, code=item.code,
        completion=item.completion, files=decode_files(item.files),
        test_cases=cases, ground_truth=item.ground_truth, asserts=item.asserts,
        checker=item.checker, strict=item.strict, **run_limits(item),
    )  # fmt: skip


def _result(r: ItemResult) -> BatchResult:
    compiled = None
    if r.compile is not None:
        compiled = CompileOut(
            ok=r.compile.ok, time=round(r.compile.wall_time, 6), cached=r.cached,
            stderr=r.compile.stderr[-2000:].decode(errors="replace"),
        )  # fmt: skip
    return BatchResult(
        id=r.id, score=r.score, passed=r.passed, verdict=r.verdict.value,
        cases=[CaseVerdict(verdict=c.verdict.value, time=c.time, cpu_time=c.cpu_time,
                           memory_bytes=c.memory, detail=c.detail) for c in r.cases],
        compile=compiled, reason=r.reason, extraction=r.extraction,
    )  # fmt: skip
