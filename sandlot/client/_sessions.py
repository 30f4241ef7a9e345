"""Sessions for an agent's loop: create, run the model's code, feed the output back, repeat,
delete. Sync (`Session`) and async (`AsyncSession`) twins over one base with no I/O.

    with Client(url) as sb, sb.session("python") as s:
        out = s.run("import math; math.pi")
        prompt += feedback(out)

    async with AsyncClient(url) as sb:
        async with await sb.session("python") as s:
            out = await s.run("x = 1")

A session can be branched: `s.snapshot()` freezes its state (files, variables) as a `Snapshot`
that `client.from_snapshot(snap)` starts new sessions from, and `s.fork(n)` makes n sessions
with its state at once; the session goes on either way.

    with Client(url) as sb, sb.session() as s:
        s.run(setup_code)                       # once: clone, install, load data
        for child in s.fork(8):                 # 8 episodes from the same state
            with child:
                score(child.run(attempt))

`ToolSessions` keeps one session per trajectory for a framework's tool interface (verl's
`BaseTool.create/execute/release`: examples/verl_tool.py), each optionally started from a
snapshot. A session (and a snapshot) lives on one server: every request of it goes to the URL
that made it. An execution is never retried (a lost connection may have run it); creating one
is retried after a 429, when the server says to.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from sandlot.client._base import BaseClient, Files
from sandlot.errors import ServerError
from sandlot.wire import (
    ExecuteResponse,
    ForkResponse,
    Holds,
    SessionInfo,
    SnapshotInfo,
    plain_traceback,
)

if TYPE_CHECKING:
    from sandlot.client._async import AsyncClient

CREATE_ATTEMPTS = 5
MAX_RETRY_AFTER = 30.0
GRACE = 60.0  # seconds a client waits beyond an execution's own time limit
FEEDBACK_CHARS = 4000


def feedback(out: ExecuteResponse, max_chars: int = FEEDBACK_CHARS) -> str:
    """An execution as the text a model reads next: what it printed, its value, its error
    (without colour codes), and a line for a limit or a lost state; the middle cut if long."""
    parts = []
    for o in out.outputs:
        if o["type"] in ("stdout", "stderr"):
            parts.append(o["text"])
        elif o["type"] == "execute_result":
            parts.append(o["data"].get("text/plain", "") + "\n")
        elif o["type"] == "display_data":
            kinds = ", ".join(k for k in o["data"] if k != "text/plain")
            parts.append(f"[display: {kinds or o['data'].get('text/plain', '')}]\n")
        elif o["type"] == "error":
            parts.append(plain_traceback(o))
    if out.limit:
        parts.append(f"[stopped: {out.limit} limit]\n")
    if out.kernel_restarted:
        parts.append("[the kernel was restarted: variables are lost]\n")
    if out.session_ended:
        parts.append(f"[the session ended: {out.session_ended}]\n")
    text = "".join(parts)
    if len(text) > max_chars:
        half = max_chars // 2
        text = f"{text[:half]}\n[... {len(text) - max_chars} characters cut ...]\n{text[-half:]}"
    return text


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A session's state, frozen on the server at `url` (`Session.snapshot()`); start sessions
    from it with `client.from_snapshot(snap)`."""

    id: str
    url: str
    info: SnapshotInfo

    @property
    def holds(self) -> Holds:
        """What it kept, and what it could not copy (`holds.not_copied`)."""
        return self.info.holds


