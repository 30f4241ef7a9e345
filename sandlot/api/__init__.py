"""api — the HTTP face: FastAPI routes over the Service, SandboxFusion's wire shapes.

Its names are imported on first use (sandlot/faces.py), so that a command which needs one of
them (`sandlot run` needs a converter) does not pay for FastAPI and every router.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.api.app import create_app
    from sandlot.api.auth import tenant_of
    from sandlot.api.convert import code_request, response, test_cases, test_response
    from sandlot.api.judge import dataset_infos, eval_result, judge_config
    from sandlot.api.repos import grade
    from sandlot.api.server import serve
    from sandlot.api.session_convert import execute_response, fork_response, info, snapshot_info
    from sandlot.api.sessions import owner

__all__ = [
    "code_request",
    "create_app",
    "dataset_infos",
    "eval_result",
    "execute_response",
    "fork_response",
    "grade",
    "info",
    "judge_config",
    "owner",
    "response",
    "serve",
    "snapshot_info",
    "tenant_of",
    "test_cases",
    "test_response",
]
__getattr__ = lazy(
    __name__,
    {
        "code_request": "sandlot.api.convert",
        "create_app": "sandlot.api.app",
        "dataset_infos": "sandlot.api.judge",
        "eval_result": "sandlot.api.judge",
        "execute_response": "sandlot.api.session_convert",
        "fork_response": "sandlot.api.session_convert",
        "grade": "sandlot.api.repos",
        "info": "sandlot.api.session_convert",
        "judge_config": "sandlot.api.judge",
        "owner": "sandlot.api.sessions",
        "response": "sandlot.api.convert",
        "serve": "sandlot.api.server",
        "snapshot_info": "sandlot.api.session_convert",
        "tenant_of": "sandlot.api.auth",
        "test_cases": "sandlot.api.convert",
        "test_response": "sandlot.api.convert",
    },
)
