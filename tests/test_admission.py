"""Admission's turns, queue bound and time-outs, driven directly (no jail needed)."""

from __future__ import annotations

import asyncio

import pytest

from sandlot.errors import Overloaded
from sandlot.executor.admission import Admission


async def _hold(adm: Admission, lane, name: str, order: list[str], gate: asyncio.Event) -> None:
    async with adm.slot(lane):
        order.append(name)
        await gate.wait()


def test_lanes_take_turns_and_single_runs_stay_fifo() -> None:
    async def main() -> list[str]:
        adm = Admission(slots=1, queue_size=10, queue_timeout=5)
        order: list[str] = []
        gate = asyncio.Event()
        gate.set()
        async with adm.slot():  # hold the only slot while everyone lines up
            big = adm.lane()
            tasks = [asyncio.create_task(_hold(adm, big, f"big{n}", order, gate))
                     for n in range(4)]  # fmt: skip
            await asyncio.sleep(0)
            tasks += [asyncio.create_task(_hold(adm, None, f"s{n}", order, gate))
                      for n in range(2)]  # fmt: skip
            await asyncio.sleep(0)
            assert adm.waiting == 3 and adm.waiting_runs == 6  # the batch counts once
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(main()) == ["big0", "s0", "s1", "big1", "big2", "big3"]


def test_the_line_bounds_requests_not_runs() -> None:
    async def main() -> None:
        adm = Admission(slots=1, queue_size=1, queue_timeout=5)
        gate = asyncio.Event()
        async with adm.slot():
            lane = adm.lane()
            waiting = [asyncio.create_task(_hold(adm, lane, "b", [], gate)) for _ in range(50)]
            await asyncio.sleep(0)
            with pytest.raises(Overloaded, match="1 requests wait"):
                async with adm.slot():
                    pass
            with pytest.raises(Overloaded):
                adm.lane()
            gate.set()
        await asyncio.gather(*waiting)
        assert adm.busy == 0 and adm.waiting == 0

    asyncio.run(main())


def test_a_waiter_that_times_out_or_is_cancelled_leaves_no_trace() -> None:
    async def main() -> None:
        adm = Admission(slots=1, queue_size=10, queue_timeout=0.05)
        async with adm.slot():
            with pytest.raises(Overloaded, match=r"within 0\.05s"):
                async with adm.slot():
                    pass
            task = asyncio.create_task(_hold(adm, None, "x", [], asyncio.Event()))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert adm.waiting == 0
        assert adm.busy == 0
        async with adm.slot():  # the slot went back
            assert adm.busy == 1

    asyncio.run(main())
