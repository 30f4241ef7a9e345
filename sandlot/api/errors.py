"""The only place that maps errors to HTTP statuses. Every error body is `{"detail": "..."}`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from sandlot.errors import InvalidRequest, JailUnavailable, Overloaded, SandlotError
from sandlot.wire.run import ErrorBody

log = logging.getLogger("sandlot.api")

_MEANING = {
    400: "bad input; the detail says what to change",
    403: "refused: this server does not do that (the detail says why)",
    404: "unknown dataset or problem id; lists what exists",
    413: "code or files over the size limit",
    503: "isolation unavailable: this server runs no code",
    504: "overloaded: no slot in time; retry",
}


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error answers of a route, for its OpenAPI entry."""
    return {code: {"model": ErrorBody, "description": _MEANING[code]} for code in codes}


def _status(exc: Exception) -> int:
    if isinstance(exc, InvalidRequest):
        return exc.status_code
    if isinstance(exc, Overloaded):
        return 504  # verl and the SandboxFusion client retry on it
    if isinstance(exc, JailUnavailable):
        return 503
    return 500


def _describe(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


def install(app: FastAPI) -> None:
    @app.exception_handler(SandlotError)
    async def sandlot_error(_: Request, exc: SandlotError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=_status(exc))

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own list stays under "errors" for clients that parse it.
        body = {"detail": _describe(exc), "errors": jsonable(exc.errors())}
        return JSONResponse(body, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")  # the traceback stays in the server log
        return JSONResponse({"detail": f"internal error: {type(exc).__name__}"}, status_code=500)


def jsonable(errors: object) -> object:
    from fastapi.encoders import jsonable_encoder

    return jsonable_encoder(
        errors, custom_encoder={Exception: str, bytes: lambda b: b.decode(errors="replace")}
    )
