"""wire — the request and response models of the HTTP API (SandboxFusion's shapes plus sandlot's
extra fields), where both the server and the client import them. pydantic only: importing this
never imports FastAPI, the server or the engine.

Its names are imported on first use (sandlot/faces.py): a client loads only the models it uses.
"""

from __future__ import annotations

from sandlot.faces import lazy

__all__: list[str] = []
__getattr__ = lazy(__name__, {})
