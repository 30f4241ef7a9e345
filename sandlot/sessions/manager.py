"""The sessions of one server: created, found, listed and ended; and fresh kernels for
notebooks (`/run_jupyter`). One asyncio task ends sessions that are idle, past their lifetime
or out of CPU time; a server-wide cap (and optionally one per client) bounds how many live.

A session belongs to an `Owner` (sandlot.tenancy): the tenant of the API key that created it,
and the client address it came from. Only its tenant reaches it by id; to any other it does not
exist (404, whether it lives or ended). Listing and `session_per_client` count the owner's.

A session id is a capability: 128 random bits, never listed to another client. It starts with
the index of the server process (worker) that holds the session and a tag of that process's
life, `<worker>-<life>-<bits>`, so that any worker can tell where it lives (`worker_of`), and a
restarted worker that its session died with its predecessor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import re
import secrets
import time
from collections import OrderedDict
from pathlib import Path

from sandlot.config import Config
from sandlot.errors import InvalidRequest, JailUnavailable, SessionEnded, TooManySessions
from sandlot.errors import NotFound as _NotFound
from sandlot.executor.limits import limits_for
from sandlot.jail import Jail, RunSpec
from sandlot.jail.bwrap import hidden_in_a_box
from sandlot.jail.live import LiveBoxes, LiveConfig
from sandlot.languages import Registry
from sandlot.limits import MEMORY, SESSION_LIFETIME, MiB
from sandlot.sessions import box
from sandlot.sessions.pool import WarmPool
from sandlot.sessions.session import Session, SessionLimits
from sandlot.tenancy import Owner, Tenant

log = logging.getLogger("sandlot.sessions")
AGENT = str(Path(box.__file__).with_name("agent.py"))
LANGUAGES = ("python", "bash")  # language rows a session can be
REAP_INTERVAL = 1.0
TOMBSTONES = 4096  # ended sessions remembered, to say why they ended
MIN_MEMORY_MB = 128  # a kernel's own footprint, and some room
SESSION_ID = re.compile(r"(0|[1-9][0-9]{0,4})-[0-9a-f]{8}-[0-9a-f]{32}")  # see the docstring
CPU_BACKSTOP = 30.0  # seconds of a process's CPU rlimit beyond the session's CPU time


def worker_of(session_id: str) -> int | None:
    """The worker a session id names, if it is one's (else no worker has it)."""
    match = SESSION_ID.fullmatch(session_id)
    return int(match[1]) if match else None


