"""Request guards applied before FastAPI sees a request (ASGI middleware).

- HostCheck: the Host header must name this server, against DNS rebinding: an IP address,
  localhost (and *.localhost), the bound host name, or one of `allowed_hosts`.
- JSONOnly: a POST with a body must declare it JSON. The content types a browser may send
  cross-site without a CORS preflight (text/plain, form types, none) are refused, so that a
  web page can never make this server run code.
- BodyLimit: caps the body while it streams in, so a huge body never sits in memory.

Their answers come from api/errors.py, like every other error.
"""

from __future__ import annotations

import ipaddress
from email.message import Message as MimeHeader

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandlot.api.errors import error_response, status_of
from sandlot.errors import InvalidRequest, NotJSON, TooLarge

LOCAL_NAMES = ("localhost",)


def host_name(header: str) -> str:
    """The name in a Host header, without port or brackets, lower case."""
    header = header.strip()
    if header.startswith("["):  # [v6]:port
        return header[1 : header.find("]")].lower() if "]" in header else ""
    name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    return name.lower().rstrip(".")


def host_allowed(header: str, names: frozenset[str]) -> bool:
    if "*" in names:
        return True
    name = host_name(header)
    if not name:
        return False
    try:
        ipaddress.ip_address(name)
        return True  # an address is not a name an attacker's DNS can point at us
    except ValueError:
        pass
    return name in LOCAL_NAMES or name.endswith(".localhost") or name in names


class HostCheck:
    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = frozenset(n.strip().lower().rstrip(".") for n in names if n.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host")
            if host is not None and not host_allowed(host.decode("latin-1"), self.names):
                shown = host.decode("latin-1")[:100]
                refusal = InvalidRequest(
                    f"Host {shown!r} is not a name of this server (a guard against DNS "
                    "rebinding); use its address, or add the name to the allowed_hosts setting"
                )
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def is_json(content_type: str) -> bool:
    header = MimeHeader()
    header["content-type"] = content_type
    subtype = header.get_content_subtype()
    return header.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


class JSONOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = dict(scope["headers"])
            given = headers.get(b"content-type", b"").decode("latin-1")
            bodiless = headers.get(b"content-length", b"0") == b"0" and (
                b"transfer-encoding" not in headers
            )  # nothing to read, so nothing a page could smuggle in
            if not (bodiless and not given) and not is_json(given):
                refusal = NotJSON(
                    f"the body must be JSON sent with Content-Type: application/json (got "
                    f"{given[:100] or 'no Content-Type'!r}); with curl, use --json or "
                    "-H 'Content-Type: application/json'"
                )
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.message = f"request body is larger than the {max_bytes} bytes this server accepts"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(TooLarge(self.message))(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                # FastAPI passes HTTPExceptions from body reading through as they are.
                raise HTTPException(status_of(TooLarge(self.message)), self.message)
            return message

        await self.app(scope, counted, send)
