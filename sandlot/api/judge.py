"""The online-judge endpoints (SandboxFusion's), plus `POST /evaluate` for a batch with pass@k.

Thin: validate, convert, call the judge. The judge is built once per app from the service.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter

from sandlot.api import convert
from sandlot.api.judge_models import (
    EvalResult,
    EvalTestCase,
    EvaluateRequest,
    EvaluateResponse,
    GetMetricsRequest,
    GetPromptByIdRequest,
    GetPromptsRequest,
    Prompt,
    SampleVerdict,
    SubmitRequest,
    TestConfig,
)
from sandlot.api.models import ErrorBody
from sandlot.errors import InvalidRequest
from sandlot.judge import Datasets, Judge, JudgeConfig, TestOutcome
from sandlot.judge import EvalResult as JudgeResult
from sandlot.judge.batch import judge_many, number_samples, record
from sandlot.judge.metrics import summarize
from sandlot.service import Service

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "bad input; the detail says what to change"},
    404: {"model": ErrorBody, "description": "unknown dataset or problem id; lists what exists"},
    504: {"model": ErrorBody, "description": "overloaded: no slot in time; retry"},
}


def judge_config(cfg: TestConfig, language: str | None = None) -> JudgeConfig:
    if cfg.custom_extract_logic:
        raise InvalidRequest(
            "config.custom_extract_logic is not supported: sandlot never runs client code in the "
            "server. Extract the code yourself, or choose a block with config.extra.code_block_idx"
        )
    return JudgeConfig(
        language=cfg.language or language,
        locale=cfg.locale,
        is_fewshot=bool(cfg.is_fewshot),
        compile_timeout=cfg.compile_timeout,
        run_timeout=cfg.run_timeout,
        memory_mb=cfg.memory_limit_MB,
        dataset_type=cfg.dataset_type,
        provided_data=cfg.provided_data,
        extra=dict(cfg.extra or {}),
    )


def eval_result(result: JudgeResult, simple: bool = False) -> EvalResult:
    return EvalResult(
        id=result.id,
        accepted=result.accepted,
        extracted_code=result.extracted_code,
        full_code=result.full_code,
        test_code=result.test_code,
        tests=[test_case(t) for t in result.tests],
        extracted_type=result.extracted_type,  # type: ignore[arg-type]
        extra=result.extra,
        passed=result.accepted if simple else None,
    )


def test_case(test: TestOutcome) -> EvalTestCase:
    assert test.execution is not None
    return EvalTestCase(
        passed=test.passed,
        exec_info=convert.response(test.execution),
        test_info=test.test_info,
        verdict=test.verdict.value,
    )


def judge_router(service: Service) -> APIRouter:
    router = APIRouter(tags=["online judge"])
    state: dict[str, Judge] = {}

    def judge() -> Judge:
        # Built on first use: the service's registry is probed at start-up.
        if "judge" not in state:
            datasets = Datasets(service.registry, service.config.dataset_dir or None)
            state["judge"] = Judge(datasets, service.require_executor)
        return state["judge"]

    @router.get("/list_datasets")
    async def list_datasets() -> list[str]:
        """Every dataset id this server can judge."""
        return judge().datasets.names()

    @router.post("/list_ids", responses=ERRORS)
    async def list_ids(req: GetPromptsRequest) -> list[int | str]:
        return await asyncio.to_thread(judge().ids, req.dataset, judge_config(req.config))

    @router.post("/get_prompts", responses=ERRORS)
    async def get_prompts(req: GetPromptsRequest) -> list[Prompt]:
        cfg = judge_config(req.config)
        rows = await asyncio.to_thread(judge().prompts, req.dataset, cfg, req.offset, req.limit)
        return [Prompt(**p) for p in rows]

    @router.post("/get_prompt_by_id", responses=ERRORS)
    async def get_prompt_by_id(req: GetPromptByIdRequest) -> Prompt:
        cfg = judge_config(req.config)
        return Prompt(**await asyncio.to_thread(judge().prompt_by_id, req.dataset, req.id, cfg))

    @router.post("/submit", response_model=EvalResult, responses=ERRORS)
    async def submit(req: SubmitRequest) -> EvalResult:
        """Judge one completion; `accepted` is the verdict, `extra` says how and why."""
        cfg = judge_config(req.config, req.language)
        pid = req.id if req.id is not None else req.problem_id
        completion = req.completion if req.completion is not None else req.solution
        assert pid is not None and completion is not None  # the model checked
        result = await judge().submit(req.dataset, pid, completion, cfg)
        return eval_result(result, simple=req.problem_id is not None or req.solution is not None)

    @router.post("/get_metrics", responses=ERRORS)
    async def get_metrics(req: GetMetricsRequest) -> dict[str, float]:
        """pass@k over `results` (EvalResults, several per id); k from config.extra.k_targets."""
        ks = (req.config.extra or {}).get("k_targets") or [1]
        pairs = [(r.get("id"), bool(r.get("accepted"))) for r in req.results]
        return summarize(pairs, ks)

    @router.post("/get_metrics_function")
    async def get_metrics_function() -> dict[str, None]:
        """SandboxFusion ships Python source to exec here; sandlot does not (use /get_metrics)."""
        return {"function": None}

    @router.post("/evaluate", response_model=EvaluateResponse, responses=ERRORS)
    async def evaluate(req: EvaluateRequest) -> EvaluateResponse:
        """Judge a batch of samples (several per problem) and compute pass@k."""
        j = judge()
        cfg = judge_config(req.config, req.language)
        samples = number_samples((s.model_dump() for s in req.samples), "samples")
        if not samples:
            raise InvalidRequest("samples is empty")
        for s in samples:  # every id must exist before anything runs
            j.problem(req.dataset, s.id, cfg)
        concurrency = max(1, service.config.slots * 2)
        results = await judge_many(j, req.dataset, samples, cfg, concurrency)
        verdicts = [
            SampleVerdict(**record(s, r), result=eval_result(r) if req.details else None)
            for s, r in zip(samples, results, strict=True)
        ]
        return EvaluateResponse(
            dataset=req.dataset,
            problems=len({str(s.id) for s in samples}),
            samples=len(samples),
            accepted=sum(r.accepted for r in results),
            pass_at_k=summarize(
                ((s.id, r.accepted) for s, r in zip(samples, results, strict=True)), req.k
            ),
            results=verdicts,
        )

    return router
