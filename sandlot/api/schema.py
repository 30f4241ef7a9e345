"""The served OpenAPI schema, completed with the limits that depend on this server's settings.

pydantic states what is fixed (finite numbers, positive timeouts, path and base64 patterns); the
largest timeouts, memory, code size and number of test cases, and the language names, are this
server's, checked by the executor (a 400 that names the maximum). They are written into the
schema here, so that what a client (or a fuzzer) reads is what the server enforces.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from sandlot.limits import MEMORY, RUN_LIMITS, RUN_TIMEOUT, SESSION_LIMITS, RequestLimit
from sandlot.service import Service
from sandlot.sessions import MIN_MEMORY_MB
from sandlot.usecases import language_names, session_language_names

Schema = dict[str, Any]
# The request models that carry the limits of a run under their own names.
RUN_REQUESTS = ("RunCodeRequest", "TestConfig", "BatchItem")


def install(app: FastAPI, service: Service) -> None:
    def openapi() -> Schema:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version,
                                 description=app.description, routes=app.routes)  # fmt: skip
            state_limits(schema["components"]["schemas"], service)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented hook


def state_limits(models: dict[str, Schema], service: Service) -> None:
    cfg = service.config

    def most(limit: RequestLimit) -> Schema:
        return {"maximum": getattr(cfg, limit.max_setting)}

    run = most(RUN_TIMEOUT)
    memory = {"minimum": MIN_MEMORY_MB, **most(MEMORY)}  # a kernel's own, and room
    limits: dict[str, dict[str, Schema]] = {  # model -> field -> what to add to its schema
        "RunCodeRequest": {
            "code": {"maxLength": cfg.max_code_bytes},
            "language": {"enum": language_names(service)},
            "timeout": run,
            "test_cases": {"maxItems": cfg.max_test_cases},
        },
        "TestConfig": {},
        "BatchItem": {
            "code": {"maxLength": cfg.max_code_bytes},
            "language": {"enum": language_names(service)},
            "test_cases": {"maxItems": cfg.max_batch_cases},  # all items together, in fact
            "asserts": {"maxItems": cfg.max_batch_cases},
        },
        "RunBatchRequest": {"items": {"maxItems": cfg.max_batch_items}},
        "RepoTestsRequest": {"timeout": run},
        "RunJupyterRequest": {"cell_timeout": run, "total_timeout": run, "memory_limit_MB": memory},
        "SessionCreate": {
            "language": {"enum": session_language_names(service)},
            **{limit.field: most(limit) for limit in SESSION_LIMITS},
            "memory_limit_MB": memory,
        },
        "ExecuteRequest": {"code": {"maxLength": cfg.max_code_bytes}, "timeout": run},
        "CodeRequest": {"test_timeout": run},
    }
    for model in RUN_REQUESTS:  # each takes every limit of a run, by its own name
        limits[model].update({limit.field: most(limit) for limit in RUN_LIMITS})
    for model, fields in limits.items():
        for name, extra in fields.items():
            _constrain(models[model]["properties"][name], extra)


def _constrain(field: Schema, extra: Schema) -> None:
    """Add `extra` to the branch of `field` it applies to: not null, not the constant -1."""
    branches = field.get("anyOf", [field])
    for branch in branches:
        if branch.get("type") not in (None, "null") and "const" not in branch:
            branch.update(extra)
