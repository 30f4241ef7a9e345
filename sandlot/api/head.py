"""HEAD is GET without its body (RFC 9110 §9.3.2): every GET route answers HEAD (ASGI middleware).

FastAPI routes a HEAD only where a route declares it, so a load balancer's or a link checker's
HEAD of a page, `/health` or `/v1/ping` got 405. Here a HEAD is served as the GET it stands for,
with the same status and headers, and its body left out.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
