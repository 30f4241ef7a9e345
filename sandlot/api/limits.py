"""Request guards applied before FastAPI sees a request.

BodyLimit caps the body while it streams in, so a huge body never sits in memory. JSONBodies
reads a POST body as JSON when the client did not say (plain `curl -d` sends a form type).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.message = f"request body is larger than the {max_bytes} bytes this server accepts"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await JSONResponse({"detail": self.message}, status_code=413)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                # FastAPI passes HTTPExceptions from body reading through as they are.
                raise HTTPException(413, self.message)
            return message

        await self.app(scope, counted, send)


class JSONBodies:
    FORM_TYPES = (b"", b"application/x-www-form-urlencoded", b"text/plain")

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
            given = dict(scope["headers"]).get(b"content-type", b"").split(b";")[0].strip()
            if given in self.FORM_TYPES:
                scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.app(scope, receive, send)
