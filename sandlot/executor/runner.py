"""The executor: (language, code, files, stdin, limits) in, compile and run steps out.

It writes the sources, compiles once per distinct build (the compile cache), runs one or many
cases against that build, each in a fresh box, and knows no bwrap flag: the jail does the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from sandlot import telemetry
from sandlot.config import Config
from sandlot.errors import InvalidRequest, JailError, TooLarge
from sandlot.executor import guards, split
from sandlot.executor import seal as sealing
from sandlot.executor.admission import Admission, Lane
from sandlot.executor.cache import Build, CompileCache, build_key
from sandlot.executor.compare import Checker
from sandlot.executor.guards import Seal
from sandlot.executor.limits import asked_of, check_asked, limits_for
from sandlot.executor.results import CaseResult, Execution, TestRun, describe
from sandlot.executor.shell import shell_spec
from sandlot.jail import Jail, Limits, Outcome, RunSpec
from sandlot.jail.workdir import safe_relpath
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
        telemetry.ran(language, step, outcome)
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

    def _spec(self, row: Language, argv: tuple[str, ...], memory_mb: int, **kw) -> RunSpec:
        runtime = self.config.runtime_dir
        return RunSpec(
            argv=row.argv(argv, runtime, memory_mb),
            env=row.resolved_env(runtime),
            ro_binds=row.resolved_binds(runtime),
            warm=row.warm and argv == row.run and self.config.warm_python,
            **kw,
        )

    def _unavailable(self, row: Language) -> str | None:
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
        memory_mb = self._memory_mb(req)
        spec = self._spec(
            row, argv, memory_mb, files=files, fetch=artifacts,
            limits=self._limits(row, req, COMPILE_TIMEOUT, max(memory_mb, 1024)),
            any_cpu=True,  # a compiler's threads (the JVM's: kotlinc ~1/4 slower on one CPU)
        )  # fmt: skip

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
        telemetry.compile_cache(cached)
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
        """Compile if the language needs it, then run once. InvalidRequest for bad input."""
        row = self.check(req)
        result = Execution(language=row.name)
        if (reason := self._unavailable(row)) is not None:
            result.error = reason
            return result
        files = self._sources(row, req)
        seal = self._seal(row, req)
        try:
            async with self.admission.slot() as slot:
                if row.compile is not None:
                    build, result.cached = await self._build(slot, row, files, req)
                    result.compile = build.outcome
                    if not build.outcome.ok:
                        return result
                    files = {**files, **build.artifacts}
                argv, run_files, secret = sealed_step(row, files, seal)
                result.run = await self._jail_run(
                    slot, self._run_spec(row, req, run_files, argv), row.name, "run"
                )
                result.files, result.run.files = result.run.files, {}
                if seal is not None:
                    result.sealed, result.proof = True, open_seal(result.run, secret)
        except JailError as exc:
            result.error = str(exc)
        return result

    def _run_spec(
        self,
        row: Language,
        req: CodeRequest,
        files: dict[str, bytes],
        argv: tuple[str, ...] | None = None,
    ) -> RunSpec:
        memory_mb = self._memory_mb(req)
        return self._spec(
            row, argv or row.run, memory_mb, files=files, stdin=req.stdin, fetch=req.fetch,
            limits=self._limits(row, req), any_cpu=req.any_cpu,
        )  # fmt: skip

    async def run_step(self, req: CodeRequest) -> tuple[RunSpec, bytes | None] | None:
        """The box `execute` runs for a request after its build (made or found in the compile
        cache) and the secret of its seal (None: not sealed), or None when it does not build:
        what a benchmark runs to price the executor's own work, or runs bare to price the box."""
        row = self.check(req)
        files = self._sources(row, req)
        seal = self._seal(row, req)
        if row.compile is not None:
            build, _ = await self._build(None, row, files, req)
            if not build.outcome.ok:
                return None
            files = {**files, **build.artifacts}
        argv, run_files, secret = sealed_step(row, files, seal)
        return self._run_spec(row, req, run_files, argv), secret if seal else None

    def _seal(self, row: Language, req: CodeRequest) -> Seal | None:
        """The request's seal, or a plain one when its row or code needs a seal anyway."""
        return req.seal or (Seal() if guards.sealed(row, req.code) else None)

    def _sources(self, row: Language, req: CodeRequest) -> dict[str, bytes]:
        """What a build starts from: the request's files, a framework guard's, the code (a
        split program's: the request's files and the answer)."""
        if req.harness is not None and row.split is not None:
            return {**req.files, row.split.answer: req.code.encode()}
        return {**req.files, **guards.build_files(row, req.code),
                row.source: row.program(req.code).encode()}  # fmt: skip

    async def run_tests(self, req: CodeRequest, cases: list[TestCase]) -> TestRun:
        """Build once, then every case in its own box, in parallel across the slots."""
        row = self.check(req)
        if not cases:
            raise InvalidRequest("test_cases is empty: give at least one case")
        if len(cases) > self.config.max_test_cases:
            raise InvalidRequest(f"at most {self.config.max_test_cases} test cases per request")
        expr_cases = [c for c in cases if c.input is not None]
        if expr_cases and row.harness is None:
            with_harness = sorted(r.name for r in self.registry.rows.values() if r.harness)
            raise InvalidRequest(
                f"{row.name} has no expression test cases; use {{'stdin', 'expected_stdout'}} "
                f"cases, or one of: {', '.join(with_harness)}"
            )
        execution = Execution(language=row.name)
        if (reason := self._unavailable(row)) is not None:
            execution.error = reason
            return TestRun(execution, [])
        files = self._sources(row, req)
        lane = self.admission.lane()  # the cases take one turn at a time with other requests
        try:
            if row.compile is not None:
                build, execution.cached = await self._build(None, row, files, req, lane)
                execution.compile = build.outcome
                if not build.outcome.ok:
                    return TestRun(execution, [])
                files = {**files, **build.artifacts}
            results = await asyncio.gather(*(self._case(row, req, files, c, lane) for c in cases))
        except JailError as exc:
            execution.error = str(exc)
            return TestRun(execution, [])
        failing = next((c for c in results if not c.passed), results[-1])
        execution.run = failing.run
        return TestRun(execution, list(results))

    async def _case(
        self, row: Language, req: CodeRequest, files: dict[str, bytes], case: TestCase, lane: Lane
    ) -> CaseResult:
        memory_mb = self._memory_mb(req)
        limits = self._limits(row, req)
        expression = (case.input, case.expected) if case.input is not None else None
        seal = req.seal or (
            Seal(strict=req.strict, split=req.strict)
            if expression or guards.sealed(row, req.code)
            else None
        )
        argv, run_files, secret = sealed_step(row, files, seal, expression)
        spec = self._spec(
            row, argv, memory_mb, files=run_files, stdin=(case.stdin or "").encode(), limits=limits
        )
        outcome = await self.run_box(spec, lane, row.name)
        proof = open_seal(outcome, secret) if seal else None
        result = CaseResult(
            passed=False, run=outcome, expected=case.expected, actual=None,
            input=case.input, stdin=case.stdin,
        )  # fmt: skip
        if expression is not None and proof:  # the driver's verdict: "1" or "0", then the value
            result.passed = proof[:1] == b"1" and outcome.ok
            result.actual = proof[1:].decode(errors="replace")
        elif expression is None and (seal is None or proof is not None):
            result.actual = outcome.stdout.decode(errors="replace")
            result.passed = outcome.ok and STDOUT_CHECKER.compare(result.actual, case.expected)[0]
        if result.actual is None or not outcome.ok:
            result.error = _why_no_verdict(outcome)
        return result


