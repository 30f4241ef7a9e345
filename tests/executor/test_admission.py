"""Admission's turns, queue bound and time-outs, driven directly (no jail needed)."""

from __future__ import annotations

import asyncio
import math

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


class Clock:
    """Admission's clock, moved by hand: estimates and deadlines without sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _measure_holds(adm: Admission, clock: Clock, seconds: float, runs: int) -> None:
    """`runs` runs that each hold a slot `seconds`, so that the line knows its pace."""
    for _ in range(runs):
        async with adm.slot():
            clock.now += seconds


async def _waiting(adm: Admission, n: int) -> list[asyncio.Task]:
    tasks = [asyncio.create_task(_hold(adm, None, f"w{i}", [], asyncio.Event())) for i in range(n)]
    await asyncio.sleep(0)
    return tasks


def test_a_request_that_cannot_start_in_time_is_refused_on_arrival() -> None:
    """Runs hold a slot 4 s; with 10 s to start, the third waiter in line (12 s away) is
    refused at once, with when to retry, instead of timing out in the line."""

    async def main() -> None:
        clock = Clock()
        adm = Admission(slots=1, queue_size=100, queue_timeout=10, clock=clock)
        await _measure_holds(adm, clock, 4.0, 3)
        async with adm.slot():
            waiting = await _waiting(adm, 2)  # they start in about 4 s and 8 s
            assert adm.waiting == 2
            with pytest.raises(Overloaded, match=r"start in about 12s") as refused:
                adm.lane()
            assert refused.value.retry_after == 2  # 12 s - 10 s: when a new one would fit
            assert adm.waiting == 2  # the refused one never queued
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)

    asyncio.run(main())


def test_waiting_requests_are_refused_as_soon_as_they_cannot_start_in_time() -> None:
    """Before any run ended the line has no pace and admits; when the first run turns out to
    take 4 s, the waiters that would start past their 10 s are refused then and there."""

    async def main() -> None:
        clock = Clock()
        adm = Admission(slots=1, queue_size=100, queue_timeout=10, clock=clock)
        order: list[str] = []
        first = asyncio.Event()
        holder = asyncio.create_task(_hold(adm, None, "first", order, first))
        await asyncio.sleep(0)
        gate = asyncio.Event()
        waiters = [asyncio.create_task(_hold(adm, None, f"w{i}", order, gate)) for i in range(5)]
        await asyncio.sleep(0)
        assert adm.waiting == 5
        clock.now += 4.0
        first.set()  # w0 starts now; w1 at +4 s fits; w2.. at +8 s, +12 s... do not
        await holder
        await asyncio.sleep(0)
        refused = [t for t in waiters if t.done()]
        assert len(refused) == 3 and adm.waiting == 1
        for task in refused:
            assert isinstance(task.exception(), Overloaded)
        gate.set()
        await asyncio.gather(*waiters, return_exceptions=True)
        assert order == ["first", "w0", "w1"] and adm.busy == 0

    asyncio.run(main())


def test_a_request_whose_first_run_started_is_served_to_the_end() -> None:
    """The time allowed is for a request to start: the later runs of a batch, however long
    they wait for their turns, are never refused (the request would fail half done)."""

    async def main() -> list[str]:
        adm = Admission(slots=1, queue_size=10, queue_timeout=0.05)
        order: list[str] = []
        lane = adm.lane()

        async def run(name: str) -> None:
            async with adm.slot(lane):
                order.append(name)
                await asyncio.sleep(0.1)  # twice the time allowed to start

        await asyncio.gather(*(run(f"r{i}") for i in range(3)))
        return order

    assert asyncio.run(main()) == ["r0", "r1", "r2"]


def test_the_lanes_of_one_request_share_its_start() -> None:
    """A judged submission runs its cases in lanes of their own, all for one HTTP request:
    once one has started, the others wait their turns without a limit."""
    from sandlot import events

    async def main() -> list[str]:
        adm = Admission(slots=1, queue_size=10, queue_timeout=0.05)
        order: list[str] = []
        events.CURRENT.set(events.RequestRecord("one-request"))

        async def case(name: str) -> None:
            async with adm.slot():
                order.append(name)
                await asyncio.sleep(0.1)

        await asyncio.gather(*(case(f"c{i}") for i in range(3)))
        return order

    assert asyncio.run(main()) == ["c0", "c1", "c2"]


def test_an_infinite_queue_timeout_waits_as_long_as_it_takes() -> None:
    async def main() -> None:
        clock = Clock()
        adm = Admission(slots=1, queue_size=100, queue_timeout=math.inf, clock=clock)
        await _measure_holds(adm, clock, 60.0, 2)
        async with adm.slot():
            waiting = await _waiting(adm, 10)
            adm.lane()  # ten minutes away: admitted
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)

    asyncio.run(main())


def test_a_few_long_runs_among_quick_ones_do_not_turn_requests_away() -> None:
    """The pace is the median hold: two 15 s time-outs among quick runs do not make the line
    look slow to the quick requests waiting behind ten others."""

    async def main() -> None:
        clock = Clock()
        adm = Admission(slots=1, queue_size=100, queue_timeout=8, clock=clock)
        await _measure_holds(adm, clock, 0.1, 10)
        await _measure_holds(adm, clock, 15.0, 2)
        async with adm.slot():
            waiting = await _waiting(adm, 10)
            adm.lane()  # about 11 x 0.1 s away
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)

    asyncio.run(main())
