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

from sandlot.service import Service
from sandlot.sessions.manager import LANGUAGES as SESSION_LANGUAGES
from sandlot.sessions.manager import MIN_MEMORY_MB

Schema = dict[str, Any]


def install(app: FastAPI, service: Service) -> None:
    def openapi() -> Schema:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version,
                                 description=app.description, routes=app.routes)  # fmt: skip
            state_limits(schema["components"]["schemas"], service)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  (FastAPI's documented hook)


def state_limits(models: dict[str, Schema], service: Service) -> None:
    cfg = service.config
    run, build = cfg.max_run_timeout, cfg.max_compile_timeout
    memory = {"minimum": MIN_MEMORY_MB, "maximum": cfg.max_memory_mb}  # a kernel's own, and room
    limits = {  # model -> field -> what to add to its (non-null) schema
        "RunCodeRequest": {
            "code": {"maxLength": cfg.max_code_bytes},
            "language": {"enum": sorted(service.registry.names)},
            "compile_timeout": {"maximum": build},
            "run_timeout": {"maximum": run},
            "timeout": {"maximum": run},
            "memory_limit_MB": {"maximum": cfg.max_memory_mb},
            "test_cases": {"maxItems": cfg.max_test_cases},
        },
        "TestConfig": {
            "compile_timeout": {"maximum": build},
            "run_timeout": {"maximum": run},
            "memory_limit_MB": {"maximum": cfg.max_memory_mb},
        },
        "BatchItem": {
            "code": {"maxLength": cfg.max_code_bytes},
            "language": {"enum": sorted(service.registry.names)},
            "compile_timeout": {"maximum": build},
            "run_timeout": {"maximum": run},
            "memory_limit_MB": {"maximum": cfg.max_memory_mb},
            "test_cases": {"maxItems": cfg.max_batch_cases},  # all items together, in fact
            "asserts": {"maxItems": cfg.max_batch_cases},
        },
        "RunBatchRequest": {"items": {"maxItems": cfg.max_batch_items}},
        "RepoTestsRequest": {"timeout": {"maximum": run}},
        "RunJupyterRequest": {
            "cell_timeout": {"maximum": run},
            "total_timeout": {"maximum": run},
            "memory_limit_MB": memory,
        },
        "SessionCreate": {
            "language": {"enum": session_languages(service)},
            "idle_timeout": {"maximum": cfg.max_session_idle_timeout},
            "lifetime": {"maximum": cfg.max_session_lifetime},
            "memory_limit_MB": memory,
        },
        "ExecuteRequest": {"code": {"maxLength": cfg.max_code_bytes}, "timeout": {"maximum": run}},
        "CodeRequest": {"test_timeout": {"maximum": run}},
    }
    for model, fields in limits.items():
        for name, extra in fields.items():
            _constrain(models[model]["properties"][name], extra)


def session_languages(service: Service) -> list[str]:
    """The names (and aliases) of the languages a session can be."""
    return sorted(k for k, row in service.registry.names.items() if row in SESSION_LANGUAGES)


def _constrain(field: Schema, extra: Schema) -> None:
    """Add `extra` to the branch of `field` it applies to: not null, not the constant -1."""
    branches = field.get("anyOf", [field])
    for branch in branches:
        if branch.get("type") not in (None, "null") and "const" not in branch:
            branch.update(extra)
