"""A request whose client goes away is abandoned: the work it started is cancelled (its boxes
killed, their slots back in the line), not finished for nobody.

Once the body has been read, the next ASGI message is `http.disconnect`: when the client closes
its connection, or once the response is complete (by then nothing is left to cancel).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from fastapi import Request, Response

from sandlot.api.errors import CLIENT_GONE

T = TypeVar("T")


async def until_disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_gone(request: Request, work: Awaitable[T]) -> T | Response:
    """`work`'s result; or, when the client goes away first, `work` cancelled and an answer
    for the access log only (nobody is there to read it)."""
    task = asyncio.current_task()
    assert task is not None
    working = True

    def gone(watch: asyncio.Task[None]) -> None:
        if working and not watch.cancelled():
            task.cancel()

    watching = asyncio.create_task(until_disconnected(request))
    watching.add_done_callback(gone)
    try:
        return await work
    except asyncio.CancelledError:
        if watching.done() and not watching.cancelled() and task.uncancel() == 0:
            return Response(status_code=CLIENT_GONE)
        raise
    finally:
        working = False
        watching.cancel()
