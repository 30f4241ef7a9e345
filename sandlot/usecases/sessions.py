"""Code in a session's box (`/run_code` with a `session_id`, the MCP session tools), and a
notebook of cells in a fresh kernel (`/run_jupyter`).

The rules a session's run keeps are here: the code's size and its timeout within the server's
maximums, the session's own language, and no stdin or test cases (a session has none).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sandlot.errors import InvalidRequest, TooLarge

if TYPE_CHECKING:
    from sandlot.config import Config
    from sandlot.service import Service
    from sandlot.sessions import Execution, NotebookRun, Result
    from sandlot.tenancy import Tenant


def check_size(cfg: Config, *code: str) -> None:
    if sum(len(c.encode()) for c in code) > cfg.max_code_bytes:
        raise TooLarge(f"code is larger than the {cfg.max_code_bytes} bytes this server accepts")


def timeout(cfg: Config, value: float | None, what: str = "timeout") -> float:
    """`value` (the server's run_timeout when not given), refused above the server's maximum."""
    from sandlot.sessions import bounded

    return bounded(value or cfg.run_timeout, cfg.max_run_timeout, what)


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
    check_size(cfg, code)
    session = await service.require_sessions().use(session_id, tenant)
    return await session.execute(code, timeout(cfg, run_timeout))


async def run_in_session(
    service: Service, session_id: str, tenant: Tenant, language: str, code: str, *,
    stdin: str | None = None, test_cases: bool = False, files: dict[str, bytes] | None = None,
    fetch: tuple[str, ...] = (), run_timeout: float | None = None,
) -> SessionRun:  # fmt: skip
    """`code` run in the session, keeping its state; `files` are written to its work dir first
    and `fetch` read back after."""
    session = await service.require_sessions().use(session_id, tenant)
    name = service.registry.get(language).name
    if name != session.language:
        raise InvalidRequest(f"session {session_id} runs {session.language}, not {name}")
    if stdin or test_cases:
        raise InvalidRequest("stdin and test_cases do not go with session_id: a session has none")
    cfg = service.config
    check_size(cfg, code)
    limit = timeout(cfg, run_timeout, "run_timeout")
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

    check_size(service.config, *cells)
    sessions = service.require_sessions()
    async with service.require_executor().admission.slot():
        return await run_notebook(
            sessions, cells, cell_timeout=cell_timeout, total_timeout=total_timeout,
            memory_mb=memory_mb, files=files, fetch=fetch,
            fetch_budget=service.jail.config.fetch_budget if service.jail else 0,
        )  # fmt: skip