class SessionManager:
    def __init__(
        self, config: Config, jail: Jail, registry: Registry, worker: int = 0, workers: int = 1
    ) -> None:
        """`worker` of `workers`: which server process this is; its config holds its share."""
        self.config = config
        self.worker, self.workers = worker, workers
        self.prefix = f"{worker}-{secrets.token_hex(4)}-"  # this process's life: see above
        self.jail = jail
        self.registry = registry
        self.sessions: dict[str, Session] = {}
        self._creating = 0
        self._ended: OrderedDict[str, tuple[Tenant, str]] = OrderedDict()  # why, for whom
        self._starts = asyncio.Semaphore(os.cpu_count() or 1)
        self.live: LiveBoxes | None = None
        self.pool = WarmPool(config.session_pool, lambda: self._start("python", self._limits()))
        self._reaper: asyncio.Task[None] | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        row = registry.rows["python"]
        self._python = row.argv(row.run, config.runtime_dir, 0)[0]

    async def start(self) -> SessionManager:
        cfg = self.config
        if not os.access(self._python, os.X_OK):
            raise JailUnavailable(
                f"sessions need the sandbox Python at {self._python}: run `sandlot setup`"
            )
        if hidden := hidden_in_a_box(str(Path(AGENT).parent)):
            raise JailUnavailable(
                f"sessions need their agent ({AGENT}) in every box, and a box mounts {hidden} "
                f"of its own over it: install sandlot outside {hidden}"
            )
        live = LiveBoxes(
            self.jail,
            LiveConfig(
                uid_base=cfg.session_uid_base,
                count=cfg.live_uids(),
                disk=cfg.session_disk_bytes,
                python=self._python,
            ),
        )
        self.live = await asyncio.to_thread(live.start)
        self.pool.start()
        self._reaper = asyncio.create_task(self._reap())
        return self

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        await self.pool.close()
        for session in list(self.sessions.values()):
            await self._end(session, "the server stopped")
        await asyncio.gather(*self._retiring, return_exceptions=True)
        if self.live is not None:
            await asyncio.to_thread(self.live.close)
            self.live = None

    # -- sessions ------------------------------------------------------------------------------

    async def create(
        self,
        language: str,
        owner: Owner,
        *,
        idle_timeout: float | None = None,
        lifetime: float | None = None,
        memory_mb: int | None = None,
        files: dict[str, bytes] | None = None,
        elsewhere: int = 0,
    ) -> Session:
        """`elsewhere`: the owner's sessions in other workers, which its cap counts too."""
        name = self.registry.get(language).name
        if name not in LANGUAGES:
            raise InvalidRequest(
                f"a session runs {' or '.join(LANGUAGES)}, not {language!r}; use /run_code"
            )
        limits = self._limits(idle_timeout, lifetime, memory_mb)
        self._admit(owner, elsewhere)  # before any await: the count and the check are one step
        self._creating += 1
        try:
            session = await self.pool.take() if name == "python" else None
            if session is None:
                session = await self._start(name, limits)
            await self._prepare(session, limits, files or {})
        finally:
            self._creating -= 1
        session.id = self.prefix + secrets.token_hex(16)
        session.owner = owner
        self.sessions[session.id] = session
        return session

    def get(self, session_id: str, tenant: Tenant) -> Session:
        """The tenant's session of that id; NotFound if it has none (another's is none of its),
        SessionEnded saying why if its session has ended."""
        session = self.sessions.get(session_id)
        if session is not None and (session.owner is None or session.owner.tenant != tenant):
            session = None
        if session is not None and session.ended is None:
            session.touch()
            return session
        if session is not None:  # it ended by itself (its box died, its agent failed)
            self._forget(session, session.ended or "it ended")
        whose, reason = self._ended.get(session_id, (None, None))
        if reason is not None and whose == tenant:
            raise SessionEnded(f"session {session_id} has ended: {reason}")
        if worker_of(session_id) == self.worker and not session_id.startswith(self.prefix):
            raise SessionEnded(
                f"session {session_id} has ended: the server process that held it stopped"
            )
        raise _NotFound(f"no session {session_id!r}: POST /sessions creates one")

    def list(self, owner: Owner) -> list[Session]:
        return [s for s in self.sessions.values() if s.owner == owner and s.ended is None]

    async def delete(self, session_id: str, tenant: Tenant) -> Session:
        session = self.get(session_id, tenant)
        await self._end(session, "it was deleted")
        return session

    def retire(self, session: Session, why: str) -> None:
        """End a session outside the table now (its box is killed at once) and remove what it
        had in the background."""
        session.box.kill()
        task = asyncio.create_task(session.close(why))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def _end(self, session: Session, why: str) -> None:
        self._forget(session, why)
        await session.close(why)

    def _forget(self, session: Session, why: str) -> None:
        """Out of the table; its id is remembered for a while, to say why it ended."""
        self.sessions.pop(session.id, None)
        if session.owner is not None:
            self._ended[session.id] = (session.owner.tenant, session.ended or why)
        while len(self._ended) > TOMBSTONES:
            self._ended.popitem(last=False)

    def full(self) -> bool:
        """Whether this process holds its maximum of sessions (its share of the server's)."""
        return len(self.sessions) + self._creating >= self.config.session_max

    def _admit(self, owner: Owner, elsewhere: int) -> None:
        cfg = self.config
        mine = sum(s.owner == owner for s in self.sessions.values()) + elsewhere
        if self.full():
            held = (f"its maximum of {cfg.session_max}" if self.workers == 1 else
                    f"its maximum (each of its {self.workers} workers its share)")  # fmt: skip
            raise TooManySessions(
                f"this server holds {held} live sessions; "
                "end one (DELETE /sessions/{id}) or retry later", self._retry_after()
            )  # fmt: skip
        if cfg.session_per_client and mine >= cfg.session_per_client:
            raise TooManySessions(
                f"this client holds its maximum of {cfg.session_per_client} live sessions; "
                "end one (DELETE /sessions/{id}) or retry later", self._retry_after(owner)
            )  # fmt: skip

    def _retry_after(self, owner: Owner | None = None) -> int:
        """Seconds until the first session (of the owner) may end by itself."""
        now = time.monotonic()
        ends = [
            min(s.expires, s.last_active + s.limits.idle_timeout) - now
            for s in self.sessions.values()
            if owner is None or s.owner == owner
        ]
        return max(1, min(60, math.ceil(min(ends, default=1))))

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(REAP_INTERVAL)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                if session.ended is not None:
                    self._forget(session, session.ended)
                    continue
                try:
                    why = session.why_end(now)
                except OSError:
                    why = "its box ended"
                if why is not None:
                    try:
                        await self._end(session, why)
                    except Exception:  # the reaper must go on for the others
                        log.exception("ending session %s", session.id)

    # -- boxes ---------------------------------------------------------------------------------

    async def fresh_python(self, memory_mb: int | None, files: dict[str, bytes]) -> Session:
        """A never-used Python session for one notebook, outside the table and the cap."""
        limits = self._limits(memory_mb=memory_mb)
        session = await self.pool.take() or await self._start("python", limits)
        await self._prepare(session, limits, files)
        return session

    async def _prepare(
        self, session: Session, limits: SessionLimits, files: dict[str, bytes]
    ) -> None:
        """Its limits, clocks and files, or closed if any of that fails."""
        try:
            session.begin(limits)
            for path, data in files.items():
                await asyncio.to_thread(session.box.put_file, path, data)
        except BaseException:
            await session.close("its set-up failed")
            raise

    async def _start(self, language: str, limits: SessionLimits) -> Session:
        if self.live is None:
            raise JailUnavailable("sessions are not started")
        async with self._starts:
            return await Session.start(self.live, self._spec(language, limits), language, limits)

    def _spec(self, language: str, limits: SessionLimits) -> RunSpec:
        cfg = self.config
        row = self.registry.rows["python"]
        env = row.resolved_env(cfg.runtime_dir) if language == "python" else {}
        env.pop("MPLBACKEND", None)  # ipykernel then picks its inline backend: figures come back
        return RunSpec(
            argv=(self._python, AGENT, language),
            env=env,
            ro_binds=(*row.resolved_binds(cfg.runtime_dir), str(Path(AGENT).parent)),
            limits=limits_for(
                cfg,
                {SESSION_LIFETIME.setting: limits.lifetime, MEMORY.setting: limits.memory // MiB},
                time=SESSION_LIFETIME,
                # A backstop only: the reaper ends the session at its CPU time (the cgroup's sum);
                # a process's own limit must not end a kernel first, to be restarted afresh.
                cpu_time=limits.cpu_time + CPU_BACKSTOP,
                file_size=cfg.session_disk_bytes,
            ),
            warm=True,
        )

    def _limits(
        self,
        idle_timeout: float | None = None,
        lifetime: float | None = None,
        memory_mb: int | None = None,
    ) -> SessionLimits:
        cfg = self.config
        memory = memory_mb if memory_mb is not None and memory_mb > 0 else cfg.memory_mb
        return SessionLimits(
            memory=int(bounded(memory, cfg.max_memory_mb, "memory_limit_MB", MIN_MEMORY_MB)) << 20,
            idle_timeout=bounded(
                idle_timeout or cfg.session_idle_timeout,
                cfg.max_session_idle_timeout,
                "idle_timeout",
            ),
            lifetime=bounded(
                lifetime or cfg.session_lifetime, cfg.max_session_lifetime, "lifetime"
            ),
            cpu_time=cfg.session_cpu_seconds,
            output=cfg.output_bytes,
        )


def bounded(value: float, maximum: float, what: str, minimum: float = 0) -> float:
    """value if it is a finite number in (0, maximum] and at least minimum; else what to fix."""
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise InvalidRequest(f"{what} must be a positive finite number, got {value!r}")
    if value > maximum:
        raise InvalidRequest(f"{what}={value:g} is above this server's maximum of {maximum:g}")
    if value < minimum:
        raise InvalidRequest(f"{what}={value:g} is below the minimum of {minimum:g}")
    return value
