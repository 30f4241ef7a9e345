"""Wire types of `POST /run_batch`: many programs, each with its tests, scored in one request.

An item is what `/run_code` takes (`code`, `language`, limits, `files`) plus an `id` and its tests
in one of the forms RL datasets carry: `test_cases` as `/run_code` accepts them, `ground_truth`
(APPS / TACO / PRIME JSON, an object or a JSON string), or `asserts` appended to the code. A raw
model `completion` may stand in for `code`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import JsonDict

from sandlot.wire.run import TestCaseIn
from sandlot.wire.types import MemoryMB, NullableFiles, Seconds, one_of_required

CheckerMode = Literal["lines", "exact", "whitespace", "case", "float", "sandboxfusion", "verl"]
# What the item's validators and the judge check, stated for the schema's readers: a program
# (code or completion) and at least one form of tests.
_ITEM_SCHEMA: JsonDict = {"allOf": [
    one_of_required(("code",), ("completion",)),
    one_of_required(("test_cases",), ("ground_truth",), ("asserts",)),
]}  # fmt: skip
_TRUTH_SCHEMA = one_of_required(("inputs", "outputs"), ("assert_case",))


class BatchItem(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra=_ITEM_SCHEMA)

    id: str | int | None = Field(None, description="echoed in the result; default: the index")
    code: str | None = Field(
        None, description="source text of the program", examples=["print(int(input()) * 2)"]
    )
    completion: str | None = Field(
        None, description="a raw model completion instead of code: the code is extracted from it"
    )
    language: str = Field("python", description="a language name or alias")
    compile_timeout: Seconds | None = Field(None, description="seconds (default 10)")
    run_timeout: Seconds | None = Field(None, description="seconds (default 10)")
    memory_limit_MB: MemoryMB = Field(None, description="MiB; -1 or absent: the default")
    files: NullableFiles | None = Field(None, description="path -> base64 content")
    test_cases: list[TestCaseIn] | None = Field(
        None,
        description="as /run_code takes them: stdin/expected_stdout or input/expected",
        json_schema_extra={"minItems": 1},
    )
    ground_truth: Annotated[dict[str, Any], Field(json_schema_extra=_TRUTH_SCHEMA)] | str | None = (
        Field(
            None,
            description="APPS/TACO/PRIME JSON (an object, or it as a JSON string): inputs, "
            "outputs, optional fn_name (call-based); or assert_case",
            examples=[{"inputs": ["2\n"], "outputs": ["4\n"]}],
        )
    )
    asserts: list[str] | None = Field(
        None,
        description="statements appended to the code, one run each; passes if it exits 0",
        json_schema_extra={"minItems": 1},
    )
    strict: bool = Field(
        True,
        description="rewards no answer can fake: expression cases and asserts compare plain data "
        "only, and a Python answer runs in a process of its own that the tests call (false: "
        "in the answer's process, comparing with its own __eq__, as /run_code does by default)",
    )
    checker: CheckerMode | dict[str, Any] | None = Field(
        None,
        description="stdout comparison: lines (default), exact, whitespace, case, float, verl, "
        "sandboxfusion, or {mode, abs_tol, rel_tol}",
    )

    @model_validator(mode="after")
    def _one_program(self) -> BatchItem:
        if (self.code is None) == (self.completion is None):
            raise ValueError("an item needs exactly one of 'code' or 'completion'")
        return self


class RunBatchRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: list[BatchItem] = Field(min_length=1)
    stop_on_first_failure: bool = Field(
        False, description="stop an item at its first failing case (the rest are 'skipped')"
    )


class CaseVerdict(BaseModel):
    verdict: str = Field(
        description="accepted, wrong_answer, time_limit_exceeded, memory_limit_exceeded, "
        "output_limit_exceeded, runtime_error, compile_error, sandbox_error, skipped"
    )
    time: float | None = Field(None, description="wall seconds of the run")
    cpu_time: float | None = None
    memory_bytes: int | None = None
    detail: str | None = Field(None, description="why it failed, in short")


class CompileOut(BaseModel):
    ok: bool
    time: float
    cached: bool = False
    stderr: str = ""


class BatchResult(BaseModel):
    id: str | int
    score: float = Field(description="the fraction of cases passed")
    passed: bool = Field(description="every case passed")
    verdict: str = Field(description="accepted, or the first failing case's verdict")
    cases: list[CaseVerdict]
    compile: CompileOut | None = None
    reason: str | None = None
    extraction: str | None = Field(None, description="how the code was taken from a completion")


class RunBatchResponse(BaseModel):
    results: list[BatchResult]
