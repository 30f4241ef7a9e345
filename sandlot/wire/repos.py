"""Wire types of repository tasks: `POST /repo/grade`, `/repo/setup` and `/repo/test`.

SWE-bench's field names are taken too (`base_commit`, `model_patch`, `FAIL_TO_PASS`,
`PASS_TO_PASS`, the last two also as the JSON strings its datasets hold), so a row of such a
dataset is a request as it stands.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from sandlot.wire.types import Base64, Seconds

MAX_TESTS = 20_000
MAX_PATCH_CHARS = 16 << 20


class RepoSource(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    repo: str | None = Field(
        None, description="path of a git repository on the server (under coder_roots)"
    )
    tarball: Base64 | None = Field(
        None, description="base64 of a tar archive (gzip, bzip2 or xz too) of a git repository, "
        "or of a git bundle",
    )  # fmt: skip
    base: str = Field(
        validation_alias=AliasChoices("base", "base_commit"), min_length=1, max_length=200,
        description="the base commit (hash, or a branch or tag name)",
    )  # fmt: skip
    setup: str | None = Field(
        "auto", max_length=65536, description="the setup command ('auto': by the repository's "
        "ecosystems; '' or null: none); its environment is cached",
    )  # fmt: skip

    @model_validator(mode="after")
    def _one_source(self) -> RepoSource:
        if (self.repo is None) == (self.tarball is None):
            raise ValueError("give exactly one of `repo` (a path on the server) and `tarball`")
        return self


class SetupRequest(RepoSource):
    pass


class TestRequest(RepoSource):
    __test__ = False  # not a pytest class
    test: str = Field("auto", min_length=1, max_length=65536, description="the test command")
    patch: str = Field("", max_length=MAX_PATCH_CHARS, description="applied to the base first")
    timeout: Seconds | None = None


def _ids(value: Any) -> Any:
    if isinstance(value, str):  # SWE-bench's datasets hold these lists as JSON text
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError("a list of test ids, or that list as JSON text") from exc
    return value


class GradeRequest(RepoSource):
    patch: str = Field(
        "", validation_alias=AliasChoices("patch", "model_patch"), max_length=MAX_PATCH_CHARS,
        description="the candidate patch (a unified diff against the base)",
    )  # fmt: skip
    test_patch: str = Field("", max_length=MAX_PATCH_CHARS, description="applied at grading only")
    fail_to_pass: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("fail_to_pass", "FAIL_TO_PASS"),
        max_length=MAX_TESTS, description="tests that must pass (and failed at the base)",
    )  # fmt: skip
    pass_to_pass: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("pass_to_pass", "PASS_TO_PASS"),
        max_length=MAX_TESTS, description="tests that must still pass",
    )  # fmt: skip
    test: str = Field("auto", min_length=1, max_length=65536, description="the test command")
    allow_test_changes: bool = Field(
        False, description="grade the candidate's changes to test files as they are"
    )
    test_paths: list[str] = Field(
        default_factory=list, max_length=1000,
        description="globs of test files beside the ecosystems' own (tests/*, *_test.go, ...)",
    )  # fmt: skip
    timeout: Seconds | None = Field(None, description="seconds for the test run")

    @field_validator("fail_to_pass", "pass_to_pass", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _ids(value)
