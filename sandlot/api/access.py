"""Request IDs, the access log and the HTTP metrics (ASGI middleware, outermost).

Every request gets an ID: the client's `X-Request-ID` when it is a plain token (letters,
digits, `-_.:`, at most 128), else a fresh one. The ID is echoed in the response, set on the
request's `events.RequestRecord` (so every log line written while serving it carries it,
see `logs.py`), and ends the request in one access-log line: endpoint, status, what ran
(language, verdict, limit, queue wait, run time), bytes in and out, the client's address and
the tenant (the id its API key names: never the key).

The endpoint is the route's template (`/sessions/{session_id}/execute`), never the raw path,
so that a scan of random paths cannot grow the metrics without bound; a request a middleware
answered before routing (a 401, a session request forwarded to the worker that holds it) is
put under the route it was for, and a path no route takes under `unmatched`. The raw path
(cut at PATH_CHARS) is in the log line alone.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Sequence

from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandlot import events, telemetry
from sandlot.tenancy import TENANT

log = logging.getLogger("sandlot.access")
HEADER = b"x-request-id"
_TOKEN = re.compile(rb"[A-Za-z0-9._:-]{1,128}")
UNMATCHED = "unmatched"
CLIENT_GONE = 499  # no answer: the client left first (nginx's "client closed request")
PATH_CHARS = 512


def endpoint_of(scope: Scope, routes: Sequence[BaseRoute]) -> str:
    """The template of the route that served the request, or would have: a middleware that
    answered first left none in the scope."""
    route = scope.get("route")
    if route is not None:
        return getattr(route, "path", UNMATCHED)
    for candidate in routes:
        match, _ = candidate.matches(scope)
        if match is not Match.NONE:  # PARTIAL: the path, with another method (a 405)
            return getattr(candidate, "path", UNMATCHED)
    return UNMATCHED


def request_id(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == HEADER and _TOKEN.fullmatch(value):
            return value.decode()
    return secrets.token_hex(8)


class Access:
    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute] = ()) -> None:
        self.app = app
        self.routes = routes  # what a request answered before routing is matched against

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        headers = scope["headers"]
        record = events.RequestRecord(request_id(headers))
        token = events.CURRENT.set(record)
        echo = (HEADER, record.id.encode())
        status: int | None = None
        sent, failed = 0, True

        async def send_with_id(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), echo]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
            failed = False
        finally:
            if status is None:  # nothing was answered: an error, or the client left
                status = 500 if failed else CLIENT_GONE
            events.CURRENT.reset(token)
            endpoint = endpoint_of(scope, self.routes)
            seconds = time.monotonic() - started
            telemetry.answered(endpoint, status, seconds)
            received = dict(headers).get(b"content-length", b"0")
            client, tenant = scope.get("client"), scope.get(TENANT)
            log.info(
                "%s %s %d", scope["method"], endpoint, status,
                extra={"request_id": record.id, "access": {
                    "method": scope["method"],
                    "endpoint": endpoint,
                    "path": scope["path"][:PATH_CHARS],
                    "status": status,
                    "language": record.language,
                    "verdict": record.verdict,
                    "limit": record.limit,
                    "runs": record.runs,
                    "queue_ms": round(record.queue_seconds * 1000, 3),
                    "run_ms": round(record.run_seconds * 1000, 3),
                    "duration_ms": round(seconds * 1000, 3),
                    "bytes_in": int(received) if received.isdigit() else None,
                    "bytes_out": sent,
                    "client": client[0] if client else None,
                    "tenant": str(tenant) if tenant is not None else None,
                }},
            )  # fmt: skip
