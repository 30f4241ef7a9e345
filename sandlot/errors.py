"""sandlot's exceptions, in one tree.

    SandlotError
    ├── JailError            the sandbox could not run something (never the user's fault)
    │   ├── JailUnavailable  a layer of isolation cannot be set up; nothing runs
    │   └── SlotBroken       a slot cannot be made clean again; it serves nothing until it is
    ├── Overloaded           no slot became free in time, or the queue is full (HTTP 504)
    ├── InvalidRequest       the request cannot be served as asked (HTTP 4xx)
    │   ├── UnknownLanguage
    │   ├── UnsafePath
    │   ├── TooLarge
    │   ├── NotJSON          a POST body that is not declared JSON (HTTP 415)
    │   ├── Forbidden        this server does not do that for anyone (HTTP 403)
    │   ├── TooManySessions  the server's (or a client's) cap on live sessions (HTTP 429)
    │   ├── Conflict         not now: the session's state stops it; the detail says why (409)
    │   ├── QuotaExceeded    a snapshot over the API key's quota, or the disk's room (HTTP 507)
    │   ├── Unauthorized     no API key, or a wrong one, on a server that asks for one (HTTP 401)
    │   └── NotFound         an unknown dataset, problem or session id (HTTP 404)
    │       └── SessionEnded a session that has ended, and why (HTTP 410)
    ├── ServerError          (client) a server answered with an error status
    └── Unreachable          (client) no server could be reached: refused, reset, timed out

A user's program failing, timing out or running out of memory is an `Outcome`, not an exception.
"""

from __future__ import annotations


class SandlotError(Exception):
    """Base of every error sandlot raises on purpose."""


class JailError(SandlotError):
    """The jail failed to run a program (a fault of the sandbox, not of the program)."""


class JailUnavailable(JailError):
    """A layer of isolation cannot be set up, so the jail refuses to run anything."""


class SlotBroken(JailError):
    """A run left what cannot be removed (a process that survives SIGKILL, a work dir that cannot
    be emptied): its slot serves no run until it is clean."""


class Overloaded(SandlotError):
    """Every slot is busy and the queue is full, or a request cannot start within the time
    allowed; `retry_after` says in how many seconds a new one may (None: no estimate)."""

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class InvalidRequest(SandlotError):
    """The request cannot be served as asked; the message says what to change."""

    status_code = 400


class UnknownLanguage(InvalidRequest):
    def __init__(self, name: str, supported: list[str]) -> None:
        super().__init__(
            f"unknown language {name!r}; this server supports: "
            + ", ".join(sorted(supported, key=str.lower))
        )
        self.name = name
        self.supported = supported


class UnsafePath(InvalidRequest):
    """A file path that would leave the work dir."""


class TooLarge(InvalidRequest):
    status_code = 413


class NotJSON(InvalidRequest):
    """A POST whose Content-Type is not JSON: what a cross-site form or text/plain fetch sends."""

    status_code = 415


class Forbidden(InvalidRequest):
    """A request this server refuses whatever it holds (a disabled endpoint, a root-owned repo)."""

    status_code = 403


class TooManySessions(InvalidRequest):
    """No more live sessions now; `retry_after` says in how many seconds one may end."""

    status_code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Conflict(InvalidRequest):
    """A request the target's state stops now (a session holding a file open for writing, a
    snapshot still being written); the message says what to do."""

    status_code = 409


class QuotaExceeded(InvalidRequest):
    """What would be written goes over a quota or the room left on disk; nothing was written."""

    status_code = 507


class Unauthorized(InvalidRequest):
    """A request without a valid API key, to a server that has keys."""

    status_code = 401


class NotFound(InvalidRequest):
    """An unknown dataset, problem or session id; the message says what exists."""

    status_code = 404


class SessionEnded(NotFound):
    """A session that existed and has ended (deleted, idle, past its lifetime...)."""

    status_code = 410


class ServerError(SandlotError):
    """A server answered with an error status; `status_code`, the server's `detail` and its `url`
    are kept."""

    def __init__(self, status_code: int, detail: str, url: str = "") -> None:
        super().__init__(f"{url + ' answered ' if url else ''}HTTP {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail
        self.url = url


class Unreachable(SandlotError):
    """No server could be reached (connection refused or reset, a timeout); the cause is chained."""
