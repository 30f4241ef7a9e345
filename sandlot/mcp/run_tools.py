"""The stateless tools: run_code, run_tests, judge, languages, datasets, prompt.

Each builds the HTTP API's request model from its arguments (so the same checks and limits
apply), calls what the HTTP route calls, and shapes the route's response for a transcript.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

# convert's names load on first use: its judge's (and the judge) at the first judging
from sandlot import convert, usecases
from sandlot.mcp import shape
from sandlot.mcp.shape import clip, section, tool_errors
from sandlot.service import Service
from sandlot.wire import EvalResult, Prompt, RunCodeRequest, RunCodeResponse, TestCaseIn, TestConfig

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# A run changes nothing outside its box, which is gone after it: safe to repeat.
RUNS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Language = Annotated[
    str, Field(description="a language name or alias: python, cpp, java, javascript, go, rust, "
               "bash, ... (the languages tool lists them)", max_length=64)
]  # fmt: skip
Code = Annotated[str, Field(description="the program's source text")]
TextFiles = Annotated[
    dict[str, str] | None,
    Field(description="files written to the work dir first: relative path -> text content"),
]
Seconds = Annotated[float | None, Field(gt=0, allow_inf_nan=False, description="seconds")]
MemoryMB = Annotated[int | None, Field(ge=1, description="MiB for the run (default: server's)")]


class RunResult(RunCodeResponse):
    notes: list[str] = Field([], description="what was cut from the result, and how to see it")


class JudgeResult(EvalResult):
    notes: list[str] = Field([], description="what was cut from the result, and how to see it")


class Languages(BaseModel):
    languages: list[dict[str, Any]]


class Datasets(BaseModel):
    datasets: list[str]


def text_files(files: dict[str, str] | None) -> dict[str, str]:
    return {k: base64.b64encode(v.encode()).decode() for k, v in (files or {}).items()}


def run_text(out: RunCodeResponse, notes: list[str]) -> tuple[str, RunResult]:
    """A run's transcript text, and its structured result with long output cut alike."""
    res = RunResult.model_validate(out.model_dump())
    res.files = {}  # they travel as embedded resources
    res.stdout = clip(out.stdout, "stdout", notes)
    res.stderr = clip(out.stderr, "stderr", notes)
    for step in (res.compile_result, res.run_result):
        if step is not None:  # the same text as the top level: kept there only
            step.stdout = step.stderr = None
    run = out.run_result or out.compile_result
    how = f"exit code {out.exit_code}" if out.exit_code is not None else ""
    if run is not None and run.limit:
        how = f"stopped by the {run.limit} limit"
    if out.compile_result is not None and out.run_result is None and out.status != "Success":
        how = f"compilation failed ({how})"
    times = f", {run.execution_time:.3f} s" if run and run.execution_time is not None else ""
    head = f"{out.status}: {how}{times}".rstrip(": ")
    if out.message:
        head += f"\n{out.message}"
    text = head + "\n" + section("stdout", res.stdout or "") + section("stderr", res.stderr or "")
    return text, res


