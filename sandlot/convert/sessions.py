"""Conversions between the sessions layer's results and the wire types. No I/O, no policy."""

from __future__ import annotations

import base64
from typing import Any

from sandlot.convert.run import POD
from sandlot.sessions import NotebookRun, Paused, Result, Session, Snapshot
from sandlot.wire import (
    CellRunResult,
    CommandRunResult,
    CommandRunStatus,
    ExecuteResponse,
    ForkResponse,
    Holds,
    RunCodeResponse,
    RunJupyterResponse,
    RunStatus,
    SessionInfo,
    SnapshotInfo,
    plain_traceback,
)


def session_info(session: Session | Paused) -> SessionInfo:
    return SessionInfo.model_validate(session.info())


def snapshot_info(record: Snapshot) -> SnapshotInfo:
    return SnapshotInfo.model_validate(record.info())


def fork_response(parent_id: str, children: list[Session], state: dict[str, Any]) -> ForkResponse:
    holds = Holds.model_validate({k: v for k, v in state.items() if k != "bytes"})
    return ForkResponse(
        parent_id=parent_id, sessions=[session_info(c) for c in children], holds=holds
    )


def execute_response(session_id: str, result: Result) -> ExecuteResponse:
    errors = result.errors
    return ExecuteResponse(
        session_id=session_id,
        status="ok" if result.status == "ok" else "error",
        execution_count=result.execution_count,
        outputs=result.outputs,
        stdout=result.text("stdout"),
        stderr=result.text("stderr"),
        error=errors[0] if errors else None,
        exit_code=result.exit_code,
        limit=result.limit,
        kernel_restarted=result.kernel_restarted,
        truncated=result.truncated,
        execution_time=result.execution_time,
        session_ended=result.session_ended,
        resumed=result.resumed,
    )


def cell(result: Result) -> CellRunResult:
    return CellRunResult(
        stdout=result.text("stdout"),
        stderr=result.text("stderr"),
        display=result.displays,
        error=result.errors,
        execution_count=result.execution_count,
        status="ok" if result.status == "ok" else "error",
        limit=result.limit,
        kernel_status=(
            "dead" if result.session_ended else "restarted" if result.kernel_restarted else "idle"
        ),
        execution_time=result.execution_time,
        truncated=result.truncated,
    )


def jupyter_response(run: NotebookRun) -> RunJupyterResponse:
    """SandboxFusion's shape: Success once the cells ran (a cell's error is the cell's), Failed
    when total_timeout cut them short (the cells that ran are still reported)."""
    driver = CommandRunResult(
        status=CommandRunStatus.TimeLimitExceeded if run.timed_out else CommandRunStatus.Finished,
        execution_time=round(run.execution_time, 6),
        return_code=None if run.timed_out else 0,
        stdout="",
        stderr="",
    )
    return RunJupyterResponse(
        status=RunStatus.Failed if run.timed_out else RunStatus.Success,
        driver=driver,
        cells=[cell(r) for r in run.cells],
        executor_pod_name=POD,
        files={k: base64.b64encode(v).decode() for k, v in run.files.items()},
    )


def session_run_response(session_id: str, result: Result) -> RunCodeResponse:
    """An execution in a session as /run_code's reply: outputs as a terminal shows them (the
    last expression's value on stdout, as a notebook prints it; tracebacks on stderr)."""
    stdout: list[str] = []
    stderr: list[str] = []
    for event in result.outputs:
        kind = event["type"]
        if kind in ("stdout", "stderr"):
            (stdout if kind == "stdout" else stderr).append(event["text"])
        elif kind == "execute_result" and "text/plain" in event["data"]:
            stdout.append(f"{event['data']['text/plain']}\n")
        elif kind == "error":
            stderr.append(plain_traceback(event))
    timed_out = result.limit == "time"
    code = result.exit_code if result.exit_code is not None else int(result.status != "ok")
    run = CommandRunResult(
        status=CommandRunStatus.TimeLimitExceeded if timed_out else CommandRunStatus.Finished,
        execution_time=result.execution_time,
        return_code=None if timed_out else code,
        stdout="".join(stdout),
        stderr="".join(stderr),
        limit=result.limit,
        stdout_truncated=result.truncated,
    )
    ok = not timed_out and code == 0
    return RunCodeResponse(
        status=RunStatus.Success if ok else RunStatus.Failed,
        run_result=run,
        executor_pod_name=POD,
        stdout=run.stdout,
        stderr=run.stderr,
        exit_code=run.return_code,
        session_id=session_id,
    )
