"""How a route reaches the Service (`app.state.service`, set once by `create_app`) and the
tenant its request acts for (set by `auth.APIKeys`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from sandlot.service import Service
from sandlot.tenancy import Tenant, tenant_of


async def _service(request: Request) -> Service:
    return request.app.state.service


ServiceDep = Annotated[Service, Depends(_service)]


async def _tenant(request: Request) -> Tenant:
    return tenant_of(request.scope)


TenantDep = Annotated[Tenant, Depends(_tenant)]
