"""Constrained types of request fields, so that every number is finite and in range and the
OpenAPI schema says so (pydantic checks these; a violation is a 422 naming the field).

Some limits depend on the server's settings (the largest timeout, memory, code size, the
languages it knows): the executor checks those (a 400 that names the maximum) and the served
schema states them (`sandlot.api.schema`). File paths likewise: the executor refuses a path
that leaves the work dir (400), and the schema carries the pattern of a safe one.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic.json_schema import JsonDict

# One path component: anything without '/' or NUL except "." and "..".
_PART = r"(?:[^/.\x00][^/\x00]*|\.[^/.\x00][^/\x00]*|\.\.[^/\x00]+)"
PATH_PATTERN = rf"^{_PART}(?:/{_PART})*$"
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False, description="seconds, > 0")]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
# SandboxFusion's -1 means "the server's default"; anything else is MiB, at least 1.
MemoryMB = Literal[-1] | Positive
_PATH_SCHEMA: JsonDict = {"minLength": 1, "pattern": PATH_PATTERN}
RelPath = Annotated[
    str,
    Field(min_length=1, json_schema_extra=_PATH_SCHEMA,
          description="a path relative to the work dir, without '..'"),
]  # fmt: skip
Base64 = Annotated[str, Field(json_schema_extra={"pattern": BASE64_PATTERN})]
_Key = Annotated[str, Field(min_length=1)]
_KEYS = Field(json_schema_extra={"propertyNames": _PATH_SCHEMA})
Files = Annotated[dict[_Key, Base64], _KEYS]  # path -> base64 content
NullableFiles = Annotated[dict[_Key, Base64 | None], _KEYS]  # null entries are skipped
# A string with something in it besides white space (the server says "empty" otherwise).
NonBlank = Annotated[str, Field(json_schema_extra={"pattern": r"\S"})]


def one_of_required(*groups: tuple[str, ...]) -> JsonDict:
    """JSON schema: at least one of `groups` is given in full, with no null in it (what a
    model validator checks, stated for the schema's readers)."""
    return {
        "anyOf": [
            {"required": list(g), "properties": {f: {"not": {"type": "null"}} for f in g}}
            for g in groups
        ]
    }
