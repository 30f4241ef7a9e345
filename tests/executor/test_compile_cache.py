"""The compile cache's single flight when a build's caller is cancelled (its client went away):
another caller waiting for the same build is not cancelled with it, but builds it itself."""

from __future__ import annotations

import asyncio

from sandlot.executor.cache import Build, CompileCache
from sandlot.jail import Outcome


def test_a_waiter_builds_itself_when_the_first_caller_is_cancelled() -> None:
    async def body() -> tuple[Build, bool]:
        cache = CompileCache(max_bytes=1 << 20)
        started = asyncio.Event()
        builds = 0

        async def build() -> Build:
            nonlocal builds
            builds += 1
            started.set()
            await asyncio.sleep(0 if builds > 1 else 3600)
            return Build(Outcome(exit_code=0), {"a.out": b"x"})

        first = asyncio.create_task(cache.get_or_build("k", build, lambda b: True))
        await started.wait()
        second = asyncio.create_task(cache.get_or_build("k", build, lambda b: True))
        await asyncio.sleep(0)
        first.cancel()
        result = await second
        assert first.cancelled() and builds == 2
        return result

    build, cached = asyncio.run(body())
    assert build.artifacts == {"a.out": b"x"} and cached is False


def test_control_a_waiter_that_is_itself_cancelled_is_cancelled() -> None:
    async def body() -> None:
        cache = CompileCache(max_bytes=1 << 20)
        started = asyncio.Event()

        async def build() -> Build:
            started.set()
            await asyncio.sleep(3600)
            raise AssertionError("never")

        first = asyncio.create_task(cache.get_or_build("k", build, lambda b: True))
        await started.wait()
        second = asyncio.create_task(cache.get_or_build("k", build, lambda b: True))
        await asyncio.sleep(0)
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        assert second.cancelled() and not first.done()
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)

    asyncio.run(body())
