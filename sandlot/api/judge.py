"""The online-judge endpoints (SandboxFusion's), plus `POST /evaluate` for a batch with pass@k.

Thin: validate, convert, call the judge (built once, by the Service).
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from sandlot import convert, usecases
from sandlot.api.deps import ServiceDep
from sandlot.api.errors import responses
from sandlot.errors import InvalidRequest
from sandlot.judge import (
    metric_function_source,
    number_samples,
    pass_at_k,
)
from sandlot.usecases import evaluate as evaluate_samples
from sandlot.usecases import submit as submit_one
from sandlot.wire import (
    DatasetInfo,
    EvalResult,
    EvaluateRequest,
    EvaluateResponse,
    GetMetricsFunctionRequest,
    GetMetricsFunctionResult,
    GetMetricsRequest,
    GetPromptByIdRequest,
    GetPromptsRequest,
    Prompt,
    SampleVerdict,
    SubmitRequest,
)

router = APIRouter(tags=["online judge"])
ERRORS = responses(400, 404, 504)


@router.get("/list_datasets")
async def list_datasets(service: ServiceDep) -> list[str]:
    """Every dataset id this server can judge."""
    return usecases.dataset_names(service)


@router.get("/v1/datasets", responses=ERRORS)
async def datasets(service: ServiceDep) -> list[DatasetInfo]:
    """Every dataset with its family, languages and integrity class (how its seal works, what it
    attests, what is out of reach); `strict` refuses the "unsealed" ones unless asked."""
    return await asyncio.to_thread(convert.dataset_infos, service.judge)


@router.post("/list_ids", responses=ERRORS)
async def list_ids(req: GetPromptsRequest, service: ServiceDep) -> list[int | str]:
    return await usecases.problem_ids(service, req.dataset, convert.judge_config(req.config))


@router.post("/get_prompts", responses=ERRORS)
async def get_prompts(req: GetPromptsRequest, service: ServiceDep) -> list[Prompt]:
    cfg = convert.judge_config(req.config)
    rows = await usecases.prompts(service, req.dataset, cfg, req.offset, req.limit)
    return [Prompt(**p) for p in rows]


@router.post("/get_prompt_by_id", responses=ERRORS)
async def get_prompt_by_id(req: GetPromptByIdRequest, service: ServiceDep) -> Prompt:
    cfg = convert.judge_config(req.config)
    row = await usecases.prompt_by_id(service, req.dataset, req.id, cfg)
    return Prompt(**row)


@router.post("/submit", response_model=EvalResult, responses=ERRORS)
async def submit(req: SubmitRequest, service: ServiceDep) -> EvalResult:
    """Judge one completion; `accepted` is the verdict, `extra` says how and why."""
    cfg = convert.judge_config(req.config, req.language)
    pid = req.id if req.id is not None else req.problem_id
    completion = req.completion if req.completion is not None else req.solution
    assert pid is not None and completion is not None  # the model checked
    result = await submit_one(service, req.dataset, pid, completion, cfg)
    return convert.eval_result(
        result, simple=req.problem_id is not None or req.solution is not None
    )


@router.post("/get_metrics", responses=ERRORS)
async def get_metrics(req: GetMetricsRequest) -> dict[str, float]:
    """pass@k over `results` (EvalResults, several per id); k from config.extra.k_targets."""
    ks = (req.config.extra or {}).get("k_targets") or [1]
    pairs = [(r.get("id"), bool(r.get("accepted"))) for r in req.results]
    return pass_at_k(pairs, ks)


@router.post("/get_metrics_function", responses=ERRORS)
async def get_metrics_function(
    req: GetMetricsFunctionRequest, service: ServiceDep
) -> GetMetricsFunctionResult:
    """Python source that the client runs with `k_targets` and `repeats` defined, then calls
    `get_metrics(results)`: pass@k per category, for EvoEval and MHPP as SandboxFusion gives it;
    null for other datasets (POST /get_metrics computes pass@k here)."""
    name = usecases.dataset_name(service, req.dataset, convert.judge_config(req.config))
    return GetMetricsFunctionResult(function=metric_function_source(name))


@router.post("/evaluate", response_model=EvaluateResponse, responses=ERRORS)
async def evaluate(req: EvaluateRequest, service: ServiceDep) -> EvaluateResponse:
    """Judge a batch of samples (several per problem) and compute pass@k."""
    cfg = convert.judge_config(req.config, req.language)
    samples = number_samples((s.model_dump() for s in req.samples), "samples")
    if not samples:
        raise InvalidRequest("samples is empty")
    judged = await evaluate_samples(service, req.dataset, samples, cfg)
    return EvaluateResponse(
        dataset=req.dataset,
        problems=len({str(s.id) for s in samples}),
        samples=len(samples),
        accepted=sum(j.result.accepted for j in judged),
        pass_at_k=pass_at_k(((j.sample.id, j.result.accepted) for j in judged), req.k),
        results=[
            SampleVerdict(**j.record, result=convert.eval_result(j.result) if req.details else None)
            for j in judged
        ],
    )
