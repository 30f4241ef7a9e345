"""Batch rewards: many (program, tests) pairs scored in one call, with a compact verdict per case.

The test forms RL datasets carry all become runs of one program per item:
- stdin cases (`test_cases` with stdin/expected_stdout, or `ground_truth` inputs/outputs): the
  program's stdout is compared by a checker (`lines` by default, as `/run_code` does);
- expression cases (`test_cases` with input/expected): judged by the executor's driver, as
  `/run_code` does;
- call-based `ground_truth` (`fn_name`): each input is the list of arguments (or, as
  LiveCodeBench has it, a string of JSON values one per line) to that function or to that method
  of `class Solution`; the return value is compared by value with the output, or with its only
  element (APPS wraps outputs in a list);
- asserts (`asserts`, or `ground_truth.assert_case`): each appended to the code, one run each,
  passed when the run exits 0.

Every run that can be is sealed (sandlot/executor/seal.py), as the judge's are: an expression
case, a call and an assert count only when the run proves that they ran to their end, so an
early exit (`os._exit(0)`) or a result file the answer writes itself passes nothing. An assert
in a language with no place for the seal's end (judge/guards.py) is judged on its exit alone.

A raw `completion` is cut to code as the judge does (`extract.py`). Everything is checked before
anything runs; then the executor runs every item's cases over the slots (executor/cases.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sandlot.config import Config
from sandlot.errors import InvalidRequest, TooLarge
from sandlot.executor import (
    CodeRequest,
    Execution,
    Executor,
    Item,
    ItemOutcome,
    Outcome,
    Run,
    Seal,
    TestCase,
    Verdict,
    asked_of,
    counts,
    describe,
    verdict_of,
)
from sandlot.judge import guards, harnesses
from sandlot.judge.assemble import PY_IMPORTS
from sandlot.judge.checkers import Checker
from sandlot.judge.dialects import dialect
from sandlot.judge.extract import extract
from sandlot.judge.verdicts import of_execution

DETAIL = 200  # characters of a failed case's explanation
EARLY_EXIT = "the program ended before its tests did (an early exit)"
DEFAULT_CHECKER = Checker(mode="lines")  # what `/run_code` stdin cases use


@dataclass(slots=True)
class RewardItem:
    """One item as the API hands it over: a program (or a completion) and its tests."""

    id: str | int
    language: str = "python"
    code: str | None = None
    completion: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    compile_timeout: float | None = None
    run_timeout: float | None = None
    memory_mb: int | None = None
    test_cases: list[TestCase] | None = None
    ground_truth: Any = None
    asserts: list[str] | None = None
    checker: Any = None
    # plain data only, and a Python answer in a process of its own (the drivers' split)
    strict: bool = True


@dataclass(slots=True)
class CaseRecord:
    verdict: Verdict
    time: float | None = None
    cpu_time: float | None = None
    memory: int | None = None
    detail: str | None = None


@dataclass(slots=True)
class ItemResult:
    id: str | int
    score: float
    passed: bool
    verdict: Verdict
    cases: list[CaseRecord]
    compile: Outcome | None = None
    cached: bool = False
    reason: str | None = None
    extraction: str | None = None


@dataclass(frozen=True, slots=True)
class _Check:
    kind: str  # stdout | exit | expr | value
    expected: Any = None
    sealed: bool = False  # passes only with the run's seal
    tests: int | None = None  # how many assertion sites the seal must attest passed


@dataclass(slots=True)
class _Plan:
    item: RewardItem
    runs: list[Run]
    checks: list[_Check]
    checker: Checker
    code: str | None  # None: nothing to run (no code in the completion)
    extraction: str | None = None
    records: list[CaseRecord] = field(default_factory=list)


async def score_batch(
    executor: Executor, items: list[RewardItem], stop_on_first_failure: bool = False
) -> list[ItemResult]:
    """Score every item; InvalidRequest (nothing ran) if any item is malformed or too large."""
    check_size(executor.config, len(items), 0)
    _unique_ids(items)
    plans = [_plan(executor, item, n) for n, item in enumerate(items)]
    check_size(executor.config, len(items), sum(len(p.runs) for p in plans))
    runnable = [p for p in plans if p.code is not None]
    for p in plans:
        p.records = [CaseRecord(Verdict.SKIPPED if p.code is not None else Verdict.NO_CODE)
                     for _ in p.runs]  # fmt: skip

    async def on_run(i: int, j: int, outcome: Outcome, proof: bytes | None, _: bool) -> bool:
        plan = runnable[i]
        record = _judge(plan.checks[j], plan.checker, outcome, proof, plan.item.language)
        plan.records[j] = record
        return record.verdict is Verdict.ACCEPTED

    jobs = [Item(_request(p), p.runs) for p in runnable]
    outcomes = await executor.run_cases(jobs, on_run, stop_on_first_failure)
    by_plan = dict(zip(map(id, runnable), outcomes, strict=True))
    return [_result(p, by_plan.get(id(p))) for p in plans]


def check_size(cfg: Config, items: int, cases: int) -> None:
    """TooLarge unless a batch of `items` items and `cases` runs in all is within the limits."""
    if items > cfg.max_batch_items:
        raise TooLarge(f"{items} items; this server takes at most {cfg.max_batch_items} per batch")
    if cases > cfg.max_batch_cases:
        raise TooLarge(
            f"{cases} cases in all; this server takes at most {cfg.max_batch_cases} per batch"
        )


# -- from an item to runs ----------------------------------------------------------------------


def _unique_ids(items: list[RewardItem]) -> None:
    seen: dict[str, int] = {}
    for n, item in enumerate(items):
        key = f"{type(item.id).__name__}:{item.id}"
        if key in seen:
            raise InvalidRequest(
                f"items {seen[key]} and {n} have the same id {item.id!r}; ids must be unique"
            )
        seen[key] = n


def _plan(executor: Executor, item: RewardItem, n: int) -> _Plan:
    where = f"items[{n}] (id {item.id!r})"
    try:
        row = executor.registry.get(item.language)  # UnknownLanguage lists the supported ones
        checker = (
            DEFAULT_CHECKER
            if item.checker is None
            else Checker.parse(item.checker, strict=item.strict)
        )
    except InvalidRequest as exc:
        raise InvalidRequest(f"{where}: {exc}") from None
    if checker.mode == "custom":
        raise InvalidRequest(f"{where}: custom checkers are not available in /run_batch")
    code, how = item.code, None
    if code is None:
        extracted = extract(item.completion or "", row.name)
        code, how = (extracted.code or None), f"{extracted.kind}: {extracted.how}"
    base = code or ""
    strict = item.strict
    runs: list[Run] = []
    checks: list[_Check] = []
    for case in item.test_cases or ():
        if case.input is not None:
            if row.harness is None:
                raise InvalidRequest(
                    f"{where}: {row.name} has no expression test cases; use stdin cases"
                )
            seal: Seal | None = Seal(strict=strict, split=strict)
            runs.append(Run(seal=seal, case=(case.input, case.expected)))
            checks.append(_Check("expr", sealed=True))
        else:
            runs.append(Run(stdin=(case.stdin or "").encode()))
            checks.append(_Check("stdout", case.expected))
    asserts = list(item.asserts or ())
    if item.ground_truth is not None:
        asserts += _from_ground_truth(item, row.name, base, where, runs, checks)
    for statement in asserts:
        if not isinstance(statement, str):
            raise InvalidRequest(f"{where}: every assert must be a string")
        joined = guards.join(base, statement, row.name)
        if joined is not None:  # the answer apart from the assert (sandlot/judge/scripts/)
            runs.append(Run(code=joined.code, files=joined.files,
                            seal=Seal(tests_at=joined.tests_at)))  # fmt: skip
            checks.append(_Check("exit", sealed=True, tests=joined.tests))
            continue
        test, sealed = guards.guard_end(statement, row.name)
        program = f"{base}\n\n{test}"
        if sealed:
            program = guards.with_start(program, row.name)
        seal = Seal(tests_at=len(base) + 2, strict=strict, split=strict) if sealed else None
        runs.append(Run(code=program, seal=seal))
        checks.append(_Check("exit", sealed=sealed))
    if not runs:
        raise InvalidRequest(
            f"{where} has no tests: give test_cases, ground_truth (inputs/outputs) or asserts"
        )
    return _Plan(item, runs, checks, checker, code, how)


def _ground_truth(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as exc:  # bad JSON, an int of 5000 digits, deep
            raise InvalidRequest(f"{where}: ground_truth is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InvalidRequest(f"{where}: ground_truth must be an object with inputs and outputs")
    return value


def _from_ground_truth(
    item: RewardItem, language: str, code: str, where: str, runs: list[Run], checks: list[_Check]
) -> list[str]:
    """Runs for a ground_truth's inputs/outputs (appended); its assert_case list is returned."""
    gt = _ground_truth(item.ground_truth, where)
    asserts = gt.get("assert_case")
    if asserts is not None:
        if not isinstance(asserts, list):
            raise InvalidRequest(f"{where}: ground_truth.assert_case must be a list of strings")
        return asserts
    inputs, outputs = gt.get("inputs"), gt.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise InvalidRequest(f"{where}: ground_truth needs 'inputs' and 'outputs' lists")
    if len(inputs) != len(outputs):
        raise InvalidRequest(
            f"{where}: ground_truth has {len(inputs)} inputs but {len(outputs)} outputs"
        )
    fn_name = gt.get("fn_name")
    if fn_name is None:
        for value, expected in zip(inputs, outputs, strict=True):
            runs.append(Run(stdin=_text(value, where, "input").encode()))
            checks.append(_Check("stdout", _text(expected, where, "output")))
        return []
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise InvalidRequest(f"{where}: ground_truth.fn_name must be a Python identifier")
    if not dialect(language).python_driver:
        raise InvalidRequest(f"{where}: call-based ground_truth (fn_name) needs python")
    answer = PY_IMPORTS + code
    program = answer + harnesses.CALL.format(fn_name=fn_name, result=harnesses.CALL_RESULT)
    seal = Seal(tests_at=len(answer))  # the call is the test: the answer is compiled alone
    for value, expected in zip(inputs, outputs, strict=True):
        runs.append(Run(stdin=_arguments(value, where).encode(), code=program,
                        fetch=(harnesses.CALL_RESULT,), seal=seal))  # fmt: skip
        checks.append(_Check("value", _json_value(expected), sealed=True))
    return []


