"""Wire types of the online-judge endpoints: SandboxFusion's shapes plus sandlot's extra fields.

`config` is optional here (SandboxFusion requires it; `{}` and absent mean the same), unknown
fields are ignored, and the simple shape (`problem_id`, `solution`, `language`) is accepted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sandlot.wire.run import RunCodeResponse
from sandlot.wire.types import Count, MemoryMB, Positive, Seconds, one_of_required

ProblemId = int | str
Dataset = Annotated[
    str,
    Field(
        description="a dataset id (GET /list_datasets lists them) or an alias of one "
        "(humaneval for humaneval_python)",
        examples=["humaneval_python"],
    ),
]


class TestConfig(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dataset_type: str | None = Field(
        None, description="a SandboxFusion class name, for rows sent in provided_data"
    )
    language: str | None = None
    locale: str | None = None
    is_fewshot: bool | None = None
    compile_timeout: Seconds | None = None
    run_timeout: Seconds | None = None
    memory_limit_MB: MemoryMB = None
    custom_extract_logic: str | None = Field(
        None, description="refused: sandlot never runs client code in the server"
    )
    provided_data: list[dict[str, Any]] | dict[str, Any] | None = None
    extra: dict[str, Any] | None = Field(
        None,
        description="mode, is_freeform, run_all_cases, checker, code_block_idx, strict, split "
        "(false: a Python answer in the tests' process), allow_unsealed, ...",
    )


class GetPromptsRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dataset: Dataset
    config: TestConfig = TestConfig()
    offset: Count = 0
    limit: Count = 1_000_000


class GetPromptByIdRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dataset: Dataset
    id: ProblemId
    config: TestConfig = TestConfig()


class Prompt(BaseModel):
    id: ProblemId
    prompt: str
    labels: dict[str, Any] = {}


class SubmitRequest(BaseModel):
    """SandboxFusion's `{dataset, id, completion, config}` or `{dataset, problem_id, solution}`."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"allOf": [one_of_required(("id",), ("problem_id",)),
                                     one_of_required(("completion",), ("solution",))]},
    )  # fmt: skip

    dataset: Dataset
    id: ProblemId | None = None
    problem_id: ProblemId | None = Field(None, description="the simple shape's name for id")
    completion: str | None = None
    solution: str | None = Field(None, description="the simple shape's name for completion")
    language: str | None = Field(None, description="the simple shape: same as config.language")
    config: TestConfig = TestConfig()

    @model_validator(mode="after")
    def _both(self) -> SubmitRequest:
        if self.id is None and self.problem_id is None:
            raise ValueError("give the problem's 'id' (or 'problem_id')")
        if self.completion is None and self.solution is None:
            raise ValueError("give the model's 'completion' (or 'solution')")
        return self


class EvalTestCase(BaseModel):
    passed: bool
    exec_info: RunCodeResponse
    test_info: dict[str, Any] | None = None
    verdict: str | None = Field(None, description="sandlot: accepted, wrong_answer, ...")


class EvalResult(BaseModel):
    id: ProblemId
    accepted: bool
    extracted_code: str
    full_code: str | None = None
    test_code: str | None = None
    tests: list[EvalTestCase] = []
    extracted_type: Literal["fenced", "incomplete_fenced", "heuristic", "empty"] | None = None
    extra: dict[str, Any] | None = None
    passed: bool | None = Field(None, description="the simple shape: same as accepted")


class GetMetricsRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dataset: Dataset
    config: TestConfig = TestConfig()
    results: list[dict[str, Any]] = []


class GetMetricsFunctionRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dataset: Dataset
    config: TestConfig = TestConfig()


class GetMetricsFunctionResult(BaseModel):
    function: str | None = Field(
        description="Python source defining get_metrics(results), to run with k_targets and "
        "repeats defined; null for a dataset without one"
    )


class Sample(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"allOf": [one_of_required(("id",), ("task_id",), ("problem_id",)),
                                     one_of_required(("completion",), ("solution",))]},
    )  # fmt: skip

    id: ProblemId | None = None
    task_id: ProblemId | None = None
    problem_id: ProblemId | None = None
    completion: str | None = None
    solution: str | None = None


class EvaluateRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dataset: Dataset
    samples: list[Sample] = Field(
        description="each {id or task_id, completion}", json_schema_extra={"minItems": 1}
    )
    config: TestConfig = TestConfig()
    k: list[Positive] = Field([1], description="the k of pass@k")
    language: str | None = None
    details: bool = Field(False, description="return each sample's full EvalResult")


class SampleVerdict(BaseModel):
    id: ProblemId
    sample: int
    accepted: bool
    verdict: str | None = None
    reason: str | None = None
    extracted_type: str | None = None
    result: EvalResult | None = None


class EvaluateResponse(BaseModel):
    dataset: Dataset
    problems: int
    samples: int
    accepted: int
    pass_at_k: dict[str, float]
    results: list[SampleVerdict]


class LanguageIntegrity(BaseModel):
    """How far a verdict in one language of a dataset can be trusted (docs/integrity.md)."""

    integrity: Literal["split", "output-checked", "in-process", "unsealed"]
    sealed_by: str
    attests: str
    split: str
    out_of_reach: str


class DatasetInfo(BaseModel):
    name: str
    aliases: list[str]
    family: str
    summary: str
    # The weakest class among its languages: what `strict` refuses when it is "unsealed".
    integrity: Literal["split", "output-checked", "in-process", "unsealed"]
    languages: dict[str, LanguageIntegrity]
