"""SandboxFusion's `/run_jupyter`: the cells of one request, one after another, in one fresh
kernel that ends with the request.

Unlike SandboxFusion, the limits hold: a cell over `cell_timeout` is interrupted (and reported)
and the next cell runs; past `total_timeout` no further cell starts; the kernel's box has the
request's memory limit, no network, and nothing another request left.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field

from sandlot.sessions.events import Result, size
from sandlot.sessions.manager import SessionManager, bounded


@dataclass(slots=True)
class NotebookRun:
    cells: list[Result] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    timed_out: bool = False  # total_timeout ended the run
    execution_time: float = 0.0


async def run_notebook(
    manager: SessionManager,
    cells: list[str],
    *,
    cell_timeout: float,
    total_timeout: float,
    memory_mb: int | None,
    files: dict[str, bytes],
    fetch: tuple[str, ...],
    fetch_budget: int,
) -> NotebookRun:
    most = manager.config.max_run_timeout
    total_timeout = bounded(total_timeout, most, "total_timeout")
    if cell_timeout:  # 0: no limit of its own (SandboxFusion's default)
        cell_timeout = bounded(cell_timeout, most, "cell_timeout")
    session = await manager.fresh_python(memory_mb, files)
    run = NotebookRun()
    started = time.monotonic()
    output = manager.config.output_bytes  # for all the cells: one reply holds them all
    try:
        for code in cells:
            left = total_timeout - (time.monotonic() - started)
            if left <= 0:
                run.timed_out = True
                break
            limit = min(cell_timeout or math.inf, left)
            result = await session.run(code, limit, max(output, 1))
            output -= sum(size(o) for o in result.outputs)
            run.cells.append(result)
            if result.session_ended:
                break
            if result.limit == "time" and limit == left:
                run.timed_out = True
                break
        run.execution_time = time.monotonic() - started
        session.box.kill()  # nothing of the box runs while its files are read back
        if fetch:
            run.files = await asyncio.to_thread(session.box.read_back, fetch, fetch_budget)
    finally:
        manager.retire(session, "the notebook ended")  # its box goes while the reply is sent
    return run