def _text(value: Any, where: str, what: str) -> str:
    """A stdin input or expected output: a string, or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise InvalidRequest(f"{where}: a ground_truth {what} of a stdin problem must be text")


def _arguments(value: Any, where: str) -> str:
    """A call's arguments as stdin: one JSON value per line."""
    if isinstance(value, str):
        return value  # already JSON values, one per line (LiveCodeBench)
    if isinstance(value, list):
        try:
            return "\n".join(json.dumps(arg) for arg in value)
        except (TypeError, ValueError):
            raise InvalidRequest(f"{where}: a call's arguments must be JSON values") from None
    raise InvalidRequest(f"{where}: a call-based input must be a list of arguments or a string")


def _json_value(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _request(plan: _Plan) -> CodeRequest:
    item = plan.item
    return CodeRequest(
        language=item.language, code=plan.code or "", files=item.files, **asked_of(item)
    )  # fmt: skip


# -- from outcomes to verdicts -----------------------------------------------------------------


def _judge(
    check: _Check, checker: Checker, outcome: Outcome, proof: bytes | None, language: str
) -> CaseRecord:
    record = CaseRecord(
        Verdict.ACCEPTED, round(outcome.wall_time, 6), round(outcome.cpu_time, 6),
        outcome.memory_peak,
    )  # fmt: skip
    if check.kind == "exit":
        record.verdict = of_execution(Execution(language=language, run=outcome))
        if record.verdict is not Verdict.ACCEPTED:
            record.detail = _tail(outcome) or describe(outcome)
        elif check.sealed and proof is None:
            record.verdict, record.detail = Verdict.WRONG_ANSWER, EARLY_EXIT
        elif check.tests is not None:
            attested = counts(proof or b"")
            held = attested.get("passed") == check.tests and not attested.get("failed", 0)
            if check.tests <= 0 or not held:
                record.verdict = Verdict.WRONG_ANSWER
                record.detail = f"the seal attests {attested}, where the assert has {check.tests}"
        return record
    bad = verdict_of(outcome)
    if bad is not None:
        record.verdict, record.detail = bad, _tail(outcome) or describe(outcome)
        return record
    if check.sealed and proof is None:
        record.verdict, record.detail = Verdict.WRONG_ANSWER, EARLY_EXIT
        return record
    ok, why = _compare(check, checker, outcome, proof)
    if not ok:
        record.verdict, record.detail = Verdict.WRONG_ANSWER, (why or "")[:DETAIL] or None
    return record


def _compare(
    check: _Check, checker: Checker, outcome: Outcome, proof: bytes | None
) -> tuple[bool, str | None]:
    if check.kind == "stdout":
        return checker.compare(outcome.stdout.decode(errors="replace"), check.expected)
    if check.kind == "expr":  # the driver's verdict: "1" or "0", then the value's repr
        assert proof is not None
        got = proof[1:].decode(errors="replace")
        return proof[:1] == b"1", f"value differs: got {got[:DETAIL]}"
    raw = outcome.files.pop(harnesses.CALL_RESULT, None)
    if raw is None:
        return False, "the program ended before its result was written"
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return False, "the result is not JSON"
    expected = check.expected
    if data == expected or (isinstance(expected, list) and len(expected) == 1
                            and data == expected[0]):  # fmt: skip
        return True, None
    return False, f"expected {_short(expected)}, got {_short(data)}"


def _tail(outcome: Outcome) -> str:
    return outcome.stderr[-DETAIL:].decode(errors="replace").strip()


def _short(value: Any) -> str:
    text = json.dumps(value, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _result(plan: _Plan, out: ItemOutcome | None) -> ItemResult:
    records = plan.records
    result = ItemResult(plan.item.id, 0.0, False, Verdict.ACCEPTED, records,
                        extraction=plan.extraction)  # fmt: skip
    if out is None:  # no code to run
        result.verdict, result.reason = Verdict.NO_CODE, "no code in the completion"
        return result
    result.compile, result.cached = out.compile, out.cached
    if out.error is not None:
        for r in records:
            if r.verdict is Verdict.SKIPPED:
                r.verdict = Verdict.SANDBOX_ERROR
        result.reason = out.error
    elif out.compile is not None and not out.compile.ok:
        verdict = verdict_of(out.compile)
        failed = Verdict.MEMORY_LIMIT if verdict is Verdict.MEMORY_LIMIT else Verdict.COMPILE_ERROR
        for r in records:
            if r.verdict is Verdict.SKIPPED:
                r.verdict = failed
        result.reason = out.compile.stderr[-500:].decode(errors="replace") or describe(out.compile)
    passed = sum(r.verdict is Verdict.ACCEPTED for r in records)
    result.score = passed / len(records)
    result.passed = passed == len(records)
    first = next((r for r in records if r.verdict is not Verdict.ACCEPTED), None)
    if first is not None:
        result.verdict = first.verdict
        result.reason = result.reason or first.detail
    return result
