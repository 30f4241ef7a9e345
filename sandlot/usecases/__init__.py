"""The use cases: what a request of each kind does, below the faces that receive it.

The HTTP API, the CLI, the MCP server and the Ray actor convert what they receive into these
calls and their answers back; none of them holds the rules of a use case itself.

The public names are `__all__`; each is imported from its module when first used (sandlot/faces.py),
so that `sandlot run` does not import the judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.usecases.judging import (
        Judged,
        ResultsFile,
        answer_record,
        check_ids,
        evaluate,
        submit,
    )
    from sandlot.usecases.repos import remove_repo_env, repo_envs, repo_task, served_repo
    from sandlot.usecases.running import repo_tests, run, run_batch, run_tests
    from sandlot.usecases.sessions import (
        SessionRun,
        check_size,
        create_session,
        delete_session,
        delete_snapshot,
        execute_in_session,
        find_session,
        fork_session,
        get_session_file,
        get_snapshot,
        interrupt_session,
        list_sessions,
        list_snapshots,
        put_session_file,
        restart_session,
        run_in_session,
        run_jupyter,
        sessions_full,
        snapshot_session,
        timeout,
        use_session,
    )

__getattr__ = lazy(
    __name__,
    {
        "Judged": "sandlot.usecases.judging",
        "ResultsFile": "sandlot.usecases.judging",
        "answer_record": "sandlot.usecases.judging",
        "check_ids": "sandlot.usecases.judging",
        "evaluate": "sandlot.usecases.judging",
        "submit": "sandlot.usecases.judging",
        "remove_repo_env": "sandlot.usecases.repos",
        "repo_envs": "sandlot.usecases.repos",
        "repo_task": "sandlot.usecases.repos",
        "served_repo": "sandlot.usecases.repos",
        "repo_tests": "sandlot.usecases.running",
        "run": "sandlot.usecases.running",
        "run_batch": "sandlot.usecases.running",
        "run_tests": "sandlot.usecases.running",
        "SessionRun": "sandlot.usecases.sessions",
        "check_size": "sandlot.usecases.sessions",
        "execute_in_session": "sandlot.usecases.sessions",
        "run_in_session": "sandlot.usecases.sessions",
        "run_jupyter": "sandlot.usecases.sessions",
        "timeout": "sandlot.usecases.sessions",
        "create_session": "sandlot.usecases.sessions",
        "delete_session": "sandlot.usecases.sessions",
        "delete_snapshot": "sandlot.usecases.sessions",
        "find_session": "sandlot.usecases.sessions",
        "fork_session": "sandlot.usecases.sessions",
        "get_session_file": "sandlot.usecases.sessions",
        "get_snapshot": "sandlot.usecases.sessions",
        "interrupt_session": "sandlot.usecases.sessions",
        "list_sessions": "sandlot.usecases.sessions",
        "list_snapshots": "sandlot.usecases.sessions",
        "put_session_file": "sandlot.usecases.sessions",
        "restart_session": "sandlot.usecases.sessions",
        "sessions_full": "sandlot.usecases.sessions",
        "snapshot_session": "sandlot.usecases.sessions",
        "use_session": "sandlot.usecases.sessions",
    },
)
__all__ = [
    "Judged",
    "ResultsFile",
    "SessionRun",
    "answer_record",
    "check_ids",
    "check_size",
    "create_session",
    "delete_session",
    "delete_snapshot",
    "evaluate",
    "execute_in_session",
    "find_session",
    "fork_session",
    "get_session_file",
    "get_snapshot",
    "interrupt_session",
    "list_sessions",
    "list_snapshots",
    "put_session_file",
    "remove_repo_env",
    "repo_envs",
    "repo_task",
    "repo_tests",
    "restart_session",
    "run",
    "run_batch",
    "run_in_session",
    "run_jupyter",
    "run_tests",
    "served_repo",
    "sessions_full",
    "snapshot_session",
    "submit",
    "timeout",
    "use_session",
]
