"""api — the HTTP face: FastAPI routes over the Service, SandboxFusion's wire shapes.

Its names are imported on first use (sandlot/faces.py), so that a command which needs one of
them does not pay for FastAPI and every router. What the routes convert with is sandlot.convert,
which the MCP tools and the CLI share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.api.app import create_app
    from sandlot.api.server import serve

__all__ = ["create_app", "serve"]
__getattr__ = lazy(__name__, {"create_app": "sandlot.api.app", "serve": "sandlot.api.server"})
