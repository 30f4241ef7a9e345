"""The HTTP API: thin routes over the Service. Validation here, decisions in the layers below."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from sandlot import __version__
from sandlot.api import convert, errors
from sandlot.api.coder import router as coder_router
from sandlot.api.judge import judge_router
from sandlot.api.limits import BodyLimit, JSONBodies
from sandlot.api.models import ErrorBody, RunCodeRequest, RunCodeResponse
from sandlot.service import Service

ERRORS = {
    400: {"model": ErrorBody, "description": "bad input; the detail says what to change"},
    413: {"model": ErrorBody, "description": "code or files over the size limit"},
    503: {"model": ErrorBody, "description": "isolation unavailable: this server runs no code"},
    504: {"model": ErrorBody, "description": "overloaded: no slot in time; retry"},
}


MECHANISM = {
    "zygote": "namespaces built by a per-slot zygote + cgroups + seccomp",
    "bwrap": "bubblewrap + cgroups + seccomp",
}


def create_app(service: Service) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if service.jail is None and service.problem is None:
            service.start()
        yield
        service.close()

    app = FastAPI(
        title="sandlot",
        version=__version__,
        description="Runs untrusted code in isolated boxes; speaks SandboxFusion's API.",
        lifespan=lifespan,
    )
    errors.install(app)
    cfg = service.config
    app.add_middleware(JSONBodies)
    body_cap = cfg.max_code_bytes + cfg.max_files_bytes * 4 // 3 + (1 << 20)
    app.add_middleware(BodyLimit, max_bytes=body_cap)
    app.include_router(judge_router(service))
    app.include_router(coder_router(service))

    @app.post("/run_code", response_model=RunCodeResponse, responses=ERRORS)
    async def run_code(req: RunCodeRequest) -> RunCodeResponse:
        """Run code once, or against `test_cases`; SandboxFusion's contract plus extra fields."""
        executor = service.require_executor()
        code_req = convert.code_request(req)
        if req.test_cases is not None:
            return convert.test_response(
                await executor.run_tests(code_req, convert.test_cases(req))
            )
        return convert.response(await executor.execute(code_req))

    @app.get("/v1/ping")
    async def ping() -> str:
        return "pong"

    @app.get("/health")
    async def health() -> JSONResponse:
        """Whether isolation is ready, slot use, queue length and the usable languages."""
        h = service.health()
        body = {
            "status": "ok" if h.ready else "unavailable",
            "isolation": {
                "ready": h.ready,
                "problem": h.problem,
                "mechanism": MECHANISM[service.config.boxes],
                "cgroup_version": h.cgroup_version,
            },
            "slots": h.slots,
            "busy": h.busy,
            "queued": h.queued,
            "languages": [row["name"] for row in service.languages() if row["available"]],
        }
        return JSONResponse(body, status_code=200 if h.ready else 503)

    @app.get("/languages")
    async def languages() -> list[dict[str, object]]:
        """Every language this server knows, whether it can run it, and the toolchain version."""
        return service.languages()

    return app
