"""Progress notifications for a long tool call: the steps it reports, and a heartbeat between
them, so that a client (and its user) sees a test run or an Aider task is alive. A client that
asked for none (no progress token) gets none: the SDK drops them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

from mcp.server.mcpserver import Context

EVERY = 5.0  # seconds between heartbeats while no step is reported
# The tools that report progress while they run (a session's cell, a repository's tests, Aider):
# over HTTP their answers stay a stream, whose heartbeats keep a proxy from cutting a long wait.
STREAMED = frozenset({"session_run", "repo_test", "code", "repo_grade"})


@contextlib.asynccontextmanager
async def reporting(
    ctx: Context, what: str, every: float = EVERY
) -> AsyncIterator[Callable[[str], None]]:
    """While the body runs, a step told to the function yielded (from any thread) is sent as a
    progress message, and `what` with the seconds elapsed every `every` s of silence."""
    loop = asyncio.get_running_loop()
    steps: asyncio.Queue[str] = asyncio.Queue()
    started = time.monotonic()

    async def report() -> None:
        count = 0
        while True:
            try:
                message = await asyncio.wait_for(steps.get(), every)
            except TimeoutError:
                message = f"{what}: {time.monotonic() - started:.0f} s"
            count += 1
            await ctx.report_progress(count, None, message)

    def step(message: str) -> None:
        loop.call_soon_threadsafe(steps.put_nowait, message)

    reporter = asyncio.create_task(report())
    try:
        await ctx.report_progress(0, None, f"{what}: started")
        yield step
    finally:
        reporter.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reporter
