"""The executor: (language, code, files, stdin, limits) in, compile and run steps out.

It writes the sources, compiles once per distinct build (the compile cache), runs one or many
cases against that build, each in a fresh box, and knows no bwrap flag: the jail does the rest.
One run holds one slot for its build and its run (`execute`); many runs of one or many programs
(`run_cases`: `/run_code` test cases, `/run_batch`, the judge's stdin problems) take turns in one
admission lane. Every box is built by `_box`, every run step by `_run_step`, and whether a run is
sealed is decided by `guards.seal_for` alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sandlot import events
from sandlot.config import Config
from sandlot.errors import InvalidRequest, JailError, TooLarge
from sandlot.executor import guards, split
from sandlot.executor import seal as sealing
from sandlot.executor.admission import Admission, Lane
from sandlot.executor.cache import Build, CompileCache, build_key
from sandlot.executor.cases import Item, ItemOutcome, OnRun, Run
from sandlot.executor.compare import Checker
from sandlot.executor.guards import Seal, Sources
from sandlot.executor.limits import asked_of, check_asked, limits_for
from sandlot.executor.results import CaseResult, Execution, TestRun, describe
from sandlot.executor.shell import shell_spec
from sandlot.jail import Jail, Limits, Outcome, RunSpec, safe_relpath
from sandlot.languages import Language, Registry
from sandlot.limits import COMPILE_TIMEOUT, MEMORY, RUN_TIMEOUT, RequestLimit


@dataclass(frozen=True, slots=True)
class CodeRequest:
    language: str
    code: str
    files: dict[str, bytes] = field(default_factory=dict)
    stdin: bytes = b""
    compile_timeout: float | None = None
    run_timeout: float | None = None
    memory_mb: int | None = None
    fetch: tuple[str, ...] = ()
    # Accepted only if its tests are proven to have ended (seal.py); a test framework's runs and
    # expression test cases are sealed whatever this says.
    seal: Seal | None = None
    strict: bool = False  # expression test cases compare plain data only (the drivers' `strict`)
    # A judge's split program (sandlot/executor/split.py): the harness's sources; `code` is the
    # answer alone. Only rows with a `split` take it.
    harness: dict[str, bytes] | None = None
    # A dataset's needs beyond the server's defaults (the judge's, never a caller's): its runs
    # may use every CPU of the jail's, not the slot's one; processes and threads (up to the
    # server's max_pids).
    any_cpu: bool = False
    pids: int = 0
    run_timeout_field: str = "run_timeout"  # what the request called it, for its error messages


@dataclass(frozen=True, slots=True)
class TestCase:
    """Either an expression and its expected value, or stdin and its expected stdout."""

    expected: str
    input: str | None = None
    stdin: str | None = None


log = logging.getLogger("sandlot.executor")

# `/run_code` stdin cases: equal up to trailing spaces on each line and trailing blank lines.
STDOUT_CHECKER = Checker(mode="lines")


class Executor:
    def __init__(self, config: Config, jail: Jail, registry: Registry) -> None:
        self.config = config
        self.jail = jail
        self.registry = registry
        self.admission = Admission(config.slots, config.queue_size, config.queue_timeout)
        self.cache = CompileCache(max_bytes=256 << 20)

    # -- validation ----------------------------------------------------------------------------

    def check(self, req: CodeRequest) -> Language:
        """The language row for a request, or InvalidRequest saying what to change."""
        cfg = self.config
        row = self.registry.get(req.language)
        if len(req.code.encode()) > cfg.max_code_bytes:
            raise TooLarge(
                f"code is larger than the {cfg.max_code_bytes} bytes this server accepts"
            )
        if sum(len(v) for v in req.files.values()) > cfg.max_files_bytes:
            raise TooLarge(f"files total more than the {cfg.max_files_bytes} bytes allowed")
        for name in (*req.files, *req.fetch):
            safe_relpath(name)
        check_asked(cfg, asked_of(req), {RUN_TIMEOUT.setting: req.run_timeout_field})
        return row

    def _limits(
        self,
        row: Language,
        req: CodeRequest,
        time: RequestLimit = RUN_TIMEOUT,
        memory_mb: int | None = None,
    ) -> Limits:
        """The jail limits of a step of `req`, `time` the limit of its wall clock; `memory_mb`
        instead of the request's (a compiler's, which needs its room)."""
        cfg, asked = self.config, asked_of(req)
        if memory_mb is not None:
            asked[MEMORY.setting] = memory_mb
        # a dataset's needs (the judge's) may raise the pids, up to max_pids
        pids = max(cfg.pids, row.pids, min(req.pids, cfg.max_pids))
        return limits_for(cfg, asked, time=time, pids=pids)

    def _memory_mb(self, req: CodeRequest) -> int:
        # SandboxFusion's -1 ("unlimited") and absent both mean the server default.
        return req.memory_mb if req.memory_mb and req.memory_mb > 0 else self.config.memory_mb

    # -- running -------------------------------------------------------------------------------

    async def _jail_run(self, slot: int, spec: RunSpec, language: str, step: str) -> Outcome:
        future = asyncio.ensure_future(self.jail.run_async(slot, spec))
        try:
            outcome = await asyncio.shield(future)
        except asyncio.CancelledError:
            # Nobody waits for this run any more: the jail kills its box. Its slot is not free
            # until the jail is done with it (a moment), or the next caller admitted there would
            # wait on the slot's lock, unseen by admission (its queue time, the busy count and
            # /health would all be wrong).
            future.cancel()
            while not future.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait([future])
            if not future.cancelled():
                future.exception()  # retrieved: nobody waits for this run's result or its error
            raise
        except JailError as exc:
            jail_failed(exc, slot, language)
            raise
        events.ran(language, step, outcome)
        return outcome

    async def run_box(
        self, spec: RunSpec, lane: Lane | None = None, language: str = "shell", step: str = "run"
    ) -> Outcome:
        """One prepared run, queued for a slot like any other (in `lane`'s turn, if given)."""
        async with self.admission.slot(lane) as slot:
            return await self._jail_run(slot, spec, language, step)

    async def run_shell(self, cmd: str, files: dict[str, bytes], timeout: float) -> Outcome:
        """`/bin/bash -c cmd` over `files` in a fresh box with every toolchain (a repository's
        tests); InvalidRequest for an empty command, a bad path or a timeout out of range."""
        if not cmd.strip():
            raise InvalidRequest("the test command is empty: pass e.g. --cmd 'pytest -q'")
        for name in files:
            safe_relpath(name)
        if sum(len(v) for v in files.values()) > self.config.max_files_bytes:
            raise TooLarge(f"files total more than the {self.config.max_files_bytes} bytes")
        return await self.run_box(shell_spec(self.config, self.registry, cmd, files, timeout))

    def _box(
        self, row: Language, argv: tuple[str, ...], req: CodeRequest,
        time: RequestLimit = RUN_TIMEOUT, memory_mb: int | None = None, **kw: Any,
    ) -> RunSpec:  # fmt: skip
        """The spec of every box, compile and run steps alike: the row's argv, env and binds,
        within the request's limits (`time` the one of its wall clock; `memory_mb` a step's own
        instead of the request's)."""
        runtime = self.config.runtime_dir
        return RunSpec(
            argv=row.argv(argv, runtime, self._memory_mb(req)),
            env=row.resolved_env(runtime),
            ro_binds=row.resolved_binds(runtime),
            warm=row.warm and argv == row.run and self.config.warm_python,
            limits=self._limits(row, req, time, memory_mb),
            **kw,
        )

    def _run_step(
        self, row: Language, sources: Sources, files: dict[str, bytes], req: CodeRequest, run: Run
    ) -> tuple[RunSpec, bytes | None]:
        """A run step over a build's `files`, and the secret of its seal (None: not sealed),
        fresh for this run only: never in the build."""
        seal = guards.seal_for(sources, run.seal or req.seal, run.case, req.strict)
        argv, secret = row.run, None
        if seal is not None:
            secret = sealing.new()
            argv, files = guards.run_argv(row), guards.run_files(row, files, secret, seal, run.case)
        spec = self._box(row, argv, req, files=files, stdin=run.stdin, fetch=run.fetch,
                         any_cpu=req.any_cpu)  # fmt: skip
        return spec, secret

    def _compile_step(
        self, row: Language, files: dict[str, bytes], req: CodeRequest,
        argv: tuple[str, ...], artifacts: tuple[str, ...],
    ) -> RunSpec:  # fmt: skip
        return self._box(
            row, argv, req, COMPILE_TIMEOUT, max(self._memory_mb(req), 1024), files=files,
            fetch=artifacts,
            any_cpu=True,  # a compiler's threads (the JVM's: kotlinc ~1/4 slower on one CPU)
        )  # fmt: skip

    def unavailable(self, row: Language) -> str | None:
        """Why the row cannot run here (a toolchain not installed), or None."""
        status = self.registry.available(row.name)
        return None if status.available else f"language {row.name!r} is {status.reason}"

    async def _build(
        self,
        slot: int | None,
        row: Language,
        files: dict[str, bytes],
        req: CodeRequest,
        lane: Lane | None = None,
        step: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
    ) -> tuple[Build, bool]:
        """Compile through the cache; `slot` is one already held, or None to queue for one
        (in `lane`'s turn, if given). `step` is (argv, artifacts) when not the row's compile."""
        if req.harness is not None and step is None:
            return await self._split_build(slot, row, files, req, lane)
        argv, artifacts = step or (row.compile, row.artifacts)
        assert argv is not None
        spec = self._compile_step(row, files, req, argv, artifacts)

        async def compile_now() -> Build:
            if slot is not None:
                outcome = await self._jail_run(slot, spec, row.name, "compile")
            else:
                outcome = await self.run_box(spec, lane, row.name, "compile")
            artifacts, outcome.files = outcome.files, {}
            return Build(outcome, artifacts)

        key = build_key(row.name, spec.argv, files)
        # A build that hit a limit may pass with more time; keep only clean verdicts.
        build, cached = await self.cache.get_or_build(
            key, compile_now, lambda b: b.outcome.limit is None
        )
        events.compile_cache(cached)
        return build, cached

    async def _split_build(
        self,
        slot: int | None,
        row: Language,
        files: dict[str, bytes],
        req: CodeRequest,
        lane: Lane | None,
    ) -> tuple[Build, bool]:
        """A judge's split program: the harness alone (cached for every answer to the same
        problem), then the answer compiled, checked and linked with it (split.py)."""
        layout = row.split
        if layout is None or req.harness is None:
            raise InvalidRequest(f"{row.name} has no split build")
        tools = split.tool_files(row, self.config.runtime_dir)
        sources = {**files, **tools}
        if layout.harness is None:
            sources.update(req.harness)
        else:
            harness, cached = await self._build(
                slot, row, {**req.harness, **tools}, req, lane,
                (layout.harness, layout.harness_artifacts),
            )  # fmt: skip
            if not harness.outcome.ok:
                return harness, cached
            sources.update(harness.artifacts)
        return await self._build(slot, row, sources, req, lane, (layout.build, row.artifacts))

    async def execute(self, req: CodeRequest) -> Execution:
        """Compile if the language needs it, then run once, both in one slot. InvalidRequest
        for bad input."""
        row = self.check(req)
        result = Execution(language=row.name)
        if (reason := self.unavailable(row)) is not None:
            result.error = reason
            return result
        sources = guards.sources(row, req.code, req.files, req.harness is not None)
        files = sources.files
        try:
            async with self.admission.slot() as slot:
                if row.compile is not None:
                    build, result.cached = await self._build(slot, row, files, req)
                    result.compile = build.outcome
                    if not build.outcome.ok:
                        return result
                    files = {**files, **build.artifacts}
                spec, secret = self._run_step(
                    row, sources, files, req, Run(req.stdin, fetch=req.fetch)
                )
                result.run = await self._jail_run(slot, spec, row.name, "run")
                result.files, result.run.files = result.run.files, {}
                if secret is not None:
                    result.sealed, result.proof = True, open_seal(result.run, secret)
        except JailError as exc:
            result.error = str(exc)
        return result

    async def run_step(self, req: CodeRequest) -> tuple[RunSpec, bytes | None] | None:
        """The box `execute` runs for a request after its build (made or found in the compile
        cache) and the secret of its seal (None: not sealed), or None when it does not build:
        what a benchmark runs to price the executor's own work, or runs bare to price the box."""
        row = self.check(req)
        sources = guards.sources(row, req.code, req.files, req.harness is not None)
        files = sources.files
        if row.compile is not None:
            build, _ = await self._build(None, row, files, req)
            if not build.outcome.ok:
                return None
            files = {**files, **build.artifacts}
        return self._run_step(row, sources, files, req, Run(req.stdin, fetch=req.fetch))

    async def run_cases(
        self, items: list[Item], on_run: OnRun, stop_on_first_failure: bool = False
    ) -> list[ItemOutcome]:
        """Every item built once and each of its runs in a box of its own, all in one admission
        lane (cases.py); InvalidRequest (nothing ran) for a bad item, Overloaded when the line
        is full or a run waited past the queue timeout (the request is then abandoned whole)."""
        return await _Cases(self, items, on_run, stop_on_first_failure).run()

    async def run_tests(self, req: CodeRequest, cases: list[TestCase]) -> TestRun:
        """Build once, then every case in its own box, in parallel across the slots."""
        row = self.check(req)
        if not cases:
            raise InvalidRequest("test_cases is empty: give at least one case")
        if len(cases) > self.config.max_test_cases:
            raise InvalidRequest(f"at most {self.config.max_test_cases} test cases per request")
        if row.harness is None and any(c.input is not None for c in cases):
            with_harness = sorted(r.name for r in self.registry.rows.values() if r.harness)
            raise InvalidRequest(
                f"{row.name} has no expression test cases; use {{'stdin', 'expected_stdout'}} "
                f"cases, or one of: {', '.join(with_harness)}"
            )
        results: list[CaseResult | None] = [None] * len(cases)

        async def on_run(
            _: int, j: int, outcome: Outcome, proof: bytes | None, sealed: bool
        ) -> bool:
            result = results[j] = _case_result(cases[j], outcome, proof, sealed)
            return result.passed

        runs = [
            Run((c.stdin or "").encode(), case=None if c.input is None else (c.input, c.expected))
            for c in cases
        ]
        (out,) = await self.run_cases([Item(req, runs)], on_run)
        execution = Execution(language=row.name, compile=out.compile, cached=out.cached,
                              error=out.error)  # fmt: skip
        done = [r for r in results if r is not None]
        if out.error is not None or len(done) < len(cases):
            return TestRun(execution, [])
        execution.run = next((c for c in done if not c.passed), done[-1]).run
        return TestRun(execution, done)


T = TypeVar("T")


@dataclass(slots=True)
class _State:
    row: Language
    sources: Sources
    files: dict[str, bytes]
    left: int  # runs not yet finished or skipped
    out: ItemOutcome = field(default_factory=ItemOutcome)
    build: asyncio.Task[dict[str, bytes] | None] | None = None
    finished: bool = False  # every run done: its sources and build are let go


class _Cases:
    """`Executor.run_cases`: `slots` workers take the runs of every item in order, each build
    made once and started one item ahead, every box queued in the request's one lane."""

    def __init__(
        self, executor: Executor, items: list[Item], on_run: OnRun, stop_on_first_failure: bool
    ) -> None:
        self.ex = executor
        self.items = items
        self.on_run = on_run
        self.stop = stop_on_first_failure
        self.states = []
        for item in items:
            req = item.request
            row = executor.check(req)  # InvalidRequest before anything runs
            sources = guards.sources(row, req.code, req.files, req.harness is not None)
            st = _State(row, sources, sources.files, len(item.runs))
            if (reason := executor.unavailable(row)) is not None:
                st.out.error, st.out.stopped = reason, True
            self.states.append(st)
        # Overloaded now if the line is full (nothing to queue: no lane, and no refusal)
        self.lane = (
            executor.admission.lane() if any(not s.out.stopped for s in self.states) else None
        )

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
                if not await self.on_run(i, j, *ran) and self.stop:
                    st.out.stopped = True
            st.left -= 1
            if st.left == 0:  # a batch of compiled items must not hold every binary to its end
                st.files, st.build, st.finished = {}, None, True

    def _built(self, i: int) -> asyncio.Future[dict[str, bytes] | None]:
        """Item i's files with its build in them, or None when it cannot run; the next item's
        build starts too, so that it is ready (or nearly) when its first run comes."""
        for k in range(i, min(i + 2, len(self.states))):
            st = self.states[k]
            if st.build is None and not st.finished and not st.out.stopped:
                st.build = asyncio.ensure_future(self._build(k))
        task = self.states[i].build
        assert task is not None
        return asyncio.shield(task)

    async def _build(self, i: int) -> dict[str, bytes] | None:
        st, req = self.states[i], self.items[i].request
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
    ) -> tuple[Outcome, bytes | None, bool] | None:
        st, req, run = self.states[i], self.items[i].request, self.items[i].runs[j]
        ex, row, sources = self.ex, st.row, st.sources
        if run.code is not None:  # a program of its own over the item's files
            sources = guards.sources(row, run.code, {}, req.harness is not None)
            files = {**files, **run.files, **sources.files}
            if row.compile is not None:  # its own build (cached)
                build, _ = await _whole(ex._build(None, row, files, req, self.lane))
                if not build.outcome.ok:
                    st.out.compile = build.outcome
                    st.out.stopped = True
                    return None
                files = {**files, **build.artifacts}
        spec, secret = ex._run_step(row, sources, files, req, run)
        outcome = await _whole(ex.run_box(spec, self.lane, row.name))
        if secret is None:
            return outcome, None, False
        return outcome, open_seal(outcome, secret), True