class _Base:
    """Requests and replies of sessions, with no I/O."""

    @staticmethod
    def _create_body(language: str | None, files: Files | None, fields: dict[str, Any]) -> dict:
        body = {"language": language, **{k: v for k, v in fields.items() if v is not None}}
        if files:
            body["files"] = BaseClient._files(files)
        return {k: v for k, v in body.items() if v is not None}

    @staticmethod
    def _fork_body(count: int, fields: dict[str, Any]) -> dict:
        return {"count": count, **{k: v for k, v in fields.items() if v is not None}}

    @staticmethod
    def _check(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except (ValueError, AttributeError):
                detail = response.text
            raise ServerError(response.status_code, str(detail), str(response.url))
        return response

    @staticmethod
    def _retry_after(response: httpx.Response, attempt: int) -> float | None:
        """How long to wait before creating again, or None to give up."""
        if response.status_code != 429 or attempt + 1 >= CREATE_ATTEMPTS:
            return None
        try:
            return min(float(response.headers.get("retry-after", "1")), MAX_RETRY_AFTER)
        except ValueError:
            return 1.0

    @staticmethod
    def _timeout(timeout: float | None) -> Any:
        return httpx.USE_CLIENT_DEFAULT if timeout is None else timeout + GRACE


class Session(_Base):
    """A session on the server that made it (`url`): every request of it goes there."""

    def __init__(self, http: httpx.Client, url: str, info: SessionInfo) -> None:
        self._http = http
        self.id = info.id
        self.language = info.language
        self.url = url
        self.created = info  # as the server described it when it was made
        self._path = f"{url}/sessions/{info.id}"

    @classmethod
    def create(
        cls, http: httpx.Client, url: str, language: str | None, files: Files | None,
        **fields: Any,
    ) -> Session:  # fmt: skip
        body = cls._create_body(language, files, fields)
        for attempt in range(CREATE_ATTEMPTS):
            response = http.post(f"{url}/sessions", json=body)
            wait = cls._retry_after(response, attempt)
            if wait is None:
                return cls(http, url, SessionInfo.model_validate(cls._check(response).json()))
            time.sleep(wait)
        raise AssertionError("unreachable")

    def run(self, code: str, *, timeout: float | None = None) -> ExecuteResponse:
        """Run code in the session; its outputs once it has ended."""
        r = self._http.post(f"{self._path}/execute", json={"code": code, "timeout": timeout},
                            timeout=self._timeout(timeout))  # fmt: skip
        return ExecuteResponse.model_validate(self._check(r).json())

    def stream(self, code: str, *, timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Outputs as they come (NDJSON), the last one of type `end`. Stopping early
        interrupts the execution."""
        body = {"code": code, "timeout": timeout, "stream": True}
        with self._http.stream("POST", f"{self._path}/execute", json=body,
                               timeout=self._timeout(timeout)) as r:  # fmt: skip
            if r.status_code >= 400:
                r.read()
                self._check(r)
            for line in r.iter_lines():
                if line:
                    yield json.loads(line)

    def upload(self, path: str, data: bytes | str) -> None:
        content = data if isinstance(data, bytes) else data.encode()
        self._check(self._http.put(f"{self._path}/files/{path}", content=content))

    def download(self, path: str) -> bytes:
        return self._check(self._http.get(f"{self._path}/files/{path}")).content

    def interrupt(self) -> bool:
        return bool(self._check(self._http.post(f"{self._path}/interrupt")).json()["interrupted"])

    def restart(self) -> None:
        self._check(self._http.post(f"{self._path}/restart"))

    def info(self) -> SessionInfo:
        return SessionInfo.model_validate(self._check(self._http.get(self._path)).json())

    def snapshot(self) -> Snapshot:
        """Freeze its state (files, and a kernel's names or a shell's environment); it goes on."""
        r = self._check(self._http.post(f"{self._path}/snapshot"))
        info = SnapshotInfo.model_validate(r.json())
        return Snapshot(info.id, self.url, info)

    def fork(self, count: int = 1, **fields: Any) -> list[Session]:
        """`count` new sessions with its state, each apart from the others (fields: their
        limits, idle_timeout, lifetime, memory_limit_MB; the parent's if not given)."""
        r = self._check(self._http.post(f"{self._path}/fork", json=self._fork_body(count, fields)))
        out = ForkResponse.model_validate(r.json())
        return [Session(self._http, self.url, info) for info in out.sessions]

    def close(self) -> None:
        """Delete it (an ended one is already gone)."""
        r = self._http.delete(self._path)
        if r.status_code not in (404, 410):
            self._check(r)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncSession(_Base):
    """The async twin of Session."""

    def __init__(self, http: httpx.AsyncClient, url: str, info: SessionInfo) -> None:
        self._http = http
        self.id = info.id
        self.language = info.language
        self.url = url
        self.created = info
        self._path = f"{url}/sessions/{info.id}"

    @classmethod
    async def create(
        cls, http: httpx.AsyncClient, url: str, language: str | None, files: Files | None,
        **fields: Any,
    ) -> AsyncSession:  # fmt: skip
        body = cls._create_body(language, files, fields)
        for attempt in range(CREATE_ATTEMPTS):
            response = await http.post(f"{url}/sessions", json=body)
            wait = cls._retry_after(response, attempt)
            if wait is None:
                return cls(http, url, SessionInfo.model_validate(cls._check(response).json()))
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def run(self, code: str, *, timeout: float | None = None) -> ExecuteResponse:
        r = await self._http.post(f"{self._path}/execute", json={"code": code, "timeout": timeout},
                                  timeout=self._timeout(timeout))  # fmt: skip
        return ExecuteResponse.model_validate(self._check(r).json())

    async def stream(
        self, code: str, *, timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        body = {"code": code, "timeout": timeout, "stream": True}
        async with self._http.stream("POST", f"{self._path}/execute", json=body,
                                     timeout=self._timeout(timeout)) as r:  # fmt: skip
            if r.status_code >= 400:
                await r.aread()
                self._check(r)
            async for line in r.aiter_lines():
                if line:
                    yield json.loads(line)

    async def upload(self, path: str, data: bytes | str) -> None:
        content = data if isinstance(data, bytes) else data.encode()
        self._check(await self._http.put(f"{self._path}/files/{path}", content=content))

    async def download(self, path: str) -> bytes:
        return self._check(await self._http.get(f"{self._path}/files/{path}")).content

    async def interrupt(self) -> bool:
        r = self._check(await self._http.post(f"{self._path}/interrupt"))
        return bool(r.json()["interrupted"])

    async def restart(self) -> None:
        self._check(await self._http.post(f"{self._path}/restart"))

    async def info(self) -> SessionInfo:
        return SessionInfo.model_validate(self._check(await self._http.get(self._path)).json())

    async def snapshot(self) -> Snapshot:
        r = self._check(await self._http.post(f"{self._path}/snapshot"))
        info = SnapshotInfo.model_validate(r.json())
        return Snapshot(info.id, self.url, info)

    async def fork(self, count: int = 1, **fields: Any) -> list[AsyncSession]:
        body = self._fork_body(count, fields)
        r = self._check(await self._http.post(f"{self._path}/fork", json=body))
        out = ForkResponse.model_validate(r.json())
        return [AsyncSession(self._http, self.url, info) for info in out.sessions]

    async def close(self) -> None:
        r = await self._http.delete(self._path)
        if r.status_code not in (404, 410):
            self._check(r)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class ToolSessions:
    """One session per trajectory (an agent framework's tool instance), by key.

    tools = ToolSessions(AsyncClient(url))
    await tools.create(instance_id)
    text = await tools.execute(instance_id, code)   # what the model reads next
    await tools.release(instance_id)
    """

    def __init__(
        self, client: AsyncClient, language: str = "python", timeout: float | None = None,
        **create_fields: Any,
    ) -> None:  # fmt: skip
        self.client = client
        self.language = language
        self.timeout = timeout
        self.create_fields = create_fields
        self.sessions: dict[str, AsyncSession] = {}

    async def create(self, key: str, snapshot: Snapshot | str | None = None) -> str:
        """The key's session: a new one, or one started from `snapshot` (the state a setup
        left: every trajectory then starts from it, and none sets it up again)."""
        if snapshot is not None:
            session = await self.client.from_snapshot(snapshot, **self.create_fields)
        else:
            session = await self.client.session(self.language, **self.create_fields)
        self.sessions[key] = session
        return session.id

    async def snapshot(self, key: str) -> Snapshot:
        """The key's session's state, frozen (to start trajectories from, or roll back to)."""
        return await self.sessions[key].snapshot()

    async def fork(self, key: str, keys: list[str]) -> None:
        """A session for each of `keys` with the state of the key's session."""
        for new, session in zip(keys, await self.sessions[key].fork(len(keys)), strict=True):
            self.sessions[new] = session

    async def execute(self, key: str, code: str, timeout: float | None = None) -> str:
        """Run the code in the key's session (created on first use); the feedback text."""
        if key not in self.sessions:
            await self.create(key)
        out = await self.sessions[key].run(code, timeout=timeout or self.timeout)
        if out.session_ended:  # it ended (lifetime, CPU): the next call starts a fresh one
            self.sessions.pop(key, None)
        return feedback(out)

    async def release(self, key: str) -> None:
        session = self.sessions.pop(key, None)
        if session is not None:
            await session.close()

    async def close(self) -> None:
        await asyncio.gather(*(self.release(k) for k in list(self.sessions)))