def jail_failed(exc: JailError, slot: int, language: str) -> None:
    """A fault of the sandbox (a lost spawner, a box that could not be built): the client gets a
    SandboxError; the log gets it with its cause."""
    telemetry.error(type(exc).__name__)
    cause = exc.__cause__
    log.error(
        "jail error in slot %d (%s): %s%s", slot, language, exc,
        f" (cause: {type(cause).__name__}: {cause})" if cause is not None else "",
    )  # fmt: skip


def sealed_step(
    row: Language, files: dict[str, bytes], seal: Seal | None, case: tuple[str, str] | None = None
) -> tuple[tuple[str, ...], dict[str, bytes], bytes]:
    """The argv and files of a run step over a build's `files`, and the secret its seal needs
    (fresh for this run only: never in the build; unused when `seal` is None)."""
    secret = sealing.new()
    if seal is None:
        return row.run, files, secret
    return guards.run_argv(row), guards.run_files(row, files, secret, seal, case), secret


def open_seal(outcome: Outcome, secret: bytes) -> bytes | None:
    """The payload of the run's seal (None: it has none), cut out of its stdout."""
    opened = sealing.open_frame(outcome.stdout, secret)
    outcome.stdout = opened.stdout
    return opened.payload


def _why_no_verdict(outcome: Outcome) -> str:
    if outcome.ok:
        return "the program ended before its tests did (an early exit)"
    return describe(outcome)
