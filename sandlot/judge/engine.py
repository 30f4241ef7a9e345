"""The judge: find the problem, assemble the program, run it through the executor, give a verdict.

It calls the executor (never the jail). A program family runs one program per submission (all of
a task's tests in one process); a stdin/stdout family hands its cases to the executor's one
mechanism for "compile once, run these cases" (as `/run_code` test cases and `/run_batch` do),
which builds once, runs them over the slots in one admission lane and stops at the first failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sandlot import events
from sandlot.errors import InvalidRequest, JailError, SandlotError, UnknownLanguage
from sandlot.executor import (
    CodeRequest,
    Execution,
    Executor,
    Item,
    ItemOutcome,
    Outcome,
    Run,
    Seal,
    counts,
)
from sandlot.judge import prompts, reports
from sandlot.judge.checkers import TESTLIB, Checker
from sandlot.judge.datasets import (
    CLASS_FAMILIES,
    CLASS_PARAMS,
    MULTIPLE_LANGUAGES,
    Datasets,
    DatasetSpec,
    row_id,
)
from sandlot.judge.dialects import dialect
from sandlot.judge.families import HUMANEVAL, MULTIPLE, Family, reference
from sandlot.judge.integrity import PYTHON_SPLIT, Integrity, Level, lookup, of_job
from sandlot.judge.plans import Assembled, JudgeConfig, Program, StdioCase, StdioJob
from sandlot.judge.verdicts import Verdict, of_execution

Row = dict[str, Any]
CASE_TEXT_LIMIT = 1000  # SandboxFusion truncates passed cases' text to this unless asked not to
# A whole task's tests in one program: SandboxFusion's default for these families (MBPP's task
# 123 alone takes 2-3 s of CPU; a busy machine must not turn that into a time limit).
PROGRAM_TIMEOUT = 20.0
SANDBOX_RETRIES = 1  # SandboxFusion's clients retry SandboxError too; do it here, once
CHECKER_FILES = ("input.txt", "output.txt", "answer.txt")


@dataclass(slots=True)
class TestOutcome:
    passed: bool
    verdict: Verdict
    execution: Execution | None = None
    test_info: dict[str, Any] | None = None


@dataclass(slots=True)
class EvalResult:
    id: str | int
    accepted: bool
    extracted_code: str
    full_code: str | None = None
    test_code: str | None = None
    tests: list[TestOutcome] = field(default_factory=list)
    extracted_type: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@contextmanager
def _caller_rows(cfg: JudgeConfig, spec: DatasetSpec) -> Iterator[None]:
    """A row sent in provided_data may lack any field its family reads, or hold the wrong type:
    that is the request's fault (HTTP 400), where the same error on a shipped row is a bug."""
    try:
        yield
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        if cfg.provided_data is None or isinstance(exc, SandlotError):
            raise
        what = f"no field {exc.args[0]!r}" if isinstance(exc, KeyError) else f"{exc}"
        raise InvalidRequest(
            f"a row of config.provided_data does not fit the {spec.family.name} family: {what}"
        ) from exc


PROVIDED = "provided_data"  # the metrics' dataset label of rows a request sends
# The families whose rows sent in provided_data are judged by the family of their language.
_BY_LANGUAGE = (HUMANEVAL, MULTIPLE)


