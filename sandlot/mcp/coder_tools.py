"""The router's tools: route (which tool serves a request, and why), repo_test (a repository's
tests in a box) and code (an Aider task, proven by the repository's tests).

repo_test and code reach only repositories under the server's `coder_roots`, as `POST /code`
does. Both report progress while they run, and stop when their call is cancelled: Aider is
killed, no further test starts, the worktree is removed.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from sandlot import usecases
from sandlot.coder import ATTEMPTS, MAX_ATTEMPTS, CodeTask
from sandlot.coder import route as route_request
from sandlot.mcp import caller, shape
from sandlot.mcp.progress import reporting
from sandlot.mcp.shape import clip, section, tool_errors
from sandlot.service import Service
from sandlot.wire import CodeRequest, RouteResponse

# Which tool of this server serves each (route, mode) `route` decides.
TOOL_FOR = {
    ("sandbox", "run"): "run_code (or session_create + session_run to keep state)",
    ("sandbox", "judge"): "run_tests (your own cases) or judge (a benchmark problem)",
    ("coder", "code"): "code (repo_test first, to see the tests' state)",
    ("coder", "ask"): "code with ask=true (nothing is edited)",
}
ROUTES = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
TESTS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# Aider writes a branch in the repository and calls a language model: open world, not
# idempotent; it adds a branch and changes nothing else unless apply=true.
CODES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
# `POST /code`'s own words for the fields the tool shares with it.
AS_HTTP = {name: field.description or "" for name, field in CodeRequest.model_fields.items()}
Repo = Annotated[str, Field(description="path of a git repository on the server, under its "
                            "coder_roots", min_length=1, max_length=4096)]  # fmt: skip


class Routed(RouteResponse):
    tool: str = Field(description="the tool of this server to call next")


class Record(BaseModel):
    model_config = ConfigDict(extra="allow")
    notes: list[str] = []


def register(server: MCPServer, service: Service) -> None:
    @server.tool(annotations=ROUTES, structured_output=True)
    async def route(
        request: Annotated[
            str, Field(description="what the user wants done, in words", max_length=20_000)
        ],
        repo: Annotated[str | None, Field(description="a repository it is about")] = None,
        files: Annotated[list[str] | None, Field(description="files it is about")] = None,
    ) -> Annotated[CallToolResult, Routed]:
        """Which tool serves a request, and why: run code in the sandbox (run_code, sessions),
        judge code against tests (run_tests, judge), or change a repository with Aider (code).
        Call it when unsure; it explains its choice."""
        with tool_errors():
            decision = route_request(request, repo=repo, files=tuple(files or ()))
        out = Routed(**decision.to_dict(), tool=TOOL_FOR.get((decision.route, decision.mode), ""))
        text = (f"{out.route} ({out.mode}): call {out.tool}\nbecause:\n"
                + "".join(f"- {r}\n" for r in out.reasons))  # fmt: skip
        return shape.result(text, out)

    @server.tool(annotations=TESTS, structured_output=True)
    async def repo_test(
        repo: Repo,
        ctx: Context,
        cmd: Annotated[
            str | None,
            Field(
                description="the test command, run by bash in the box "
                "(default: pytest when the repository has pytest tests)",
                max_length=10_000,
            ),
        ] = None,
        timeout_s: Annotated[
            float | None,
            Field(gt=0, allow_inf_nan=False, description="wall-clock seconds for the command"),
        ] = None,
    ) -> Annotated[CallToolResult, Record]:
        """Run a repository's tests in a fresh box (its files, no network, limits) and say
        whether they pass, with their output."""
        with tool_errors():
            async with reporting(ctx, "tests running"):
                outcome = await usecases.served_repo_tests(service, repo, cmd, timeout_s)
        notes: list[str] = []
        record: dict[str, Any] = outcome.to_dict(full=True)
        record["stdout"] = clip(outcome.stdout, "stdout", notes)
        record["stderr"] = clip(outcome.stderr, "stderr", notes)
        text = (outcome.summary() + "\n" + section("stdout", record["stdout"])
                + section("stderr", record["stderr"]))  # fmt: skip
        return shape.result(text, record, notes, error=outcome.error is not None)

    @server.tool(annotations=CODES, structured_output=True)
    async def code(
        repo: Repo,
        message: Annotated[
            str, Field(description="what to change, in words", min_length=1, max_length=100_000)
        ],
        ctx: Context,
        files: Annotated[list[str] | None, Field(description="files Aider may edit")] = None,
        test_cmd: Annotated[
            str | None,
            Field(
                description="the tests that prove the change (default: the repository's pytest)",
                max_length=10_000,
            ),
        ] = None,
        model: Annotated[
            str | None, Field(description="litellm model name (default: the server's)")
        ] = None,
        max_attempts: Annotated[int, Field(ge=1, le=MAX_ATTEMPTS)] = ATTEMPTS,
        ask: Annotated[bool, Field(description="answer a question; edit nothing")] = False,
        setup: Annotated[str | None, Field(description=AS_HTTP["setup"], max_length=65536)] = None,
        allow_test_changes: Annotated[
            bool, Field(description=AS_HTTP["allow_test_changes"])
        ] = False,
    ) -> Annotated[CallToolResult, Record]:
        """Have Aider change a repository on a new branch, then run its tests in the sandbox,
        feeding failures back, until they pass or attempts run out. Returns the status
        (passed, failed_tests, no_changes, llm_error, timeout, answered), the branch and diff."""
        task = CodeTask(
            repo=repo, message=message, files=files or [], model=model, test_cmd=test_cmd,
            max_attempts=max_attempts, ask=ask, setup=setup,
            allow_test_changes=allow_test_changes, tenant=str(caller.owner(ctx).tenant),
        )  # fmt: skip
        with tool_errors():
            async with reporting(ctx, "aider working") as step:
                result = await usecases.code(service, task, step)
        notes: list[str] = []
        record = result.to_dict()
        diff = record["diff"] = clip(result.diff, "the diff", notes)
        lines = [f"{result.status}: {result.message}"]
        if result.branch:
            lines.append(f"branch {result.branch} ({result.base or ''}..{result.head or ''})")
        if result.answer:
            lines.append(clip(result.answer, "the answer", notes))
        text = "\n".join(lines) + "\n" + section("diff", diff)
        return shape.result(text, record, notes)