def register(server: MCPServer, service: Service) -> None:
    @server.tool(annotations=RUNS, structured_output=True)
    async def run_code(
        language: Language,
        code: Code,
        ctx: Context,
        stdin: Annotated[str | None, Field(description="text fed to the program's stdin")] = None,
        files: TextFiles = None,
        fetch_files: Annotated[
            list[str] | None, Field(description="paths to read back after the run")
        ] = None,
        run_timeout: Seconds = None,
        compile_timeout: Seconds = None,
        memory_limit_MB: MemoryMB = None,
    ) -> Annotated[CallToolResult, RunResult]:
        """Run a program once in a fresh isolated box (no network, limits on time, memory and
        output) and return its stdout, stderr, exit status, which limit stopped it, and times.
        Nothing persists between calls: use session_create for state."""
        with tool_errors():
            req = RunCodeRequest(
                language=language, code=code, stdin=stdin, files=text_files(files),
                fetch_files=fetch_files, run_timeout=run_timeout,
                compile_timeout=compile_timeout, memory_limit_MB=memory_limit_MB,
            )  # fmt: skip
            execution = await usecases.run(service, convert.code_request(req))
            out = convert.run_response(execution)
            notes: list[str] = []
            text, res = run_text(out, notes)
            blocks = shape.file_blocks(execution.files, "run")
            return shape.result(text, res, notes, blocks)

    @server.tool(annotations=RUNS, structured_output=True)
    async def run_tests(
        language: Language,
        code: Code,
        test_cases: Annotated[
            list[TestCaseIn],
            Field(
                min_length=1,
                description="each {input, expected}: an expression and its "
                "value (Python, JavaScript, ...), or {stdin, expected_stdout}",
            ),
        ],
        ctx: Context,
        run_timeout: Seconds = None,
        memory_limit_MB: MemoryMB = None,
    ) -> Annotated[CallToolResult, RunResult]:
        """Judge a program against test cases, each in its own box, and return a verdict per
        case (expected, actual, error) and whether all passed."""
        with tool_errors():
            req = RunCodeRequest(
                language=language, code=code, test_cases=test_cases, run_timeout=run_timeout,
                memory_limit_MB=memory_limit_MB,
            )  # fmt: skip
            code_req = convert.code_request(req)
            run = await usecases.run_tests(service, code_req, convert.test_cases(req))
            out = convert.test_response(run)
            notes: list[str] = []
            text, res = run_text(out, notes)
            lines = [f"{sum(c.passed for c in out.tests or [])}/{len(out.tests or [])} passed"]
            for i, case in enumerate(res.tests or [], 1):
                case.run_result = None
                given = case.input if case.input is not None else case.stdin
                got = case.error or case.actual
                mark = "PASS" if case.passed else "FAIL"
                lines.append(f"{mark} case {i}: {clip(given, 'input', notes, 200)!r} expected "
                             f"{clip(case.expected, 'expected', notes, 200)!r}, got "
                             f"{clip(got, 'actual', notes, 500)!r}")  # fmt: skip
            return shape.result("\n".join(lines) + "\n" + text, res, notes)

    @server.tool(annotations=RUNS, structured_output=True)
    async def judge(
        dataset: Annotated[
            str, Field(description="a dataset id (the datasets tool lists them)", max_length=128)
        ],
        problem_id: Annotated[int | str, Field(description="the problem's id in the dataset")],
        completion: Annotated[
            str, Field(description="the model's answer: code, or text with a code block")
        ],
        ctx: Context,
        language: Annotated[str | None, Field(description="for multi-language datasets")] = None,
    ) -> Annotated[CallToolResult, JudgeResult]:
        """Judge a completion on one benchmark problem (HumanEval, MBPP, MultiPL-E, ...): the
        verdict, the reason, and each test's outcome."""
        with tool_errors():
            cfg = convert.judge_config(TestConfig(), language)
            result = await usecases.submit(service, dataset, problem_id, completion, cfg)
            out = convert.eval_result(result, simple=True)
            notes: list[str] = []
            res = JudgeResult.model_validate(out.model_dump())
            res.full_code = clip(res.full_code, "full_code", notes, 4000)
            for test in res.tests:
                info = test.exec_info
                info.stdout = clip(info.stdout, "a test's stdout", notes, 2000)
                info.stderr = clip(info.stderr, "a test's stderr", notes, 2000)
                info.compile_result = info.run_result = None
                info.files = {}
            verdict = "accepted" if out.accepted else "rejected"
            reason = (out.extra or {}).get("reason") or ""
            lines = [f"{verdict}: {dataset} problem {problem_id}" + (f" ({reason})"
                     if reason else "")]  # fmt: skip
            for i, test in enumerate(res.tests, 1):
                lines.append(f"test {i}: {test.verdict or ('passed' if test.passed else 'failed')}")
                lines.append(section("stderr", test.exec_info.stderr or "").rstrip())
            return shape.result("\n".join(x for x in lines if x), res, notes)

    @server.tool(annotations=READ_ONLY, structured_output=True)
    async def languages(ctx: Context) -> Annotated[CallToolResult, Languages]:
        """The languages this server runs: name, aliases, version, and why one is unavailable."""
        rows = service.languages()
        text = "\n".join(
            f"{r['name']} {r['version'] or ''}".rstrip()
            + ("" if r["available"] else f" (unavailable: {r['reason']})")
            + (f" [aliases: {', '.join(r['aliases'])}]" if r["aliases"] else "")
            for r in rows
        )
        return shape.result(text, Languages(languages=rows))

    @server.tool(annotations=READ_ONLY, structured_output=True)
    async def datasets(ctx: Context) -> Annotated[CallToolResult, Datasets]:
        """The benchmark datasets this server judges (ids for the judge and prompt tools)."""
        with tool_errors():
            names = usecases.dataset_names(service)
        return shape.result("\n".join(names), Datasets(datasets=names))

    @server.tool(annotations=READ_ONLY, structured_output=True)
    async def prompt(
        dataset: Annotated[str, Field(description="a dataset id", max_length=128)],
        problem_id: Annotated[int | str, Field(description="the problem's id in the dataset")],
        ctx: Context,
        language: Annotated[str | None, Field(description="for multi-language datasets")] = None,
    ) -> Annotated[CallToolResult, Prompt]:
        """A benchmark problem's prompt, as a model would be given it."""
        with tool_errors():
            cfg = convert.judge_config(TestConfig(), language)
            row = await usecases.prompt_by_id(service, dataset, problem_id, cfg)
            out = Prompt(**row)
        return shape.result(out.prompt, out)
