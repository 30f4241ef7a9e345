"""repo_grade: a candidate patch graded SWE-bench style, as `POST /repo/grade` grades it.

The arguments are that route's request (`sandlot.wire.repos.GradeRequest`, its descriptions
too), validated by it and handed to the route's own function with the caller's tenant, so the
two faces cannot drift: a path only under `coder_roots`, test files restored from the base
unless `allow_test_changes`, the environment cached per tenant.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, ValidationError

from sandlot import convert, usecases
from sandlot.errors import InvalidRequest
from sandlot.mcp import caller, shape
from sandlot.mcp.coder_tools import Record
from sandlot.mcp.progress import reporting
from sandlot.mcp.shape import section, tool_errors
from sandlot.service import Service
from sandlot.wire import GradeRequest

# Grading reads the repository and writes only its own cache: idempotent, closed world (the
# setup phase reaches only the package registries, through the egress proxy).
GRADES = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _said(name: str) -> Any:
    """The HTTP request's description of field `name`, for the tool's schema."""
    return Field(description=GradeRequest.model_fields[name].description)


def _request(arguments: dict[str, Any]) -> GradeRequest:
    try:
        return GradeRequest.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidRequest(
            "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'request'}: {e['msg']}" for e in exc.errors()
            )
        ) from exc


def _text(out: dict[str, Any]) -> str:
    """Status and message (which names the test files the patch touched), each test's verdict,
    the tail of the tests' output."""
    lines = [f"{out['status']}: {out['message']}" if out["message"] else out["status"]]
    for group in ("fail_to_pass", "pass_to_pass"):
        lines += [f"{verdict:8} {test} ({group})" for test, verdict in out[group].items()]
    run = out.get("run") or {}  # its output is a tail already (sandlot.repos.envs.TAIL)
    return "\n".join(lines) + "\n" + section("test output", run.get("stdout_tail") or "")


def register(server: MCPServer, service: Service) -> None:
    @server.tool(annotations=GRADES, structured_output=True)
    async def repo_grade(
        base: Annotated[str, _said("base")],
        ctx: Context,
        repo: Annotated[str | None, _said("repo")] = None,
        tarball: Annotated[str | None, _said("tarball")] = None,
        patch: Annotated[str, _said("patch")] = "",
        test_patch: Annotated[str, _said("test_patch")] = "",
        fail_to_pass: Annotated[list[str] | None, _said("fail_to_pass")] = None,
        pass_to_pass: Annotated[list[str] | None, _said("pass_to_pass")] = None,
        setup: Annotated[str | None, _said("setup")] = "auto",
        test: Annotated[str, _said("test")] = "auto",
        allow_test_changes: Annotated[bool, _said("allow_test_changes")] = False,
        test_paths: Annotated[list[str] | None, _said("test_paths")] = None,
        timeout: Annotated[float | None, _said("timeout")] = None,
    ) -> Annotated[CallToolResult, Record]:
        """Grade a candidate patch to a repository as SWE-bench does: its environment set up
        (cached), the patch applied to the base commit, test files restored from the base
        unless allow_test_changes, then the tests run in a fresh box with no network. Says
        resolved or not, each listed test's verdict, and the test files the patch touched."""
        given = {"repo": repo, "tarball": tarball, "base": base, "patch": patch,
                 "test_patch": test_patch, "fail_to_pass": fail_to_pass or [],
                 "pass_to_pass": pass_to_pass or [], "setup": setup, "test": test,
                 "allow_test_changes": allow_test_changes, "test_paths": test_paths or [],
                 "timeout": timeout}  # fmt: skip
        with tool_errors():
            req = _request(given)
            async with reporting(ctx, "grading"):
                fields = convert.grade_fields(req, caller.owner(ctx).tenant)
                repository = convert.repository(service, req)
                out: dict[str, Any] = await usecases.repo_task(service, "grade", repository, fields)
        return shape.result(_text(out), out)
