"""API keys (ASGI middleware): with keys configured, a request must carry one, as
`Authorization: Bearer KEY` or Judge0's `X-Auth-Token: KEY`; otherwise it gets a 401.

Probes stay open (`/v1/ping`, `/health`), and so do the pages a browser loads before it can
send a key (the playground, the API docs); `/metrics` too when `metrics_open` is set. Keys are
compared as SHA-256 digests with `hmac.compare_digest`, each against every key, so neither the
time taken nor an early exit tells how much of a key was right or which key it was near.

Every request that passes gets its tenant (`sandlot.tenancy`) in its scope, under `TENANT`:
the one its key names, or `LOCAL` on a server with no keys. Routes read it with `tenant_of`
(`sandlot.tenancy`, as MCP's tools do);
the access log records it. A request a worker forwards to another carries its key as it came,
so the other finds the same tenant.
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from sandlot.api.errors import error_response
from sandlot.errors import Unauthorized
from sandlot.tenancy import LOCAL, TENANT, Tenant

OPEN_PATHS = frozenset({"/v1/ping", "/health", "/", "/docs", "/redoc", "/openapi.json"})
OPEN_PREFIXES = ("/playground",)  # the web pages; what they call carries the key
METRICS = "/metrics"
MAX_TOKEN_CHARS = 8192  # longer than any key (config.MAX_KEY_CHARS): never hashed, refused
_MISSING = "this server needs an API key: send Authorization: Bearer KEY (or X-Auth-Token: KEY)"
_WRONG = "the API key is not one of this server's keys"


def _digest(key: bytes) -> bytes:
    return hashlib.sha256(key).digest()


def presented(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The key a request carries: a Bearer token, else an X-Auth-Token; None if neither."""
    token = None
    for name, value in headers:
        if name == b"authorization":
            scheme, _, rest = value.strip().partition(b" ")
            if scheme.lower() == b"bearer":
                return rest.strip()
        elif name == b"x-auth-token":
            token = value.strip()
    return token


class APIKeys:
    """With no keys, every request is `LOCAL`'s."""

    def __init__(self, app: ASGIApp, keys: frozenset[str], metrics_open: bool) -> None:
        self.app = app
        self.digests = tuple(_digest(k.encode()) for k in sorted(keys))
        self.open = OPEN_PATHS | {METRICS} if metrics_open else OPEN_PATHS

    def allowed(self, token: bytes) -> bool:
        digest = _digest(token[:MAX_TOKEN_CHARS])
        ok = False
        for known in self.digests:  # every key, no early exit
            ok |= hmac.compare_digest(digest, known)
        return ok and len(token) <= MAX_TOKEN_CHARS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.digests:
            scope[TENANT] = LOCAL
        elif scope["type"] == "http":
            token = presented(scope["headers"])
            if token is not None and self.allowed(token):
                scope[TENANT] = Tenant.of_key(token)
            elif not self._open(scope):
                refusal = Unauthorized(_MISSING if not token else _WRONG)
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _open(self, scope: Scope) -> bool:
        """Reads of a probe or a page; nothing that runs code is ever open."""
        path = scope["path"]
        return scope["method"] in ("GET", "HEAD") and (
            path in self.open or path.startswith(OPEN_PREFIXES)
        )
