"""The HTTP app: the Service, its routers, error handlers and request guards, put together.

Routes live in `run.py`, `batch.py`, `status.py`, `judge.py`, `coder.py`, `sessions.py` and
`playground.py` (the web pages); they reach the Service through `deps.ServiceDep`. Validation
there, decisions in the layers below. Request IDs, the access log and metrics (`access.py`) and
API keys and the tenant they name (`auth.py`) and dropping the requests whose client has gone
(`gone.py`) are middleware.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from sandlot import __version__
from sandlot.api import (
    batch,
    coder,
    errors,
    judge,
    playground,
    repos,
    run,
    schema,
    sessions,
    status,
)
from sandlot.api.access import Access
from sandlot.api.auth import APIKeys
from sandlot.api.gone import ClientGone
from sandlot.api.head import HeadAsGet
from sandlot.api.limits import BodyLimit, HostCheck, JSONOnly
from sandlot.api.peers import PeerClient, Peers, SessionRoutes
from sandlot.service import Service


def create_app(service: Service, peers: Peers | None = None) -> FastAPI:
    """`peers`: the other worker processes of this server, if it has more than one."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if not service.started:
            service.start()
        yield
        if peers is not None:
            await peers.close()
        service.close()

    app = FastAPI(
        title="sandlot",
        version=__version__,
        description="Runs untrusted code in isolated boxes; speaks SandboxFusion's API.",
        lifespan=lifespan,
        # FastAPI's pages load Swagger UI and ReDoc from a CDN: /docs is the playground's.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.service = service
    errors.install(app)
    schema.install(app, service)
    app.state.peers = peers
    cfg = service.config
    if peers is not None:  # innermost: a request is checked here before it goes to its owner
        app.add_middleware(SessionRoutes, peers=peers)
    app.add_middleware(JSONOnly)
    body_cap = cfg.max_code_bytes + cfg.max_files_bytes * 4 // 3 + (1 << 20)
    app.add_middleware(BodyLimit, max_bytes=body_cap)
    app.add_middleware(APIKeys, keys=cfg.keys(), metrics_open=cfg.metrics_open)  # and tenants
    names = frozenset([cfg.host, *cfg.allowed_hosts.split(",")])
    app.add_middleware(HostCheck, names=names)  # a foreign Host gets nothing
    app.add_middleware(HeadAsGet)  # every GET route answers HEAD
    app.add_middleware(ClientGone)  # a request whose client left is cancelled where it is
    routers = (run, batch, status, judge, coder, repos, sessions, playground)
    routes = [route for module in routers for route in module.router.routes]
    app.add_middleware(Access, routes=routes)  # every answer, refusals too: an ID, a log line
    if peers is not None:  # outermost: whose request another worker forwarded
        app.add_middleware(PeerClient, peers=peers)
    from sandlot.mcp import install  # the MCP SDK is imported only by a server

    install(app, service, body_cap)  # first: FastAPI tries the routes in order, per request
    for module in routers:
        app.include_router(module.router)
    return app
