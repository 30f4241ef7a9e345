"""api — the HTTP face: FastAPI routes over the Service, SandboxFusion's wire shapes."""

from sandlot.api.app import create_app

__all__ = ["create_app"]
