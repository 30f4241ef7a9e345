"""The use cases: what a request of each kind does, below the faces that receive it.

The HTTP API, the CLI, the MCP server and the Ray actor convert what they receive into these
calls and their answers back; none of them holds the rules of a use case itself.

The public names are below (`__all__`); each is imported from its module when first used, so
that `sandlot run` does not import the judge.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandlot.usecases.evaluation import Judged, ResultsFile, check_ids, evaluate

__all__ = ["Judged", "ResultsFile", "check_ids", "evaluate"]
_MODULES = dict.fromkeys(["Judged", "ResultsFile", "check_ids", "evaluate"], "evaluation")


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
