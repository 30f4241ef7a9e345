"""Wire types of `/run_jupyter` (SandboxFusion's shapes, plus extra fields) and of sessions.

A session's execution follows the hosted code interpreters (E2B's `execute`, Together's TCI):
outputs typed as Jupyter's messages (`stdout`, `stderr`, `display_data`, `execute_result`,
`error`), streamed as NDJSON lines ending with an `end` line, or folded into one reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandlot.wire.run import CommandRunResult, RunStatus
from sandlot.wire.types import MemoryMB, NullableFiles, RelPath, Seconds

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class RunJupyterRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cells: list[str] = Field(description="code cells run one after another in one kernel")
    cell_timeout: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = Field(
        0, description="seconds per cell; 0: no limit of its own"
    )
    total_timeout: Seconds | None = Field(45, description="seconds for all the cells")
    memory_limit_MB: MemoryMB = Field(-1, description="MiB for the kernel; -1: default")
    kernel: Literal["python3"] | None = "python3"
    files: NullableFiles | None = Field(None, description="path -> base64 content")
    fetch_files: list[RelPath] | None = Field(None, description="paths to read back after")


class CellRunResult(BaseModel):
    stdout: str = ""
    stderr: str = ""
    display: list[dict[str, Any]] = Field([], description="MIME bundles, in order")
    error: list[dict[str, Any]] = Field([], description="ename, evalue, traceback")
    # sandlot's extra fields
    execution_count: int | None = None
    status: Literal["ok", "error"] = "ok"
    limit: str | None = Field(
        None, description="which limit stopped the cell: time, memory, output"
    )
    kernel_status: Literal["idle", "restarted", "dead"] = Field(
        "idle", description="restarted: a new kernel runs the next cell (variables are lost)"
    )
    execution_time: float | None = None
    truncated: bool = False


class RunJupyterResponse(BaseModel):
    status: RunStatus
    message: str = ""
    driver: CommandRunResult | None = None
    cells: list[CellRunResult] = []
    executor_pod_name: str | None = None
    files: dict[str, str] = {}


PauseAfter = Annotated[
    float,
    Field(ge=0, allow_inf_nan=False, description="seconds unused before it is paused (0: never)"),
]
SnapshotId = Annotated[str, Field(max_length=64, description="a snapshot's id")]


class SessionLimitsFields(BaseModel):
    model_config = ConfigDict(extra="ignore")

    idle_timeout: Seconds | None = Field(None, description="seconds unused before it ends")
    lifetime: Seconds | None = Field(None, description="seconds it lives, however busy")
    memory_limit_MB: MemoryMB = Field(None, description="MiB for everything in its box")
    pause_after: PauseAfter | None = Field(
        None, description="seconds unused before its state goes to disk and its box is freed, "
        "until its next use (0: never; default: the server's session_pause_after)",
    )  # fmt: skip


class SessionCreate(SessionLimitsFields):
    language: str | None = Field(
        None, description="python (an IPython kernel, the default) or bash (a shell)"
    )
    files: NullableFiles | None = Field(None, description="path -> base64 content, in its work dir")
    snapshot: SnapshotId | None = Field(
        None, description="start from this snapshot (POST /sessions/{id}/snapshot made it)"
    )


class SessionInfo(BaseModel):
    id: str
    language: str
    status: Literal["idle", "busy", "paused", "ended"]
    kernel: dict[str, str] = {}
    created_at: float = Field(description="Unix time")
    expires_in: float = Field(description="seconds left of its lifetime")
    idle_timeout: float
    idle_for: float
    execution_count: int
    memory_limit_MB: int
    memory_bytes: int | None = None
    cpu_time: float | None = None
    ended: str | None = None
    paused_at: float | None = Field(None, description="Unix time it was paused, if it is")
    resumes: int = Field(0, description="times it was paused and started again")
    restore_error: str | None = Field(
        None, description="why its state (variables, environment) could not be read back from "
        "the snapshot it started from; its files are there",
    )  # fmt: skip


class ForkRequest(SessionLimitsFields):
    count: int = Field(1, ge=1, description="sessions to make (at most the server's fork_max)")


class NotCopied(BaseModel):
    name: str
    type: str
    why: str


class Holds(BaseModel):
    """What a snapshot (or a fork) kept of its session."""

    files: bool = Field(True, description="the work dir, whatever was installed or built there")
    names: int | None = Field(None, description="Python: the names kept in the kernel")
    cwd: str | None = Field(None, description="Python: the kernel's working directory")
    environment: bool = Field(True, description="the environment (and a shell's functions)")
    not_copied: list[NotCopied] = Field(
        [], description="Python: names that could not be copied (open files, sockets, "
        "generators, threads, ...) and why",
    )  # fmt: skip
    not_copied_count: int = 0


class ForkResponse(BaseModel):
    parent_id: str
    sessions: list[SessionInfo]
    holds: Holds


class SnapshotInfo(BaseModel):
    id: str
    language: str
    session_id: str = Field(description="the session it was taken of")
    created_at: float = Field(description="Unix time")
    status: Literal["writing", "ready", "failed"] = Field(
        description="writing: its layers are being copied to disk (it can be used already)"
    )
    error: str | None = None
    bytes: int = Field(description="bytes its layers take (shared with the snapshots below)")
    layers: int
    holds: Holds


class SnapshotDeleted(BaseModel):
    id: str
    deleted: bool = True


class ExecuteRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    code: str
    timeout: Seconds | None = Field(None, description="seconds (default: the server's run_timeout)")
    stream: bool = Field(False, description="NDJSON lines as outputs come (or Accept: NDJSON)")


class ExecuteResponse(BaseModel):
    session_id: str
    status: Literal["ok", "error"]
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = Field(
        [], description="typed stdout, stderr, display_data, execute_result, error, in order"
    )
    stdout: str = ""
    stderr: str = ""
    error: dict[str, Any] | None = Field(None, description="the first error: ename, evalue, ...")
    exit_code: int | None = Field(None, description="a bash cell's exit status")
    limit: str | None = Field(None, description="time, memory or output, if one stopped it")
    kernel_restarted: bool = Field(False, description="a new kernel: variables are lost")
    truncated: bool = False
    execution_time: float = 0.0
    session_ended: str | None = Field(None, description="why the session ended, if it did")
    resumed: bool = Field(
        False, description="the session was paused (state on disk, box freed) and was started "
        "again for this execution",
    )  # fmt: skip


class FileWritten(BaseModel):
    path: str
    size: int


class Interrupted(BaseModel):
    interrupted: bool = Field(description="false if nothing was running")


def plain_traceback(error: Mapping[str, Any]) -> str:
    """An error output as a terminal would print it, without the kernel's colour codes."""
    lines = error["traceback"] or [f"{error['ename']}: {error['evalue']}"]
    return ANSI.sub("", "\n".join(lines)) + "\n"
