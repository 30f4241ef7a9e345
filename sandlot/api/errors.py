"""The only place that maps errors to HTTP statuses. Every error body is `{"detail": "..."}`."""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from sandlot import events
from sandlot.errors import (
    GitUnavailable,
    InvalidRequest,
    JailUnavailable,
    Overloaded,
    SandlotError,
    Unauthorized,
)
from sandlot.wire import ErrorBody

log = logging.getLogger("sandlot.api")

_MEANING = {
    400: "bad input; the detail says what to change",
    401: "this server asks for an API key (Authorization: Bearer KEY or X-Auth-Token: KEY)",
    403: "refused: this server does not do that (the detail says why)",
    415: "the body is not declared JSON (Content-Type: application/json)",
    404: "unknown dataset, problem, session or snapshot id; says what exists",
    409: "not now: the session's state stops it (the detail says what to do)",
    410: "the session has ended; the detail says why",
    413: "code or files over the size limit",
    429: "too many live sessions; retry after the Retry-After header's seconds",
    503: "unavailable here: isolation, git or a server setting is not set up (the detail, and "
    "GET /health, say why)",
    504: "overloaded: no slot in time; retry",
    507: "a snapshot or fork over the API key's quota (or a snapshot over the disk's room); "
    "nothing was written",
}


# nginx's "client closed request": the client went away before its answer (api/disconnect.py)
CLIENT_GONE = 499


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error answers of a route, for its OpenAPI entry."""
    return {code: {"model": ErrorBody, "description": _MEANING[code]} for code in codes}


def status_of(exc: Exception) -> int:
    if isinstance(exc, InvalidRequest):
        return exc.status_code
    if isinstance(exc, Overloaded):
        return 504  # verl and the SandboxFusion client retry on it
    if isinstance(exc, (JailUnavailable, GitUnavailable)):
        return 503
    return 500


MAX_ERRORS = 20  # a body of a million bad items gets twenty lines back, and a count
ECHO_CHARS = 200


def _echo(value: object) -> object:
    """What of a bad input is echoed back: a scalar, strings cut short; never a container (it
    may be huge, or 5000 deep) nor a number JSON cannot carry (NaN, ±Infinity, 10**5000)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**18 else f"<int of {len(str(abs(value)))} digits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value if len(value) <= ECHO_CHARS else value[:ECHO_CHARS] + "..."
    if isinstance(value, Exception):
        return _echo(str(value))
    return f"<{type(value).__name__}>"


def _errors(exc: RequestValidationError) -> list[dict[str, object]]:
    out = []
    for err in exc.errors()[:MAX_ERRORS]:
        item = {k: v for k, v in err.items() if k not in ("input", "ctx", "loc")}
        item["loc"] = [_echo(part) for part in err.get("loc", ())]
        if "input" in err:
            item["input"] = _echo(err["input"])
        if "ctx" in err:
            item["ctx"] = {k: _echo(v) for k, v in err["ctx"].items()}
        out.append(item)
    return out


def _not_json(exc: RequestValidationError) -> str | None:
    """Why the body is not JSON and where, by line and column, if that is the trouble."""
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            doc, at = exc.body, err["loc"][-1]
            if not isinstance(doc, str) or not isinstance(at, int):
                return "the body is not valid JSON"
            line = doc.count("\n", 0, at) + 1
            column = at - (doc.rfind("\n", 0, at) + 1) + 1
            why = err.get("ctx", {}).get("error", "invalid")
            return f"the body is not valid JSON: {why}, at line {line}, column {column}"
    return None


def _describe(exc: RequestValidationError, errors: list[dict[str, object]]) -> str:
    not_json = _not_json(exc)
    if not_json is not None:
        return not_json
    parts = []
    for err in errors:
        where = ".".join(str(p) for p in err["loc"] if p != "body") or "body"  # type: ignore[attr-defined]
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")  # a validator's own
        parts.append(f"{where}: {msg}")
    more = len(exc.errors()) - len(errors)
    return "invalid request: " + "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def error_response(exc: SandlotError) -> JSONResponse:
    """The one error body, `{"detail": ...}`, with the status of the error's kind (and when to
    retry, if it says)."""
    events.error(type(exc).__name__)
    headers: dict[str, str] = {}
    retry = getattr(exc, "retry_after", None)
    if retry is not None:
        headers["Retry-After"] = str(retry)
    if isinstance(exc, Unauthorized):  # RFC 9110: a 401 names the scheme it wants
        headers["WWW-Authenticate"] = 'Bearer realm="sandlot"'
    return JSONResponse({"detail": str(exc)}, status_code=status_of(exc), headers=headers or None)


def install(app: FastAPI) -> None:
    @app.exception_handler(SandlotError)
    async def sandlot_error(_: Request, exc: SandlotError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own list stays under "errors" for clients that parse it, inputs cut short.
        errors = _errors(exc)
        events.error("RequestValidationError")
        return JSONResponse({"detail": _describe(exc, errors), "errors": errors}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Starlette's own answers (no such route, a method it does not take), in words."""
        path = request.url.path
        detail = exc.detail
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "another method")
            body = " (with a JSON body)" if "POST" in allowed else ""
            detail = f"{path} takes {allowed}{body}, not {request.method}"
        elif exc.status_code == 404 and detail == "Not Found":
            detail = f"no endpoint {path} here; GET /openapi.json lists them"
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")  # the traceback stays in the server log
        events.error("internal")
        return JSONResponse({"detail": f"internal error: {type(exc).__name__}"}, status_code=500)
