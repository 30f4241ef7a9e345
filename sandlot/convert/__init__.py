"""convert — between the wire's shapes (sandlot.wire) and what the use cases take and give:
shared by every face that speaks SandboxFusion's shapes (the HTTP API, the MCP tools, `sandlot
run`), so that none of those faces imports another. No I/O, no decisions of policy.

Its names are imported on first use (sandlot/faces.py): `sandlot run` needs a run's converters,
not the judge's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.convert.judge import dataset_infos, eval_result, judge_config
    from sandlot.convert.repos import grade_fields, repository
    from sandlot.convert.run import (
        code_request,
        decode_base64,
        decode_files,
        run_limits,
        run_response,
        test_cases,
        test_response,
    )
    from sandlot.convert.sessions import (
        execute_response,
        fork_response,
        jupyter_response,
        session_info,
        session_run_response,
        snapshot_info,
    )

__all__: list[str] = [
    "code_request",
    "dataset_infos",
    "decode_base64",
    "decode_files",
    "eval_result",
    "execute_response",
    "fork_response",
    "grade_fields",
    "judge_config",
    "jupyter_response",
    "repository",
    "run_limits",
    "run_response",
    "session_info",
    "session_run_response",
    "snapshot_info",
    "test_cases",
    "test_response",
]
__getattr__ = lazy(
    __name__,
    {
        "code_request": "sandlot.convert.run",
        "dataset_infos": "sandlot.convert.judge",
        "decode_base64": "sandlot.convert.run",
        "decode_files": "sandlot.convert.run",
        "eval_result": "sandlot.convert.judge",
        "execute_response": "sandlot.convert.sessions",
        "fork_response": "sandlot.convert.sessions",
        "grade_fields": "sandlot.convert.repos",
        "judge_config": "sandlot.convert.judge",
        "jupyter_response": "sandlot.convert.sessions",
        "repository": "sandlot.convert.repos",
        "run_limits": "sandlot.convert.run",
        "run_response": "sandlot.convert.run",
        "session_info": "sandlot.convert.sessions",
        "session_run_response": "sandlot.convert.sessions",
        "snapshot_info": "sandlot.convert.sessions",
        "test_cases": "sandlot.convert.run",
        "test_response": "sandlot.convert.run",
    },
)
