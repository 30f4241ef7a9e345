"""How a route reaches the Service: `app.state.service`, set once by `create_app`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from sandlot.service import Service


async def _service(request: Request) -> Service:
    return request.app.state.service


ServiceDep = Annotated[Service, Depends(_service)]
