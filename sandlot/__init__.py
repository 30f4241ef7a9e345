"""sandlot — a self-hosted, isolated code sandbox that speaks SandboxFusion's HTTP API."""

__version__ = "0.1.0"
