"""Constrained types of request fields, so that every number is finite and in range and the
OpenAPI schema says so (pydantic checks these; a violation is a 422 naming the field).

Some limits depend on the server's settings (the largest timeout, memory, code size, the
languages it knows): the executor checks those (a 400 that names the maximum) and the served
schema states them (`sandlot.api.schema`). File paths likewise: the executor refuses a path
that leaves the work dir (400), and the schema carries the pattern of a safe one.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    WrapValidator,
)
from pydantic.json_schema import JsonDict
from pydantic_core import PydanticCustomError

# One path component: anything without '/' or NUL except "." and "..".
_PART = r"(?:[^/.\x00][^/\x00]*|\.[^/.\x00][^/\x00]*|\.\.[^/\x00]+)"
PATH_PATTERN = rf"^{_PART}(?:/{_PART})*$"
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False, description="seconds, > 0")]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
# SandboxFusion's -1 means "the server's default"; anything else is MiB, at least 1; null or
# absent, the default too. One check with one message, where a union would report each of its
# branches' errors ("lots": "Input should be -1; ... unable to parse string as an integer").
MEMORY_MB = "a whole number of MiB, at least 1, or -1 for the server's default"


def _memory_mb(value: Any, as_int: ValidatorFunctionWrapHandler) -> int | None:
    if value is None:
        return None
    try:
        number = as_int(value)
    except ValidationError:
        number = 0
    if number != -1 and number < 1:
        raise PydanticCustomError("memory_mb", MEMORY_MB)
    return int(number)


MemoryMB = Annotated[
    int | None,
    WrapValidator(_memory_mb),
    WithJsonSchema({"anyOf": [{"type": "integer", "const": -1}, {"type": "integer", "minimum": 1},
                              {"type": "null"}], "description": MEMORY_MB}),
]  # fmt: skip
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
