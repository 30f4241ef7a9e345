"""No work for a client that has gone (ASGI middleware).

A request whose client closes its connection before the answer starts is cancelled where it is:
waiting for a slot, it leaves the line and never runs; running, its run ends as it would and
frees its slot then (see executor/runner.py). An RL trainer that gives up reading after its own
timeout (verl: compile + run timeout + 10 s) thus takes nothing more of the server's time, and
the requests still in line start sooner. The access log shows such a request as status 499
(nginx's "client closed request").

How: once the app has read the request's whole body, a watcher waits for the server's next
message, which uvicorn sends when the connection closes (`http.disconnect`; also once the answer
is complete, by which time it changes nothing). Anything the app reads after that gets the same
message.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ClientGone:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        if scope["type"] != "http" or task is None:
            await self.app(scope, receive, send)
            return
        answering = gone = False
        watcher: asyncio.Task[Message] | None = None

        async def watch() -> Message:
            nonlocal gone
            message = await receive()
            if message["type"] == "http.disconnect" and not answering:
                gone = True
                task.cancel()
            return message

        async def receive_then_watch() -> Message:
            nonlocal watcher
            if watcher is not None:
                return await asyncio.shield(watcher)
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                watcher = asyncio.create_task(watch())
            return message

        async def send_marking(message: Message) -> None:
            nonlocal answering
            answering = answering or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive_then_watch, send_marking)
        except asyncio.CancelledError:
            if not gone or task.uncancel() > 0:  # cancelled by someone else too (a shutdown)
                raise
        finally:
            if watcher is not None and not watcher.done():
                watcher.cancel()
