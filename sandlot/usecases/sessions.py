"""Sessions and their snapshots (`/sessions`, `/snapshots`, the MCP session tools), code in a
session's box (`/run_code` with a `session_id`), and a notebook of cells in a fresh kernel
(`/run_jupyter`).

The rules a session's run keeps are here: the code's size and its timeout within the server's
maximums, the session's own language, and no stdin or test cases (a session has none). Each
call refuses with 503 when this server has no sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandlot.errors import InvalidRequest, NotFound, TooLarge

if TYPE_CHECKING:
    from sandlot.config import Config
    from sandlot.service import Service
    from sandlot.sessions import Execution, NotebookRun, Paused, Result, Session, Snapshot
    from sandlot.tenancy import Owner, Tenant


def check_code_size(cfg: Config, *code: str) -> None:
    if sum(len(c.encode()) for c in code) > cfg.max_code_bytes:
        raise TooLarge(f"code is larger than the {cfg.max_code_bytes} bytes this server accepts")


def bounded_timeout(cfg: Config, value: float | None, what: str = "timeout") -> float:
    """`value` (the server's run_timeout when not given), refused above the server's maximum."""
    from sandlot.sessions import bounded

    return bounded(value or cfg.run_timeout, cfg.max_run_timeout, what)


def sessions_full(service: Service) -> bool:
    """Whether this worker's share of the sessions is taken (another worker may have room)."""
    return service.require_sessions().full()


async def create_session(
    service: Service, language: str | None, owner: Owner, *, elsewhere: int = 0,
    idle_timeout: float | None = None, lifetime: float | None = None,
    memory_mb: int | None = None, pause_after: float | None = None,
    files: dict[str, bytes] | None = None, snapshot: str | None = None,
) -> Session:  # fmt: skip
    """A session for `owner` (or, with `snapshot`, one with that snapshot's state); `elsewhere`
    is how many the owner holds in other workers, for the per-client cap."""
    return await service.require_sessions().create(
        language, owner, elsewhere=elsewhere, idle_timeout=idle_timeout, lifetime=lifetime,
        memory_mb=memory_mb, pause_after=pause_after, files=files, snapshot=snapshot,
    )  # fmt: skip


def list_sessions(service: Service, owner: Owner) -> list[Session | Paused]:
    """The owner's live sessions in this worker."""
    return service.require_sessions().list(owner)


def find_session(service: Service, session_id: str, tenant: Tenant) -> Session | Paused:
    """The session as it is (a paused one stays paused); to another tenant it does not exist."""
    return service.require_sessions().find(session_id, tenant)


async def use_session(service: Service, session_id: str, tenant: Tenant) -> Session:
    """The session, resumed if it was paused."""
    return await service.require_sessions().use(session_id, tenant)


async def conversation_kernel(
    service: Service, kernels: dict[tuple[str, str], str], owner: Owner, conversation: str
) -> Session:
    """The Python session of the owner's conversation (resumed if it was paused), or a new one.
    `kernels` maps (tenant, conversation) to a session id; the ended ones leave it."""
    manager = service.require_sessions()
    for key, sid in list(kernels.items()):
        if manager.owner_of(sid) is None:
            del kernels[key]
    key = (str(owner.tenant), conversation)
    if key in kernels:
        with contextlib.suppress(NotFound):
            return await manager.use(kernels[key], owner.tenant)
    session = await manager.create("python", owner)
    kernels[key] = session.id
    return session


def interrupt_session(service: Service, session_id: str, tenant: Tenant) -> bool:
    """Interrupt what the session runs; whether there was something to interrupt."""
    from sandlot.sessions import Paused

    found = find_session(service, session_id, tenant)
    return not isinstance(found, Paused) and found.interrupt()


async def restart_session(service: Service, session_id: str, tenant: Tenant) -> Session:
    """A fresh kernel (or shell) in the same box: files stay, variables go."""
    session = await use_session(service, session_id, tenant)
    await session.restart()
    return session


async def delete_session(service: Service, session_id: str, tenant: Tenant) -> Session | Paused:
    """The session ended now: its box, processes and files are gone."""
    return await service.require_sessions().delete(session_id, tenant)


async def end_session(service: Service, session_id: str) -> None:
    """End the session whoever's it is, if it is still there: the MCP connection that opened it
    is gone. Nothing when this server has no sessions."""
    sessions = service.sessions
    owner = sessions.owner_of(session_id) if sessions is not None else None
    if sessions is not None and owner is not None:
        await sessions.delete(session_id, owner.tenant)


async def snapshot_session(service: Service, session_id: str, tenant: Tenant) -> Snapshot:
    """The session's state frozen as a snapshot of the tenant's; the session goes on."""
    return await service.require_sessions().snapshot(session_id, tenant)


async def fork_session(
    service: Service, session_id: str, tenant: Tenant, count: int, *, elsewhere: int = 0,
    idle_timeout: float | None = None, lifetime: float | None = None,
    memory_mb: int | None = None, pause_after: float | None = None,
) -> tuple[list[Session], dict[str, Any]]:  # fmt: skip
    """`count` new sessions with the session's state, each in a box of its own; `elsewhere`:
    the client's live sessions in other workers, which its cap counts too."""
    return await service.require_sessions().fork(
        session_id, tenant, count, elsewhere=elsewhere, idle_timeout=idle_timeout,
        lifetime=lifetime, memory_mb=memory_mb, pause_after=pause_after,
    )  # fmt: skip


async def list_snapshots(service: Service, tenant: Tenant) -> list[Snapshot]:
    """The tenant's snapshots, oldest first."""
    store = service.require_sessions().require_forks().store
    return await asyncio.to_thread(store.list, tenant)


async def get_snapshot(service: Service, snapshot_id: str, tenant: Tenant) -> Snapshot:
    store = service.require_sessions().require_forks().store
    return await asyncio.to_thread(store.get, snapshot_id, tenant)


async def delete_snapshot(service: Service, snapshot_id: str, tenant: Tenant) -> None:
    """The snapshot deleted; its layers go once no snapshot or session uses them."""
    forks = service.require_sessions().require_forks()
    await forks.delete(await asyncio.to_thread(forks.store.get, snapshot_id, tenant))


async def put_session_file(
    service: Service, session_id: str, tenant: Tenant, path: str, data: bytes
) -> None:
    """`data` written to `path` in the session's work dir, within the server's file size."""
    session = await use_session(service, session_id, tenant)
    cap = service.config.max_files_bytes
    if len(data) > cap:
        raise TooLarge(f"a file may be at most {cap} bytes")
    await asyncio.to_thread(session.box.put_file, path, data)


async def get_session_file(service: Service, session_id: str, tenant: Tenant, path: str) -> bytes:
    """The bytes of `path` in the session's work dir, refused above the server's file size."""
    session = await use_session(service, session_id, tenant)
    return await asyncio.to_thread(session.box.get_file, path, service.config.max_files_bytes)


@dataclass(slots=True)
class SessionRun:
    """What a run in a session gave: its result and the files read back after it."""

    result: Result
    files: dict[str, bytes] = field(default_factory=dict)


async def execute_in_session(
    service: Service, session_id: str, tenant: Tenant, code: str, run_timeout: float | None
) -> Execution:
    """`code` started in the session; its events (outputs as they come, then its end) stream
    from the execution returned."""
    cfg = service.config
    check_code_size(cfg, code)
    session = await use_session(service, session_id, tenant)
    return await session.execute(code, bounded_timeout(cfg, run_timeout))


async def run_in_session(
    service: Service, session_id: str, tenant: Tenant, language: str, code: str, *,
    stdin: str | None = None, test_cases: bool = False, files: dict[str, bytes] | None = None,
    fetch: tuple[str, ...] = (), run_timeout: float | None = None,
) -> SessionRun:  # fmt: skip
    """`code` run in the session, keeping its state; `files` are written to its work dir first
    and `fetch` read back after."""
    session = await use_session(service, session_id, tenant)
    name = service.registry.get(language).name
    if name != session.language:
        raise InvalidRequest(f"session {session_id} runs {session.language}, not {name}")
    if stdin or test_cases:
        raise InvalidRequest("stdin and test_cases do not go with session_id: a session has none")
    cfg = service.config
    check_code_size(cfg, code)
    limit = bounded_timeout(cfg, run_timeout, "run_timeout")
    for path, data in (files or {}).items():
        await asyncio.to_thread(session.box.put_file, path, data)
    out = SessionRun(await session.run(code, limit))
    if fetch:
        budget = service.jail.config.fetch_budget if service.jail else 0
        out.files = await asyncio.to_thread(session.box.read_back, fetch, budget)
    return out


async def run_jupyter(
    service: Service, cells: list[str], *, cell_timeout: float, total_timeout: float,
    memory_mb: int | None, files: dict[str, bytes], fetch: tuple[str, ...],
) -> NotebookRun:  # fmt: skip
    """The cells in one fresh kernel. A notebook holds a slot like any run: notebooks queue
    with runs, and 504 alike."""
    from sandlot.sessions import run_notebook

    check_code_size(service.config, *cells)
    sessions = service.require_sessions()
    async with service.require_executor().admission.slot():
        return await run_notebook(
            sessions, cells, cell_timeout=cell_timeout, total_timeout=total_timeout,
            memory_mb=memory_mb, files=files, fetch=fetch,
            fetch_budget=service.jail.config.fetch_budget if service.jail else 0,
        )  # fmt: skip
