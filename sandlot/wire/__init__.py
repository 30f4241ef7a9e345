"""wire — the request and response models of the HTTP API (SandboxFusion's shapes plus sandlot's
extra fields), where both the server and the client import them. pydantic only: importing this
never imports FastAPI, the server or the engine.
"""
