"""Many programs, each with many runs, in one request: the engine under `/run_batch`.

Every item is checked before anything runs. An item is compiled once (through the compile
cache) and its runs go through one admission lane for the whole batch, `slots` runs at a time,
so that the runs of all items spread over the slots while the batch takes its turns with other
requests (admission.py). Each run's outcome goes to a callback as soon as it ends: the caller
judges it and keeps what it needs, so a batch of 10,000 cases never holds 10,000 outputs. The
callback's verdict stops an item at its first failure when asked. A sealed run (seal.py) hands
the callback its seal's payload too, None when it wrote none: its tests did not run to their end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from sandlot.errors import JailError
from sandlot.executor import guards
from sandlot.executor.admission import Lane
from sandlot.executor.guards import Seal
from sandlot.executor.runner import CodeRequest, Executor, open_seal, sealed_step
from sandlot.jail import Outcome
from sandlot.languages import Language


@dataclass(frozen=True, slots=True)
class Run:
    """One run of an item's program: its stdin, and its own program text when it has one (the
    item's code with an assert appended, a harness around it) with the files beside it (the
    answer's own, under a harness). A run with a `seal` (or of a test framework's row) is
    sealed; `case` is an expression test case its driver judges."""

    stdin: bytes = b""
    code: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    fetch: tuple[str, ...] = ()
    seal: Seal | None = None
    case: tuple[str, str] | None = None


@dataclass(slots=True)
class Item:
    request: CodeRequest
    runs: list[Run]


@dataclass(slots=True)
class ItemOutcome:
    """How an item went, beyond its runs' outcomes (those went to the callback)."""

    compile: Outcome | None = None
    cached: bool = False
    error: str | None = None  # the sandbox could not serve this item (never the program's fault)
    stopped: bool = False  # no more runs: the build failed, or a run failed and we stop at one
    ran: int = 0


T = TypeVar("T")
# (item index, run index, outcome, its seal's payload) -> whether the run passed
OnRun = Callable[[int, int, Outcome, bytes | None], bool]


@dataclass(slots=True)
class _State:
    row: Language
    files: dict[str, bytes]
    left: int  # runs not yet finished or skipped
    out: ItemOutcome = field(default_factory=ItemOutcome)
    build: asyncio.Task[dict[str, bytes] | None] | None = None
    finished: bool = False  # every run done: its sources and build are let go


class _Batch:
    def __init__(
        self, executor: Executor, items: list[Item], on_run: OnRun, stop_on_first_failure: bool
    ) -> None:
        self.ex = executor
        self.items = items
        self.on_run = on_run
        self.stop = stop_on_first_failure
        self.states = []
        for item in items:
            row = executor.check(item.request)  # InvalidRequest before anything runs
            files = executor._sources(row, item.request)
            self.states.append(_State(row, files, len(item.runs)))
        self.lane: Lane = executor.admission.lane()  # Overloaded now if the line is full

    async def run(self) -> list[ItemOutcome]:
        work = ((i, j) for i, item in enumerate(self.items) for j in range(len(item.runs)))
        workers = min(self.ex.config.slots, sum(len(item.runs) for item in self.items))
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(self._worker(work))
        except BaseExceptionGroup as eg:  # Overloaded, or a bug: the first one says it
            raise eg.exceptions[0] from None
        finally:
            for st in self.states:
                if st.build is not None and not st.build.done():
                    st.build.cancel()
        return [st.out for st in self.states]

    async def _worker(self, work: Iterator[tuple[int, int]]) -> None:
        for i, j in work:  # a shared iterator: each (item, run) is taken by one worker
            st = self.states[i]
            try:
                files = None if st.out.stopped else await self._built(i)
                ran = None if files is None else await self._run(i, j, files)
            except JailError as exc:
                st.out.error, st.out.stopped, ran = str(exc), True, None
            if ran is not None:
                st.out.ran += 1
                if not self.on_run(i, j, *ran) and self.stop:
                    st.out.stopped = True
            st.left -= 1
            if st.left == 0:  # a batch of compiled items must not hold every binary to its end
                st.files, st.build, st.finished = {}, None, True

    def _built(self, i: int) -> asyncio.Future[dict[str, bytes] | None]:
        """Item i's files with its build in them, or None when it cannot run; the next item's
        build starts too, so that it is ready (or nearly) when its first run comes."""
        for k in range(i, min(i + 2, len(self.states))):
            st = self.states[k]
            if st.build is None and not st.finished:
                st.build = asyncio.ensure_future(self._build(k))
        task = self.states[i].build
        assert task is not None
        return asyncio.shield(task)

    async def _build(self, i: int) -> dict[str, bytes] | None:
        st, req = self.states[i], self.items[i].request
        if (reason := self.ex._unavailable(st.row)) is not None:
            st.out.error, st.out.stopped = reason, True
            return None
        if st.row.compile is None or self._own_programs(i):
            return st.files
        build, st.out.cached = await _whole(self.ex._build(None, st.row, st.files, req, self.lane))
        st.out.compile = build.outcome
        if not build.outcome.ok:
            st.out.stopped = True
            return None
        return {**st.files, **build.artifacts}

    def _own_programs(self, i: int) -> bool:
        return any(run.code is not None for run in self.items[i].runs)

    async def _run(
        self, i: int, j: int, files: dict[str, bytes]
    ) -> tuple[Outcome, bytes | None] | None:
        st, req, run = self.states[i], self.items[i].request, self.items[i].runs[j]
        ex, row = self.ex, st.row
        if run.code is not None:
            own = ex._sources(row, replace(req, code=run.code, files={}))
            files = {**files, **run.files, **own}
            if row.compile is not None:  # a program of its own: its own build (cached)
                build, _ = await _whole(ex._build(None, row, files, req, self.lane))
                if not build.outcome.ok:
                    st.out.compile = build.outcome
                    st.out.stopped = True
                    return None
                files = {**files, **build.artifacts}
        memory_mb = ex._memory_mb(req)
        seal = run.seal or (Seal() if guards.sealed(row, run.code or req.code) else None)
        argv, files, secret = sealed_step(row, files, seal, run.case)
        spec = ex._spec(
            row, argv, memory_mb, files=files, stdin=run.stdin, fetch=run.fetch,
            limits=ex._limits(row, req),
        )  # fmt: skip
        outcome = await _whole(ex.run_box(spec, self.lane, row.name))
        return outcome, open_seal(outcome, secret) if seal else None


def _whole(step: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """`step` run to its end even if the batch is cancelled (its client went away): a run that
    holds a slot keeps it until the jail is done with it, so no other run gets that slot early.
    At most one run per worker finishes after a cancellation."""
    task = asyncio.ensure_future(step)
    task.add_done_callback(_settled)
    return asyncio.shield(task)


def _settled(task: asyncio.Future[Any]) -> None:
    """Take a finished step's error, so that one nobody awaits any more (its batch was cancelled)
    is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


async def run_batch(
    executor: Executor, items: list[Item], on_run: OnRun, stop_on_first_failure: bool = False
) -> list[ItemOutcome]:
    """Run every item's runs; InvalidRequest (nothing ran) for a bad item, Overloaded when the
    line is full or a run waited past the queue timeout (the batch is then abandoned whole)."""
    return await _Batch(executor, items, on_run, stop_on_first_failure).run()
