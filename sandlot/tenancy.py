"""Who a request acts for: its tenant, and the owner of what it creates.

A tenant is named by the API key a request carries: its id is a one-way digest of the key
(HMAC-SHA256 under a label of sandlot's own, 16 hex digits), the same in every worker process,
across restarts and for every face (HTTP, MCP), and never the key itself, so that it may be
logged, listed and stored beside a session. A server with no keys has one tenant, `LOCAL`.

What a tenant creates (a session; later its forks and snapshots) is owned by an `Owner`: the
tenant, and the client address it came from. Reaching it by id takes the same tenant (an id
is a capability, but only its own tenant's); listing and the per-client cap take the same
owner. Anything else is told the thing does not exist.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["LOCAL", "TENANT", "Owner", "Tenant", "owner_of", "tenant_of"]

_LABEL = b"sandlot tenant id v1"
ID_DIGITS = 16


@dataclass(frozen=True, slots=True)
class Tenant:
    id: str

    @classmethod
    def of_key(cls, key: str | bytes) -> Tenant:
        """The tenant an API key names (the key must have been checked already)."""
        raw = key.encode() if isinstance(key, str) else key
        return cls("key-" + hmac.new(_LABEL, raw, hashlib.sha256).hexdigest()[:ID_DIGITS])

    def __str__(self) -> str:
        return self.id


LOCAL = Tenant("local")  # the one tenant of a server with no API keys


@dataclass(frozen=True, slots=True)
class Owner:
    """Who holds a session: a tenant, from a client address (what listing and caps count)."""

    tenant: Tenant
    client: str

    def __str__(self) -> str:
        return f"{self.tenant}@{self.client}"


# Over HTTP (the routes, and MCP at /mcp) a request's ASGI scope holds its tenant under this key,
# put there by the API keys middleware (sandlot/api/auth.py) before any route or tool sees it.
TENANT = "sandlot.tenant"


def tenant_of(scope: Mapping[str, Any]) -> Tenant:
    """The tenant an HTTP request acts for."""
    return scope[TENANT]


def owner_of(scope: Mapping[str, Any]) -> Owner:
    """Who a new session of an HTTP request is for, and whose a listing shows: its tenant, from
    the client's address (the socket's peer, or the one a trusted proxy or another worker
    forwards for, which they write into the scope)."""
    client = scope.get("client")
    return Owner(tenant_of(scope), client[0] if client else "")
