"""Faces imported on first use: what a package's `__init__` offers other layers, each name
loaded from its module only when asked for.

A face whose names are costly to import all at once uses this: the API's need FastAPI and every
router, wire's models are what a client-only install loads, and `sandlot run` needs a run's
converters and use case, not the judge's. (Layers do not import each other: tests/test_faces.py
fails on a cycle, so laziness is never what keeps an import working.) The face lists
its names twice, under `TYPE_CHECKING` for readers and type checkers and in the table given
here; tests/test_faces.py checks that the two agree. A name that is also a module of its package
(`sandlot.coder.route`) is imported at once instead: once the module is loaded, the package's
attribute of that name is the module, and the face is not asked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that takes each name from its module in `names`
    (name -> module) on first use (PEP 562)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
