"""api — the HTTP face: FastAPI routes over the Service, SandboxFusion's wire shapes.

`create_app` is imported on first use, so that a command which needs one module of this
package (`sandlot run` needs `convert`) does not pay for FastAPI and every router.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandlot.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from sandlot.api.app import create_app

        return create_app
    raise AttributeError(name)
