"""Routes of `/run_jupyter` and of sessions. Parse, call the service, shape the reply.

An execution stops when its client goes away: a streamed one when its response can no longer
be sent, a plain one when the connection closes while it runs. The router's lifespan starts the
sessions (the pool fills in the background) and ends them all before the jail stops.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import StreamingResponse

from sandlot import convert, usecases
from sandlot.api import peers
from sandlot.api.deps import ServiceDep, TenantDep
from sandlot.api.disconnect import until_disconnected
from sandlot.api.errors import responses
from sandlot.convert import decode_files
from sandlot.service import Service
from sandlot.sessions import Execution, Result
from sandlot.tenancy import owner_of, tenant_of
from sandlot.wire import (
    ExecuteRequest,
    ExecuteResponse,
    FileWritten,
    ForkRequest,
    ForkResponse,
    Interrupted,
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    SessionCreate,
    SessionInfo,
    SnapshotDeleted,
    SnapshotInfo,
)

NDJSON = "application/x-ndjson"


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    service: Service = app.state.service
    await service.open_sessions()
    yield
    await service.close_sessions()


router = APIRouter(tags=["sessions"], lifespan=lifespan)
SESSION = responses(400, 404, 410, 503)
SNAPSHOT = responses(400, 404, 409, 410, 503, 507)


async def fold(execution: Execution, request: Request) -> Result:
    """An execution's events folded into one result, abandoned if the client goes away."""
    result = Result()

    async def collect() -> None:
        async for event in execution:
            result.add(event)

    collecting = asyncio.create_task(collect())
    watching = asyncio.create_task(until_disconnected(request))
    try:
        await asyncio.wait({collecting, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watching.cancel()
        if not collecting.done():
            execution.abandon()
            collecting.cancel()
    return result


async def lines(execution: Execution, session_id: str) -> AsyncIterator[str]:
    try:
        async for event in execution:
            if event["type"] == "end":
                event = {**event, "session_id": session_id}
            yield json.dumps(event) + "\n"
    finally:
        execution.abandon()  # the client went away (or it ended: then this does nothing)


@router.post(
    "/run_jupyter", response_model=RunJupyterResponse, responses=responses(400, 413, 503, 504)
)
async def run_jupyter(req: RunJupyterRequest, service: ServiceDep) -> RunJupyterResponse:
    """SandboxFusion's Jupyter mode: the cells in one fresh kernel, limits enforced."""
    run = await usecases.run_jupyter(
        service,
        req.cells,
        cell_timeout=req.cell_timeout or 0,
        total_timeout=45 if req.total_timeout is None else req.total_timeout,
        memory_mb=req.memory_limit_MB,
        files=decode_files(req.files),
        fetch=tuple(req.fetch_files or ()),
    )
    return convert.jupyter_response(run)


async def live_elsewhere(request: Request, service: Service) -> int:
    """The client's live sessions in the other workers, which its cap counts too (a paused
    one is not live)."""
    if not service.config.session_per_client:
        return 0
    listed = await peers.gather(request, "/sessions", forwarded=True)  # a fork's may be
    return sum(s.get("status") != "paused" for mine in listed for s in mine)


@router.post("/sessions", response_model=SessionInfo, responses=responses(400, 404, 409, 429, 503))
async def create(
    req: SessionCreate, request: Request, service: ServiceDep
) -> SessionInfo | Response:
    """A session: a box that keeps its kernel (or shell), files and processes; or, with
    `snapshot`, a new one with that snapshot's state. In the worker that got the request, or if
    its share of the sessions is taken, in another with room."""
    if usecases.sessions_full(service):
        answer = await peers.elsewhere(request, await request.body())
        if answer is not None:
            return answer
    session = await usecases.create_session(
        service,
        req.language,
        owner_of(request.scope),
        elsewhere=await live_elsewhere(request, service),
        idle_timeout=req.idle_timeout,
        lifetime=req.lifetime,
        memory_mb=req.memory_limit_MB,
        pause_after=req.pause_after,
        files=decode_files(req.files),
        snapshot=req.snapshot,
    )
    return convert.session_info(session)


@router.get("/sessions", response_model=list[SessionInfo], responses=responses(503))
async def list_sessions(request: Request, service: ServiceDep) -> list[SessionInfo]:
    """This client's live sessions, in every worker."""
    here = [
        convert.session_info(s) for s in usecases.list_sessions(service, owner_of(request.scope))
    ]
    there = [SessionInfo.model_validate(i) for part in await peers.gather(request, "/sessions")
             for i in part]  # fmt: skip
    return here + there


@router.get("/sessions/{session_id}", response_model=SessionInfo, responses=SESSION)
async def get(session_id: str, service: ServiceDep, tenant: TenantDep) -> SessionInfo:
    """The session as it is (a paused one stays paused)."""
    return convert.session_info(usecases.find_session(service, session_id, tenant))


@router.post("/sessions/{session_id}/execute", response_model=ExecuteResponse, responses=SESSION)
async def execute(
    session_id: str, req: ExecuteRequest, request: Request, service: ServiceDep, tenant: TenantDep
) -> Response:
    """Run code in the session; NDJSON lines as outputs come if asked (stream or Accept)."""
    execution = await usecases.execute_in_session(service, session_id, tenant, req.code,
                                                  req.timeout)  # fmt: skip
    if req.stream or NDJSON in request.headers.get("accept", ""):
        return StreamingResponse(lines(execution, session_id), media_type=NDJSON)
    result = await fold(execution, request)
    body = convert.execute_response(session_id, result).model_dump_json()
    return Response(body, media_type="application/json")


@router.post("/sessions/{session_id}/interrupt", response_model=Interrupted, responses=SESSION)
async def interrupt(session_id: str, service: ServiceDep, tenant: TenantDep) -> Interrupted:
    return Interrupted(interrupted=usecases.interrupt_session(service, session_id, tenant))


@router.post("/sessions/{session_id}/restart", response_model=SessionInfo, responses=SESSION)
async def restart(session_id: str, service: ServiceDep, tenant: TenantDep) -> SessionInfo:
    """A fresh kernel (or shell) in the same box: files stay, variables go."""
    return convert.session_info(await usecases.restart_session(service, session_id, tenant))


@router.delete("/sessions/{session_id}", response_model=SessionInfo, responses=SESSION)
async def delete(session_id: str, service: ServiceDep, tenant: TenantDep) -> SessionInfo:
    """End the session now: its box, processes and files are gone."""
    return convert.session_info(await usecases.delete_session(service, session_id, tenant))


@router.post("/sessions/{session_id}/snapshot", response_model=SnapshotInfo, responses=SNAPSHOT)
async def snapshot(session_id: str, service: ServiceDep, tenant: TenantDep) -> SnapshotInfo:
    """Freeze the session's state (files, and a kernel's variables or a shell's environment) as
    a snapshot of this API key's; the session goes on. Start sessions from it with POST
    /sessions {"snapshot": id}."""
    return convert.snapshot_info(await usecases.snapshot_session(service, session_id, tenant))


@router.post(
    "/sessions/{session_id}/fork",
    response_model=ForkResponse,
    responses=responses(400, 404, 409, 410, 429, 503, 507),
)
async def fork(
    session_id: str, req: ForkRequest, request: Request, service: ServiceDep, tenant: TenantDep
) -> ForkResponse:
    """`count` new sessions with this session's state, each in a box of its own (its own uid,
    limits and work dir); the session goes on."""
    children, state = await usecases.fork_session(
        service, session_id, tenant, req.count, elsewhere=await live_elsewhere(request, service),
        idle_timeout=req.idle_timeout,
        lifetime=req.lifetime, memory_mb=req.memory_limit_MB, pause_after=req.pause_after,
    )  # fmt: skip
    return convert.fork_response(session_id, children, state)


@router.get("/snapshots", response_model=list[SnapshotInfo], responses=responses(503))
async def list_snapshots(service: ServiceDep, tenant: TenantDep) -> list[SnapshotInfo]:
    """This API key's snapshots, oldest first."""
    return [convert.snapshot_info(s) for s in await usecases.list_snapshots(service, tenant)]


@router.get("/snapshots/{snapshot_id}", response_model=SnapshotInfo, responses=SESSION)
async def get_snapshot(snapshot_id: str, service: ServiceDep, tenant: TenantDep) -> SnapshotInfo:
    return convert.snapshot_info(await usecases.get_snapshot(service, snapshot_id, tenant))


@router.delete("/snapshots/{snapshot_id}", response_model=SnapshotDeleted, responses=SESSION)
async def delete_snapshot(
    snapshot_id: str, service: ServiceDep, tenant: TenantDep
) -> SnapshotDeleted:
    """Delete the snapshot; its layers go once no snapshot or session uses them."""
    await usecases.delete_snapshot(service, snapshot_id, tenant)
    return SnapshotDeleted(id=snapshot_id)


@router.put(
    "/sessions/{session_id}/files/{path:path}",
    response_model=FileWritten,
    responses=responses(400, 404, 410, 413, 503),
)
async def put_file(
    session_id: str, path: str, request: Request, service: ServiceDep, tenant: TenantDep
) -> FileWritten:
    """Write the request body to `path` in the session's work dir."""
    data = await request.body()
    await usecases.put_session_file(service, session_id, tenant, path, data)
    return FileWritten(path=path, size=len(data))


@router.get(
    "/sessions/{session_id}/files/{path:path}",
    response_class=Response,
    responses=responses(400, 404, 410, 413, 503),
)
async def get_file(session_id: str, path: str, service: ServiceDep, tenant: TenantDep) -> Response:
    """The bytes of `path` in the session's work dir."""
    data = await usecases.get_session_file(service, session_id, tenant, path)
    return Response(data, media_type="application/octet-stream")


async def run_code_in_session(
    service: Service, req: RunCodeRequest, request: Request
) -> RunCodeResponse | Response:
    """`/run_code` with a `session_id`: the code runs in that session, keeping its state;
    `files` are written to its work dir first and `fetch_files` read back after."""
    assert req.session_id is not None
    forwarded = await peers.forward_run(request, req.session_id)
    if forwarded is not None:
        return forwarded
    ran = await usecases.run_in_session(
        service, req.session_id, tenant_of(request.scope), req.language, req.code, stdin=req.stdin,
        test_cases=req.test_cases is not None, files=decode_files(req.files),
        fetch=tuple(req.fetch_files or ()), run_timeout=req.run_timeout or req.timeout,
    )  # fmt: skip
    out = convert.session_run_response(req.session_id, ran.result)
    if req.fetch_files:
        out.files = {k: base64.b64encode(v).decode() for k, v in ran.files.items()}
    return out