def _whole(step: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """`step` run to its end even if the request is cancelled (its client went away): a run
    that holds a slot keeps it until the jail is done with it, so no other run gets that slot
    early. At most one run per worker finishes after a cancellation."""
    task = asyncio.ensure_future(step)
    task.add_done_callback(_settled)
    return asyncio.shield(task)


def _settled(task: asyncio.Future[Any]) -> None:
    """Take a finished step's error, so that one nobody awaits any more (its request was
    cancelled) is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


def _case_result(case: TestCase, outcome: Outcome, proof: bytes | None, sealed: bool) -> CaseResult:
    """A `/run_code` test case's verdict: an expression case's from its driver, a stdin case's
    from its stdout (and, if sealed, its proof that it ran to its end)."""
    result = CaseResult(
        passed=False, run=outcome, expected=case.expected, actual=None,
        input=case.input, stdin=case.stdin,
    )  # fmt: skip
    if case.input is not None and proof:  # the driver's verdict: "1" or "0", then the value
        result.passed = proof[:1] == b"1" and outcome.ok
        result.actual = proof[1:].decode(errors="replace")
    elif case.input is None and (proof is not None or not sealed):
        result.actual = outcome.stdout.decode(errors="replace")
        result.passed = outcome.ok and STDOUT_CHECKER.compare(result.actual, case.expected)[0]
    if result.actual is None or not outcome.ok:
        result.error = _why_no_verdict(outcome)
    return result


def jail_failed(exc: JailError, slot: int, language: str) -> None:
    """A fault of the sandbox (a lost spawner, a box that could not be built): the client gets a
    SandboxError; the log gets it with its cause."""
    events.error(type(exc).__name__)
    cause = exc.__cause__
    log.error(
        "jail error in slot %d (%s): %s%s", slot, language, exc,
        f" (cause: {type(cause).__name__}: {cause})" if cause is not None else "",
    )  # fmt: skip


def open_seal(outcome: Outcome, secret: bytes) -> bytes | None:
    """The payload of the run's seal (None: it has none), cut out of its stdout."""
    opened = sealing.open_frame(outcome.stdout, secret)
    outcome.stdout = opened.stdout
    return opened.payload


def _why_no_verdict(outcome: Outcome) -> str:
    if outcome.ok:
        return "the program ended before its tests did (an early exit)"
    return describe(outcome)
