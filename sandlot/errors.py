"""sandlot's exceptions, in one tree.

    SandlotError
    ├── JailError            the sandbox could not run something (never the user's fault)
    │   ├── JailUnavailable  a layer of isolation cannot be set up; nothing runs
    │   └── SlotBroken       a slot cannot be made clean again; it serves nothing until it is
    ├── Overloaded           no slot became free in time, or the queue is full (HTTP 504)
    ├── GitUnavailable       git cannot run here, or did not finish in time (HTTP 503)
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
    │   ├── GitFailed        git failed on a repository a request names: the command, its stderr
    │   └── NotFound         an unknown dataset, problem or session id (HTTP 404)
    │       └── SessionEnded a session that has ended, and why (HTTP 410)
    ├── ServerError          (client) a server answered with an error status
    └── Unreachable          (client) no server could be reached: refused, reset, timed out

A user's program failing, timing out or running out of memory is an `Outcome`, not an exception.
"""

from __future__ import annotations

from collections.abc import Sequence


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


class GitUnavailable(SandlotError):
    """git could not be started, or did not finish in time: the server's fault, not the
    request's."""


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


class GitFailed(InvalidRequest):
    """git failed on a repository a request names (not a repository, a ref it lacks, corrupt,
    unreadable by its owner): the message names the git command and git's first line."""

    def __init__(self, args: Sequence[str], where: object, stderr: str, hint: str = "") -> None:
        command = git_command(args)
        first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
        super().__init__(
            f"`{command}` failed in {where}: {first or 'no message'}; "
            + (hint or "check that it is an intact git repository (`git fsck`) that its "
               "owner can read")
        )  # fmt: skip
        self.command = command
        self.first_line = first


def git_command(args: Sequence[str]) -> str:
    """`git` and its subcommand, without the options before it (`-c name=value` may hold an
    identity, `-C` a path of the server's)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    return f"git {args[i]}" if i < len(args) else "git"


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