class Judge:
    def __init__(self, datasets: Datasets, executor: Callable[[], Executor]) -> None:
        self.datasets = datasets
        self._executor = executor  # resolved per call: the service may have no jail
        self._integrity: dict[str, dict[str, Integrity]] = {}

    # -- problems and prompts ------------------------------------------------------------------

    def spec(self, dataset: str, cfg: JudgeConfig, row: Row | None = None) -> DatasetSpec:
        if (
            cfg.provided_data is not None
            and dataset not in self.datasets.specs
            and (dataset not in self.datasets.aliases)
        ):
            family = CLASS_FAMILIES.get(cfg.dataset_type or "")
            if family is None:
                raise InvalidRequest(
                    f"no dataset {dataset!r} here and config.dataset_type "
                    f"{cfg.dataset_type!r} names no known class; use one of: "
                    f"{', '.join(CLASS_FAMILIES)}"
                )
            language = cfg.language
            if family in _BY_LANGUAGE:
                family, language = self._per_language(cfg, row)
            return DatasetSpec(
                name=dataset,
                family=family,
                file="",
                language=language,
                params=dict(CLASS_PARAMS.get(cfg.dataset_type or "", {})),
            )
        return self.datasets.spec(dataset)

    def _per_language(self, cfg: JudgeConfig, row: Row | None) -> tuple[Family, str]:
        """HumanEvalDataset and MultiPLEDataset rows in any language (SandboxFusion reads the
        row's `language`, MultiPL-E's file suffix such as `cpp`, `rs` or `go_test.go`): python
        is judged as HumanEval, any other language as MultiPL-E."""
        if row is None:
            data = cfg.provided_data
            row = data if isinstance(data, dict) else next(iter(data or []), None)
        named = cfg.language or (row or {}).get("language") or "python"
        if not isinstance(named, str):
            raise InvalidRequest("a row's 'language' must be a language name")
        base = named.split(".")[0]
        for candidate in (*MULTIPLE_LANGUAGES.get(base, ()), base):
            resolved = self.resolve_language(candidate)
            if resolved in self.datasets.registry.rows:
                return (HUMANEVAL if dialect(resolved).python_driver else MULTIPLE), resolved
        raise InvalidRequest(f"language {named!r} of the provided rows is not supported here")

    def rows(self, dataset: str, cfg: JudgeConfig) -> tuple[DatasetSpec, list[Row]]:
        spec = self.spec(dataset, cfg)
        if cfg.provided_data is not None:
            data = cfg.provided_data
            if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
                raise InvalidRequest("config.provided_data must be a list of rows here")
            return spec, data
        return spec, self.datasets.get(spec.name).rows

    def problem(
        self, dataset: str, problem_id: str | int, cfg: JudgeConfig
    ) -> tuple[DatasetSpec, Row]:
        spec = self.spec(dataset, cfg)
        data = cfg.provided_data
        if data is None:
            return spec, self.datasets.get(spec.name).get(problem_id)
        if isinstance(data, dict):
            return self.spec(dataset, cfg, data), data
        if isinstance(data, list):
            for row in data:
                if isinstance(row, dict) and str(_safe_id(row, spec)) == str(problem_id):
                    return self.spec(dataset, cfg, row), row
            raise InvalidRequest(f"config.provided_data has no row with id {problem_id!r}")
        raise InvalidRequest("config.provided_data must be a row (object) or a list of rows")

    def ids(self, dataset: str, cfg: JudgeConfig) -> list[str | int]:
        spec, rows = self.rows(dataset, cfg)
        return [_safe_id(r, spec) for r in rows]

    def prompts(
        self, dataset: str, cfg: JudgeConfig, offset: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        spec, rows = self.rows(dataset, cfg)
        chosen = rows if cfg.provided_data is not None else rows[offset:][:limit]
        out = []
        for row in chosen:
            out.extend(self._prompt_objects(spec, row, cfg))
        modes = spec.family.modes
        if modes and not cfg.extra.get("mode"):
            out.sort(key=lambda p: modes.index(p["labels"]["mode"]))  # every first mode's first
        return out

    def prompt_by_id(self, dataset: str, problem_id: str | int, cfg: JudgeConfig) -> dict:
        spec, row = self.problem(dataset, problem_id, cfg)
        if spec.family.modes and "mode" not in cfg.extra:
            cfg = _with_mode(cfg, spec.family.default_mode)
        return self._prompt_objects(spec, row, cfg)[0]

    def _prompt_objects(self, spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> list[dict]:
        family = spec.family
        if not family.modes:
            with _caller_rows(cfg, spec):
                text = family.prompt(spec, row, cfg)
            return [{"id": _safe_id(row, spec), "prompt": text, "labels": prompts.row_labels(row)}]
        chosen = cfg.extra.get("mode")
        with _caller_rows(cfg, spec):
            texts = [(m, family.prompt(spec, row, _with_mode(cfg, m)))
                     for m in ((chosen,) if chosen else family.modes)]  # fmt: skip
        # SandboxFusion's labels here: the mode alone
        return [{"id": _safe_id(row, spec), "prompt": t, "labels": {"mode": m}} for m, t in texts]

    # -- judging -------------------------------------------------------------------------------

    def assemble(self, spec: DatasetSpec, row: Row, completion: str, cfg: JudgeConfig) -> Assembled:
        params = {**spec.params, "language": spec.language, "resolve": self.resolve_language}
        with _caller_rows(cfg, spec):
            assembled = spec.family.assemble(row, completion, cfg, params)
        if isinstance(assembled.job, Program) and spec.params.get("skips_allowed"):
            assembled.job.skips_allowed = True  # the dataset's own convention
        if isinstance(assembled.job, Program) and "needs" in spec.params:
            assembled.job.needs = spec.params["needs"]
        return assembled

    def resolve_language(self, name: str) -> str:
        try:
            return self.datasets.registry.get(name).name
        except UnknownLanguage:
            return name

    async def submit(
        self, dataset: str, problem_id: str | int, completion: str, cfg: JudgeConfig
    ) -> EvalResult:
        result = await self._submit(dataset, problem_id, completion, cfg)
        extra = result.extra
        verdict = str(extra.get("verdict", "unknown"))
        # A client names its own provided_data sets: one label for all, so that the metrics
        # stay bounded however many names are sent.
        name = str(extra.get("dataset", dataset))
        label = name if name in self.datasets.specs else PROVIDED
        events.judged(label, extra.get("language"), verdict)
        return result

    async def _submit(
        self, dataset: str, problem_id: str | int, completion: str, cfg: JudgeConfig
    ) -> EvalResult:
        spec, row = self.problem(dataset, problem_id, cfg)
        apart = split(cfg)  # a config that asks for both ways is refused before anything runs
        assembled = self.assemble(spec, row, completion, cfg)
        ex = assembled.extracted
        result = EvalResult(
            id=problem_id, accepted=False, extracted_code=ex.code, extracted_type=ex.kind,
            extra={"dataset": spec.name, "extraction": ex.how, **assembled.extra},
        )  # fmt: skip
        job = assembled.job
        if job is None:
            verdict = Verdict.REFUSED if assembled.refused else Verdict.NO_CODE
            result.extra.update(verdict=verdict.value, reason=assembled.reason,
                                language=self._language_of(spec, row, cfg))  # fmt: skip
            return result
        result.extra["language"] = job.language
        result.full_code = job.view if isinstance(job, Program) and job.view else job.code
        if isinstance(job, Program):
            result.test_code = job.test_code
        integrity = self.integrity(spec, job, split=apart)
        result.extra["integrity"] = integrity.level.value
        unsealed = integrity.level is Level.UNSEALED
        if unsealed and strict(cfg) and not cfg.extra.get("allow_unsealed"):
            raise InvalidRequest(
                f"{spec.name} ({job.language}) is judged unsealed: {integrity.sealed_by}. "
                "Under config.extra.strict it is refused; set config.extra.allow_unsealed to "
                "judge it anyway"
            )
        problem = self._check_job(job)
        if problem is not None:
            verdict, reason = problem
            result.extra.update(verdict=verdict.value, reason=reason)
            # One test whose exec_info says why, as SandboxFusion's SandboxError does.
            failed = Execution(language=job.language, error=reason)
            result.tests = [TestOutcome(False, verdict, failed)]
            return result
        if isinstance(job, Program):
            await self._run_program(job, cfg, result)
        else:
            await self._run_stdio(job, cfg, result)
        return result

    def dataset_integrity(self, name: str) -> dict[str, Integrity]:
        """Each language of a dataset and its class, as a request with the default config gets
        it: that of the first row's reference solution in each language it is assembled into
        (a Python problem whose tests only call the answer is split), else the dataset's own."""
        spec = self.datasets.spec(name)
        cached = self._integrity.get(spec.name)
        if cached is not None:
            return cached
        out: dict[str, Integrity] = {}
        whole = spec.family.integrity.whole  # the same whatever the row's language
        if whole is not None and spec.language is None:
            out["*"] = whole
        else:
            cfg = JudgeConfig()
            for row in self.datasets.get(spec.name).rows:
                completion = reference(spec.family, row)
                job = self.assemble(spec, row, completion, cfg).job if completion else None
                if job is None:
                    continue
                language = self.resolve_language(job.language)
                if language not in out:
                    out[language] = self.integrity(spec, job, split=split(cfg))
                    if spec.language is not None:
                        break  # one language: its first row says it
            if spec.language is not None and spec.language not in out:
                out[spec.language] = lookup(spec.language, spec.integrity, spec.family.integrity)
        self._integrity[spec.name] = out
        return out

    def integrity(
        self, spec: DatasetSpec, job: Program | StdioJob, split: bool = False
    ) -> Integrity:
        """How far this job's verdict can be trusted (integrity.py); with `split`, a Python
        answer whose tests only call it runs in a process of its own."""
        if split and isinstance(job, Program) and job.split and job.seal:
            return PYTHON_SPLIT
        name = self.resolve_language(job.language)
        row = self.datasets.registry.rows.get(name)
        framework = row is not None and row.guard is not None
        sealed = isinstance(job, Program) and (job.seal or framework)
        stdio = isinstance(job, StdioJob)
        split = isinstance(job, Program) and job.apart
        return of_job(name, spec.integrity, spec.family.integrity, sealed=sealed, stdio=stdio,
                      split=split)  # fmt: skip

    def _language_of(self, spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str | None:
        """The language a problem is judged in when there is no program to say it."""
        named = spec.language or cfg.language or row.get("language")
        return self.resolve_language(named) if isinstance(named, str) else None

    def _check_job(self, job: Program | StdioJob) -> tuple[Verdict, str] | None:
        try:
            name = self.datasets.registry.get(job.language).name
        except UnknownLanguage:
            return Verdict.SANDBOX_ERROR, f"language {job.language!r} is not supported here"
        status = self.datasets.registry.available(name)
        if not status.available:
            return Verdict.SANDBOX_ERROR, f"language {name!r} is {status.reason}"
        return None

    def _request(
        self, language: str, code: str, cfg: JudgeConfig, job: Any, **kw: Any
    ) -> CodeRequest:
        return CodeRequest(
            language=language, code=code,
            run_timeout=(job.run_timeout if getattr(job, "timeout_from_config", False)
                         else cfg.run_timeout or job.run_timeout),
            compile_timeout=cfg.compile_timeout or job.compile_timeout,
            memory_mb=cfg.memory_mb, **kw,
        )  # fmt: skip

    async def _run_program(self, job: Program, cfg: JudgeConfig, result: EvalResult) -> None:
        if job.run_timeout is None:
            job.run_timeout = PROGRAM_TIMEOUT
        apart = split(cfg) and job.split
        seal = Seal(job.tests_at, strict(cfg), job.entry, job.unittest, apart) if job.seal else None
        request = self._request(job.language, job.code, cfg, job, files=job.files,
                                fetch=job.fetch, seal=seal, harness=job.harness,
                                any_cpu=job.needs.any_cpu, pids=job.needs.pids)  # fmt: skip
        execution = await self._execute(request)
        if reports.JEST_REPORT in execution.files:
            cases = reports.jest_cases(execution.files[reports.JEST_REPORT])
            if cases is not None:
                result.extra["jest_cases"] = cases
        verdict = of_execution(execution)
        # The program runs even when the code is forbidden (SandboxFusion's anti-hack rule is
        # applied after the run), so the result has its test and exec_info as SandboxFusion's.
        accepted = verdict is Verdict.ACCEPTED
        why = _post_check(job, execution, result.extracted_code) if accepted else None
        if why is not None:
            verdict = Verdict.WRONG_ANSWER
        result.accepted = verdict is Verdict.ACCEPTED
        result.tests = [TestOutcome(result.accepted, verdict, execution, job.test_info)]
        result.extra["verdict"] = verdict.value
        if not result.accepted:
            result.extra["reason"] = why or _reason(verdict, execution)

    async def _run_stdio(self, job: StdioJob, cfg: JudgeConfig, result: EvalResult) -> None:
        if not job.cases:
            raise InvalidRequest("this problem has no test cases")
        language = self.resolve_language(job.language)
        request = self._request(job.language, job.code, cfg, job, files=job.files)
        done: dict[int, TestOutcome] = {}  # by case index
        out = ItemOutcome()
        for attempt in range(SANDBOX_RETRIES + 1):  # a sandbox fault: the cases left, once more
            todo = [k for k in range(len(job.cases)) if k not in done]

            async def on_run(
                _: int, j: int, outcome: Outcome, _proof: bytes | None, _sealed: bool,
                todo: list[int] = todo,
            ) -> bool:  # fmt: skip
                k = todo[j]
                run = Execution(language=language, run=outcome)
                done[k] = await self._case(job, job.cases[k], cfg, run)
                return done[k].passed

            runs = [Run(job.cases[k].stdin.encode()) for k in todo]
            stop = not job.run_all
            (out,) = await self._executor().run_cases([Item(request, runs)], on_run, stop)
            failed = any(not o.passed for o in done.values())
            if out.error is None or attempt == SANDBOX_RETRIES or (failed and stop):
                break
            await asyncio.sleep(0.05)
        first = min(done, default=None)
        for k, outcome in done.items():
            assert outcome.execution is not None
            outcome.execution.compile = out.compile
            outcome.execution.cached = out.cached if k == first else out.compile is not None
        if not done or (out.error is not None and not (failed and stop)):
            # no case ran (the build failed), or the sandbox failed: one test says why
            k = min(set(range(len(job.cases))) - set(done))
            why = Execution(language, compile=out.compile, cached=out.cached, error=out.error)
            done[k] = await self._case(job, job.cases[k], cfg, why)
        outcomes = [done[k] for k in sorted(done)]
        failing = next((o for o in outcomes if not o.passed), None)
        result.tests = outcomes
        result.accepted = failing is None and len(outcomes) == len(job.cases)
        result.extra.update(
            verdict=(failing.verdict if failing else Verdict.ACCEPTED).value,
            cases_total=len(job.cases), cases_run=len(outcomes),
            checker=job.checker.mode,
        )  # fmt: skip
        if failing is not None:
            info = failing.test_info or {}
            result.extra["reason"] = info.get("reason") or failing.verdict.value

    async def _case(
        self, job: StdioJob, case: StdioCase, cfg: JudgeConfig, execution: Execution
    ) -> TestOutcome:
        """One case's verdict from its run (or from why it has none)."""
        verdict = of_execution(execution)
        reason: str | None = None
        if verdict is Verdict.WRONG_ANSWER:
            verdict = Verdict.RUNTIME_ERROR  # no assertion semantics for stdin programs
        if verdict is Verdict.ACCEPTED and execution.run is not None:
            actual = execution.run.stdout.decode(errors="replace")
            ok, reason = await self._check(job.checker, case, actual, cfg)
            verdict = Verdict.ACCEPTED if ok else Verdict.WRONG_ANSWER
        elif verdict is not Verdict.ACCEPTED:
            reason = _reason(verdict, execution)
        passed = verdict is Verdict.ACCEPTED
        limit = None if (job.full_cases or not passed) else CASE_TEXT_LIMIT
        info = {
            "input": {"stdin": _clip(case.stdin, limit)},
            "output": {"stdout": _clip(case.expected, limit)},
            "verdict": verdict.value,
        }
        if reason:
            info["reason"] = reason
        return TestOutcome(passed, verdict, execution, info)

    async def _execute(self, req: CodeRequest) -> Execution:
        """Run through the executor; a sandbox fault (never the program's) is retried once."""
        for attempt in range(SANDBOX_RETRIES + 1):
            try:
                execution = await self._executor().execute(req)
            except JailError as exc:
                execution = Execution(language=req.language, error=str(exc))
            if execution.error is None or attempt == SANDBOX_RETRIES:
                return execution
            await asyncio.sleep(0.05)
        raise AssertionError("unreachable")

    async def _check(
        self, checker: Checker, case: StdioCase, actual: str, cfg: JudgeConfig
    ) -> tuple[bool, str | None]:
        if checker.mode != "custom":
            return checker.compare(actual, case.expected)
        assert checker.code is not None
        files = dict(zip(CHECKER_FILES, (case.stdin.encode(), actual.encode(),
                                         case.expected.encode()), strict=True))  # fmt: skip
        execution = await self._execute(
            CodeRequest(language=checker.language, code=checker.code, files=files)
        )
        run = execution.run
        if execution.error or run is None or run.limit is not None:
            why = execution.error or (
                "it did not compile" if run is None else f"it hit the {run.limit} limit"
            )
            return False, f"the checker failed to run: {why}"  # fmt: skip
        if run.exit_code == 0:
            return True, None
        said = (run.stdout or run.stderr).decode(errors="replace").strip()[:300]
        what = TESTLIB.get(run.exit_code or -1, f"exit code {run.exit_code}")
        return False, f"checker: {what}" + (f": {said}" if said else "")


def strict(cfg: JudgeConfig) -> bool:
    """`config.extra.strict`: what the answer returns is compared as plain data only."""
    return bool(cfg.extra.get("strict"))


def split(cfg: JudgeConfig) -> bool:
    """Whether a Python answer whose tests only call it runs in a process of its own: unless
    `config.extra.split` is false (the tests' process, as SandboxFusion runs it), which
    `strict` does not allow."""
    asked = cfg.extra.get("split", True)
    if not isinstance(asked, bool):
        raise InvalidRequest("config.extra.split must be true or false")
    if not asked and strict(cfg):
        raise InvalidRequest(
            "config.extra.split false runs the answer in the tests' process, which "
            "config.extra.strict does not allow: drop one of them"
        )
    return asked


def _post_check(job: Program, execution: Execution, code: str) -> str | None:
    """Why a program that exited 0 still fails, if it does."""
    for pattern in job.forbidden:
        if pattern in code:
            return f"the code calls {pattern} (an early exit)"
    run = execution.run
    if run is None:
        return None
    if execution.unproven:
        return "the tests did not run to the end: the program exited early"
    if any(marker in run.stderr for marker in job.fail_markers):
        return "the tests reported a failure: " + run.stderr.decode(errors="replace")[-300:]
    attested = counts(execution.proof or b"")
    skipped = attested.get("skipped", 0)
    if skipped and not job.skips_allowed:
        return f"{skipped} test(s) were skipped: every test must run"
    if job.tests is not None:
        if job.tests <= 0:
            return "the problem's tests hold no test: nothing was proven"
        passed, failed = attested.get("passed"), attested.get("failed", 0)
        if passed != job.tests or failed:
            said = "no count" if passed is None else f"{passed} passed, {failed} failed"
            return (f"the seal attests {said}, where the problem has {job.tests} test(s): the "
                    "suite that ran is not the problem's")  # fmt: skip
    if job.stdout_check is not None:
        why = job.stdout_check(run.stdout)
        if why is not None:
            return f"{why}: {run.stdout.decode(errors='replace')[-300:]}"
    return None


def _reason(verdict: Verdict, execution: Execution) -> str:
    if execution.error:
        return execution.error
    step = execution.run if verdict is not Verdict.COMPILE_ERROR else execution.compile
    tail = ""
    if step is not None:
        # pytest and some runtimes report on stdout; compilers and tracebacks on stderr
        tail = (step.stderr.strip() or step.stdout.strip()).decode(errors="replace")[-500:]
    return verdict.value + (f": {tail}" if tail else "")


def _clip(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def _safe_id(row: Row, spec: DatasetSpec) -> str | int:
    try:
        return row_id(row, spec)
    except KeyError:
        raise InvalidRequest(f"a row has no '{spec.id_field}' (or 'id') field") from None


def _with_mode(cfg: JudgeConfig, mode: str | None) -> JudgeConfig:
    return JudgeConfig(**{**_cfg_fields(cfg), "extra": {**cfg.extra, "mode": mode}})


def _cfg_fields(cfg: JudgeConfig) -> dict[str, Any]:
    return {k: getattr(cfg, k) for k in JudgeConfig.__dataclass_fields__}
