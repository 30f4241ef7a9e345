"""The stateful tools: a Python kernel or a bash shell kept across calls.

session_create, session_run (its outputs stream as progress notifications), session_upload,
session_download, session_close; session_snapshot and session_fork branch one (set it up once,
try N things from there). A session belongs to the caller that created it (`caller`): any other
caller is told it does not exist. The sessions an MCP connection opened end with it.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ContentBlock, ImageContent, ToolAnnotations
from pydantic import Field

from sandlot import usecases
from sandlot.convert import execute_response, fork_response, session_info, snapshot_info
from sandlot.errors import InvalidRequest
from sandlot.mcp import caller, shape
from sandlot.mcp.shape import clip, section, tool_errors
from sandlot.service import Service
from sandlot.sessions import Result
from sandlot.wire import (
    ExecuteResponse,
    FileWritten,
    ForkResponse,
    Holds,
    SessionInfo,
    SnapshotInfo,
)

SessionId = Annotated[str, Field(description="the id session_create returned", max_length=128)]
Path = Annotated[str, Field(description="a path relative to the session's work dir",
                            min_length=1, max_length=4096)]  # fmt: skip
PROGRESS_CHARS = 2000  # of one output event in a progress message
IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")

OPENS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
ENDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
READS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class RunResult(ExecuteResponse):
    notes: list[str] = Field([], description="what was cut from the result, and how to see it")


class Download(FileWritten):
    pass


def images(result: Result) -> list[ContentBlock]:
    """Figures a cell displayed, as images the client can show."""
    out: list[ContentBlock] = []
    for bundle in result.displays:
        for mime in IMAGES:
            data = bundle.get(mime)
            if isinstance(data, str):
                out.append(ImageContent(type="image", data=data.strip(), mime_type=mime))
                break
    return out


def run_text(res: RunResult) -> str:
    status = res.status if res.exit_code is None else f"{res.status}, exit code {res.exit_code}"
    head = f"[{res.execution_count or '-'}] {status}, {res.execution_time:.3f} s"
    if res.limit:
        head += f"; stopped by the {res.limit} limit"
    if res.kernel_restarted:
        head += "; a new kernel was started: variables are lost"
    if res.session_ended:
        head += f"; the session ended: {res.session_ended}"
    text = head + "\n" + section("stdout", res.stdout) + section("stderr", res.stderr)
    for output in res.outputs:
        if output["type"] == "execute_result":
            text += section("result", str(output["data"].get("text/plain", "")))
    if res.error:
        tb = "\n".join(res.error.get("traceback") or []) or f"{res.error.get('ename')}: " \
             f"{res.error.get('evalue')}"  # fmt: skip
        text += section("error", tb)
    return text


def kept(holds: Holds) -> str:
    """What a snapshot or fork could not copy, as a line a model reads."""
    if not holds.not_copied_count:
        return ""
    names = ", ".join(f"{n.name} ({n.type})" for n in holds.not_copied[:10])
    return f"; not copied (they are not in the new state): {names}"


def register(server: MCPServer, service: Service, opened: caller.Opened) -> None:
    @server.tool(annotations=OPENS, structured_output=True)
    async def session_create(
        ctx: Context,
        language: Annotated[
            Literal["python", "bash"],
            Field(description="python: an IPython kernel; bash: a shell"),
        ] = "python",
        files: Annotated[
            dict[str, str] | None, Field(description="relative path -> text, in its work dir")
        ] = None,
        snapshot: Annotated[
            str | None,
            Field(description="start from this snapshot (session_snapshot made it)", max_length=64),
        ] = None,
        idle_timeout: Annotated[
            float | None,
            Field(gt=0, allow_inf_nan=False, description="seconds unused before it ends"),
        ] = None,
        memory_limit_MB: Annotated[int | None, Field(ge=1, description="MiB for its box")] = None,
    ) -> Annotated[CallToolResult, SessionInfo]:
        """Open a session: an isolated box whose Python kernel (or bash shell), variables,
        files and processes persist across session_run calls. End it with session_close."""
        with tool_errors():
            session = await usecases.create_session(
                service, None if snapshot and language == "python" else language, caller.owner(ctx),
                idle_timeout=idle_timeout, memory_mb=memory_limit_MB,
                files={k: v.encode() for k, v in (files or {}).items()}, snapshot=snapshot,
            )  # fmt: skip
            opened.add(caller.connection(ctx), session.id)
            info = session_info(session)
        text = (f"session {info.id} ({info.language}, {info.kernel.get('language_version', '')}"
                f") is open; it ends after {info.idle_timeout:g} s unused")  # fmt: skip
        return shape.result(text, info)

    @server.tool(annotations=OPENS, structured_output=True)
    async def session_run(
        session_id: SessionId,
        code: Annotated[str, Field(description="Python (a cell) or bash commands")],
        ctx: Context,
        timeout_s: Annotated[
            float | None,
            Field(
                gt=0,
                allow_inf_nan=False,
                description="seconds for this run (default: the server's)",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, RunResult]:
        """Run code in a session, keeping its state; outputs stream as progress while it runs.
        Returns stdout, stderr, the cell's value, any error, and figures as images."""
        with tool_errors():
            tenant = caller.owner(ctx).tenant
            execution = await usecases.execute_in_session(
                service, session_id, tenant, code, timeout_s
            )
            result = Result()
            try:
                async for event in execution:
                    result.add(event)
                    if event["type"] in ("stdout", "stderr"):
                        await ctx.report_progress(
                            len(result.outputs), None, event["text"][-PROGRESS_CHARS:]
                        )
            finally:
                execution.abandon()  # cancelled or gone: the cell is interrupted
            res = RunResult.model_validate(execute_response(session_id, result).model_dump())
            notes: list[str] = []
            res.stdout = clip(res.stdout, "stdout", notes)
            res.stderr = clip(res.stderr, "stderr", notes)
            res.outputs = [o for o in res.outputs if o["type"] not in ("stdout", "stderr")]
            if res.truncated:
                notes.append("the output went over the session's output limit and was stopped")
            return shape.result(run_text(res), res, notes, images(result))

    @server.tool(annotations=OPENS, structured_output=True)
    async def session_upload(
        session_id: SessionId,
        path: Path,
        ctx: Context,
        content: Annotated[str, Field(description="the file's text (or base64, see encoding)")],
        encoding: Annotated[
            Literal["text", "base64"],
            Field(description="text: content is the file as UTF-8; base64: content is base64"),
        ] = "text",
    ) -> Annotated[CallToolResult, FileWritten]:
        """Write a file into a session's work dir (replacing one there)."""
        with tool_errors():
            if encoding == "base64":
                try:
                    data = base64.b64decode(content, validate=True)
                except (binascii.Error, ValueError):
                    raise InvalidRequest("content is not valid base64") from None
            else:
                data = content.encode()
            tenant = caller.owner(ctx).tenant
            await usecases.put_session_file(service, session_id, tenant, path, data)
        return shape.result(
            f"wrote {path} ({len(data):,} bytes)", FileWritten(path=path, size=len(data))
        )

    @server.tool(annotations=READS, structured_output=True)
    async def session_download(
        session_id: SessionId, path: Path, ctx: Context
    ) -> Annotated[CallToolResult, Download]:
        """Read a file from a session's work dir; it comes back as an embedded resource."""
        with tool_errors():
            tenant = caller.owner(ctx).tenant
            data = await usecases.get_session_file(service, session_id, tenant, path)
        blocks = shape.file_blocks({path: data}, f"sessions/{session_id}")
        return shape.result(f"{path} ({len(data):,} bytes)", Download(path=path, size=len(data)),
                            extra=blocks)  # fmt: skip

    @server.tool(annotations=OPENS, structured_output=True)
    async def session_snapshot(
        session_id: SessionId, ctx: Context
    ) -> Annotated[CallToolResult, SnapshotInfo]:
        """Freeze a session's state (its files, and a kernel's variables or a shell's
        environment) as a snapshot the session goes on from; session_create with `snapshot`
        starts a session from it later (roll back to it, or branch from it)."""
        with tool_errors():
            tenant = caller.owner(ctx).tenant
            info = snapshot_info(await usecases.snapshot_session(service, session_id, tenant))
        return shape.result(f"snapshot {info.id} of session {session_id}" + kept(info.holds), info)

    @server.tool(annotations=OPENS, structured_output=True)
    async def session_fork(
        session_id: SessionId,
        ctx: Context,
        count: Annotated[int, Field(ge=1, description="how many sessions to make")] = 1,
    ) -> Annotated[CallToolResult, ForkResponse]:
        """Make `count` new sessions with this session's state (files, variables), each apart
        from the others: try different things from the same point. The session goes on."""
        with tool_errors():
            tenant = caller.owner(ctx).tenant
            children, state = await usecases.fork_session(service, session_id, tenant, count)
            for child in children:
                opened.add(caller.connection(ctx), child.id)
            out = fork_response(session_id, children, state)
        ids = ", ".join(s.id for s in out.sessions)
        return shape.result(f"{len(out.sessions)} sessions from {session_id}: {ids}"
                            + kept(out.holds), out)  # fmt: skip

    @server.tool(annotations=ENDS, structured_output=True)
    async def session_close(
        session_id: SessionId, ctx: Context
    ) -> Annotated[CallToolResult, SessionInfo]:
        """End a session now: its box, processes and files are gone."""
        with tool_errors():
            tenant = caller.owner(ctx).tenant
            session = await usecases.delete_session(service, session_id, tenant)
            opened.discard(caller.connection(ctx), session_id)
            info = session_info(session)
        return shape.result(f"session {session_id} is closed", info)
