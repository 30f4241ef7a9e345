"""Wire types: SandboxFusion's request and response shapes, plus sandlot's extra fields.

Field names, defaults and enum values follow research/sandboxfusion.md §1; nulls are accepted
wherever SandboxFusion's clients may send them, and unknown fields are ignored.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sandlot.wire.types import MemoryMB, NullableFiles, RelPath, Seconds, one_of_required


class RunStatus(StrEnum):
    Success = "Success"
    Failed = "Failed"
    SandboxError = "SandboxError"


class CommandRunStatus(StrEnum):
    Finished = "Finished"
    TimeLimitExceeded = "TimeLimitExceeded"
    Error = "Error"


class TestCaseIn(BaseModel):
    """`{"input": expr, "expected": expr}` or `{"stdin": text, "expected_stdout": text}`."""

    model_config = ConfigDict(
        json_schema_extra=one_of_required(("input", "expected"), ("expected_stdout",))
    )

    input: str | None = None
    expected: str | None = None
    stdin: str | None = None
    expected_stdout: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> TestCaseIn:
        if self.input is not None and self.expected is None:
            raise ValueError("a case with 'input' needs 'expected'")
        if self.input is None and self.expected_stdout is None:
            raise ValueError(
                "a case needs either 'input' and 'expected', or 'stdin' and 'expected_stdout'"
            )
        return self


class RunCodeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    code: str = Field(description="source text of the program", examples=['print("hello")'])
    language: str = Field(
        description="a language name or alias; GET /languages lists them", examples=["python"]
    )
    compile_timeout: Seconds | None = Field(None, description="seconds (default 10)")
    run_timeout: Seconds | None = Field(None, description="seconds (default 10)")
    timeout: Seconds | None = Field(None, description="same as run_timeout (the simple shape)")
    memory_limit_MB: MemoryMB = Field(None, description="MiB; -1 or absent: the default")
    stdin: str | None = None
    files: NullableFiles | None = Field(None, description="path -> base64 content")
    fetch_files: list[RelPath] | None = Field(None, description="paths to read back after the run")
    test_cases: list[TestCaseIn] | None = Field(
        None, description="cases to judge the program on", json_schema_extra={"minItems": 1}
    )
    session_id: str | None = Field(None, description="run in this session (POST /sessions)")
    strict: bool | None = Field(
        None,
        description="expression test cases compare plain data only: numbers, strings, lists, "
        "dicts... of built-in types, never an object of the program's own making",
    )

    @model_validator(mode="after")
    def _one_run_timeout(self) -> RunCodeRequest:
        both = self.timeout is not None and self.run_timeout is not None
        if both and self.timeout != self.run_timeout:
            raise ValueError(
                "timeout and run_timeout are the same setting: give one (got "
                f"timeout={self.timeout:g}, run_timeout={self.run_timeout:g})"
            )
        return self


class CommandRunResult(BaseModel):
    status: CommandRunStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None
    # sandlot's extra fields
    cpu_time: float | None = None
    memory_peak_bytes: int | None = None
    limit: str | None = Field(
        None, description="which limit ended the run: time, cpu, memory, output"
    )
    signal: int | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False


class CaseOut(BaseModel):
    passed: bool
    input: str | None = None
    stdin: str | None = None
    expected: str
    actual: str | None = None
    error: str | None = None
    run_result: CommandRunResult | None = None


class RunCodeResponse(BaseModel):
    status: RunStatus
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = {}
    # the simple shape
    stdout: str | None = None
    stderr: str | None = None
    exit_code: int | None = None
    cached_build: bool = False
    passed: bool | None = None
    tests: list[CaseOut] | None = None
    session_id: str | None = None


class ErrorBody(BaseModel):
    detail: str
