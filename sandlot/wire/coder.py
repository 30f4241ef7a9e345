"""Wire types of the AI-coding route: `/route`, `/repo_tests` and `/code`.

Defaults and bounds of a coding task come from `sandlot.coder.task`, the one place they are
defined (the CLI's options read them too).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sandlot.coder import (
    ATTEMPT_TIMEOUT,
    ATTEMPTS,
    LLM_GRACE,
    MAX_ATTEMPT_TIMEOUT,
    MAX_ATTEMPTS,
    MAX_LLM_GRACE,
    MAX_REQUEST_CHARS,
    TEST_TIMEOUT,
)
from sandlot.wire.types import Files, NonBlank, Seconds


class RouteRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    request: NonBlank = Field(
        description="what the user wants done, in words", max_length=MAX_REQUEST_CHARS
    )
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
    message: NonBlank = Field(description="what the coder should do")
    files: list[str] = Field(default_factory=list, description="files Aider may edit")
    read: list[str] = Field(default_factory=list, description="read-only context files")
    model: str | None = Field(None, description="litellm model name; default from the env")
    edit_format: str | None = None
    test_cmd: str | None = Field(None, description="e.g. 'pytest -q'; run in the sandbox")
    max_attempts: int = Field(ATTEMPTS, ge=1, le=MAX_ATTEMPTS)
    ask: bool = False
    apply: bool = False
    allow_dirty: bool = False
    aider_config: bool = False
    timeout: Seconds = Field(
        ATTEMPT_TIMEOUT, le=MAX_ATTEMPT_TIMEOUT,
        description="seconds per Aider attempt",
    )  # fmt: skip
    test_timeout: Seconds | None = Field(
        None, description=f"seconds per test run (default {TEST_TIMEOUT:g}, or less "
        "when the server's max_run_timeout is less)",
    )  # fmt: skip
    llm_grace: float = Field(
        LLM_GRACE, ge=0, le=MAX_LLM_GRACE, allow_inf_nan=False,
        description="seconds of model retries allowed",
    )  # fmt: skip
    stream: bool = False
    setup: str | None = Field(
        None, max_length=65536, description="work in phases: set the repository's environment "
        "up first ('auto', or its own command; cached), Aider on the base's history alone, "
        "the result proved against the base's tests",
    )  # fmt: skip
    allow_test_changes: bool = Field(False, description="the proof grades Aider's test edits")


class RepoTestsRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cmd: NonBlank = Field(description="the test command, run as `/bin/bash -c CMD` in the box")
    files: Files = Field(default_factory=dict, description="path -> base64 content")
    timeout: Seconds | None = Field(
        None, description=f"wall-clock seconds (default {TEST_TIMEOUT:g}, or less "
        "when the server's max_run_timeout is less)",
    )  # fmt: skip
