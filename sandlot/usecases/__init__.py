"""The use cases: what a request of each kind does, below the faces that receive it.

The HTTP API, the CLI, the MCP server and the Ray actor convert what they receive into these
calls and their answers back; none of them holds the rules of a use case itself.

The public names are `__all__`; each is imported from its module when first used (`_MODULES`),
so that `sandlot run` does not import the judge.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandlot.usecases.judging import (
        Judged,
        ResultsFile,
        answer_record,
        check_ids,
        evaluate,
        submit,
    )
    from sandlot.usecases.running import repo_tests, run, run_batch, run_tests
    from sandlot.usecases.sessions import (
        SessionRun,
        check_size,
        execute_in_session,
        run_in_session,
        run_jupyter,
        timeout,
    )

_MODULES = {
    "judging": ["Judged", "ResultsFile", "answer_record", "check_ids", "evaluate", "submit"],
    "running": ["repo_tests", "run", "run_batch", "run_tests"],
    "sessions": ["SessionRun", "check_size", "execute_in_session", "run_in_session",
                 "run_jupyter", "timeout"],
}  # fmt: skip
_HOME = {name: module for module, names in _MODULES.items() for name in names}
__all__ = [
    "Judged",
    "ResultsFile",
    "SessionRun",
    "answer_record",
    "check_ids",
    "check_size",
    "evaluate",
    "execute_in_session",
    "repo_tests",
    "run",
    "run_batch",
    "run_in_session",
    "run_jupyter",
    "run_tests",
    "submit",
    "timeout",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
