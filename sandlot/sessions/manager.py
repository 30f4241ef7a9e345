"""The sessions of one server: created, found, listed and ended; and fresh kernels for
notebooks (`/run_jupyter`). One asyncio task ends sessions that are idle, past their lifetime
or out of CPU time; a server-wide cap (and optionally one per client) bounds how many live.

A session belongs to an `Owner` (sandlot.tenancy): the tenant of the API key that created it,
and the client address it came from. Only its tenant reaches it by id; to any other it does not
exist (404, whether it lives or ended). Listing and `session_per_client` count the owner's.

A session id is a capability: 128 random bits, never listed to another client. It starts with
the index of the server process (worker) that holds the session and a tag of that process's
life, `<worker>-<life>-<bits>`, so that any worker can tell where it lives (`worker_of`), and a
restarted worker that its session died with its predecessor (unless it was paused: then its
state is on disk, and the worker of that index takes it back).

With layers (forks.py) a session can be snapshotted, forked and restored from a snapshot, and an
idle one paused: its state snapshotted to disk and its box freed, until its next use starts a
box from it (`use`). Paused sessions count against `session_paused_max`, not `session_max`.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import math
import os
import re
import secrets
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from sandlot import events
from sandlot.config import Config
from sandlot.errors import (
    InvalidRequest,
    JailUnavailable,
    SessionEnded,
    TooManySessions,
)
from sandlot.errors import NotFound as _NotFound
from sandlot.executor import limits_for
from sandlot.jail import BOX_WORKDIR, Frozen, Jail, LiveBoxes, LiveConfig, RunSpec, hidden_in_a_box
from sandlot.languages import Registry
from sandlot.limits import MEMORY, SESSION_LIFETIME, MiB
from sandlot.sessions import box
from sandlot.sessions.forks import Forks, Paused
from sandlot.sessions.pool import WarmPool
from sandlot.sessions.session import Session, SessionLimits
from sandlot.sessions.snapshots import Snapshot, Store
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
        self.paused: dict[str, Paused] = {}
        self._pausing: set[str] = set()
        self.forks: Forks | None = None
        self.snapshots_problem: str | None = "snapshots are not started"
        self._creating = 0
        self._leaving = 0  # sessions out of the table whose boxes are being closed
        self._ended: OrderedDict[str, tuple[Tenant, str]] = OrderedDict()  # why, for whom
        self._starts = asyncio.Semaphore(os.cpu_count() or 1)
        self.live: LiveBoxes | None = None
        self.pool = WarmPool(
            config.session_pool, lambda: self._start("python", self._limits(), background=True)
        )
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
                layers=bool(cfg.snapshot_dir),
                layer_owner=cfg.session_uid_base - 1,
            ),
        )
        self.live = await asyncio.to_thread(live.start)
        await self._start_forks(live)
        self.pool.start()
        self._reaper = asyncio.create_task(self._reap())
        return self

    async def _start_forks(self, live: LiveBoxes) -> None:
        """Snapshots, forks and pauses, if layers work here and the store can be made (else
        sessions go on without them, and /health says why); and the paused sessions this
        worker's predecessor left."""
        if not self.config.snapshot_dir:
            self.snapshots_problem = "no snapshot_dir is set"
            return
        if live.layers is None:
            self.snapshots_problem = live.layers_problem
            return
        try:
            store = await asyncio.to_thread(
                Store(self.config.snapshot_dir, self.config.snapshot_quota).start
            )
        except OSError as exc:
            self.snapshots_problem = f"cannot use snapshot_dir {self.config.snapshot_dir}: {exc}"
            return
        self.forks = Forks(store, self._start_over)
        self.snapshots_problem = None
        for paused in await asyncio.to_thread(self.forks.load_paused, self.worker):
            self.paused[paused.id] = paused

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        await self.pool.close()
        for session in list(self.sessions.values()):
            await self._end(session, "the server stopped")
        await asyncio.gather(*self._retiring, return_exceptions=True)
        if self.forks is not None:  # paused sessions stay on disk, for the next server
            await self.forks.close()
        if self.live is not None:
            await asyncio.to_thread(self.live.close)
            self.live = None

    # -- sessions ------------------------------------------------------------------------------

    async def create(
        self,
        language: str | None,
        owner: Owner,
        *,
        idle_timeout: float | None = None,
        lifetime: float | None = None,
        memory_mb: int | None = None,
        pause_after: float | None = None,
        files: dict[str, bytes] | None = None,
        snapshot: str | None = None,
        elsewhere: int = 0,
    ) -> Session:
        """`elsewhere`: the owner's sessions in other workers, which its cap counts too.
        `snapshot`: a snapshot of the owner's tenant to start from (its language unless
        `language` is given, which must be the same)."""
        record = self.require_forks().store.get(snapshot, owner.tenant) if snapshot else None
        name = self.registry.get(language or (record.language if record else "python")).name
        if name not in LANGUAGES:
            raise InvalidRequest(
                f"a session runs {' or '.join(LANGUAGES)}, not {language!r}; use /run_code"
            )
        if record is not None and name != record.language:
            raise InvalidRequest(f"snapshot {record.id} is of a {record.language} session")
        limits = self._limits(idle_timeout, lifetime, memory_mb, pause_after)
        self._admit(owner, elsewhere)  # before any await: the count and the check are one step
        self._creating += 1
        try:
            if record is not None:
                stack = await self.require_forks().stack_of(record)
                session, _ = await self.require_forks().start_from(stack, name, limits)
            else:
                pooled = await self.pool.take() if name == "python" else None
                session = pooled if pooled is not None else await self._start(name, limits)
            await self._prepare(session, limits, files or {})
        finally:
            self._creating -= 1
        self._register(session, owner)
        return session

    def _register(self, session: Session, owner: Owner, session_id: str | None = None) -> None:
        session.id = session_id or self.prefix + secrets.token_hex(16)
        session.owner = owner
        self.sessions[session.id] = session
        if self.forks is not None and session.box.lowers:
            self.forks.holds(session.id, session.box.lowers, owner.tenant)

    def find(self, session_id: str, tenant: Tenant) -> Session | Paused:
        """The tenant's session of that id, live or paused (see `get`), as it is: looking is
        no use of it (its idle clock goes on)."""
        paused = self.paused.get(session_id)
        if paused is not None and paused.owner.tenant == tenant:
            return paused
        return self.get(session_id, tenant, touch=False)

    async def use(self, session_id: str, tenant: Tenant) -> Session:
        """The tenant's live session of that id: a paused one is resumed first."""
        found = self.find(session_id, tenant)
        if isinstance(found, Paused):
            return await self._resume(found)
        return found

    def get(self, session_id: str, tenant: Tenant, touch: bool = True) -> Session:
        """The tenant's live session of that id, used now (`touch`); NotFound if it has none
        (another's is none of its), SessionEnded saying why if its session has ended."""
        session = self.sessions.get(session_id)
        if session is not None and (session.owner is None or session.owner.tenant != tenant):
            session = None
        if session is not None and session.ended is None:
            if touch:
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

    def list(self, owner: Owner) -> list[Session | Paused]:
        live = [s for s in self.sessions.values() if s.owner == owner and s.ended is None]
        return [*live, *(p for p in self.paused.values() if p.owner == owner)]

    def owner_of(self, session_id: str) -> Owner | None:
        """Whose session of that id this is, live or paused (None: no such session here)."""
        found = self.sessions.get(session_id) or self.paused.get(session_id)
        return found.owner if found is not None else None

    async def delete(self, session_id: str, tenant: Tenant) -> Session | Paused:
        found = self.find(session_id, tenant)
        if isinstance(found, Paused):
            await self._end_paused(found, "it was deleted")
        else:
            await self._end(found, "it was deleted")
        return found

    def retire(self, session: Session, why: str) -> None:
        """End a session outside the table now (its box is killed at once) and remove what it
        had in the background."""
        session.box.kill()
        task = asyncio.create_task(session.close(why))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def _end(self, session: Session, why: str) -> None:
        self._forget(session, why)
        await self._closed(session, why)

    async def _closed(self, session: Session, why: str) -> None:
        """Close a session that left the table; its box counts against `session_max` until it
        is gone (else a new session's box could be started beside it, past the maximum)."""
        self._leaving += 1
        try:
            await session.close(why)
        finally:
            self._leaving -= 1

    def _forget(self, session: Session | Paused, why: str) -> None:
        """Out of the table, its layers no longer its own; its id is remembered for a while,
        to say why it ended."""
        if self.sessions.get(session.id) is session or self.paused.get(session.id) is session:
            self.sessions.pop(session.id, None)
            self.paused.pop(session.id, None)
            if self.forks is not None:
                stack = session.stack if isinstance(session, Paused) else session.box.lowers
                self.forks.ended(session.id, stack)
        ended = session.ended if isinstance(session, Session) else None
        if session.owner is not None:
            self._ended[session.id] = (session.owner.tenant, ended or why)
        while len(self._ended) > TOMBSTONES:
            self._ended.popitem(last=False)

    async def _end_paused(self, paused: Paused, why: str) -> None:
        self._forget(paused, why)
        assert self.forks is not None
        await self.forks.drop_paused(paused)

    def full(self, more: int = 1) -> bool:
        """Whether this process holds its maximum of live sessions (its share of the server's),
        or would with `more`."""
        held = len(self.sessions) + self._creating + self._leaving
        return held + more > self.config.session_max

    def _admit(self, owner: Owner, elsewhere: int, count: int = 1) -> None:
        """Refuse (429) `count` more sessions of `owner` past its share or the server's maximum;
        its own share first, which it can act on."""
        cfg = self.config
        mine = sum(s.owner == owner for s in self.sessions.values()) + elsewhere
        if cfg.session_per_client and mine + count > cfg.session_per_client:
            raise TooManySessions(
                f"this client holds its maximum of {cfg.session_per_client} live sessions; "
                "end one (DELETE /sessions/{id}) or retry later", self._retry_after(owner)
            )  # fmt: skip
        if self.full(count):
            held = (f"its maximum of {cfg.session_max}" if self.workers == 1 else
                    f"its maximum (each of its {self.workers} workers its share)")  # fmt: skip
            raise TooManySessions(
                f"this server holds {held} live sessions; "
                "end one (DELETE /sessions/{id}) or retry later", self._retry_after()
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
            events.sessions_held(len(self.sessions), len(self.paused))
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
                elif self._pause_due(session, now):
                    self._pausing.add(session.id)
                    task = asyncio.create_task(self._pause(session))
                    self._retiring.add(task)
                    task.add_done_callback(self._retiring.discard)
            for paused in list(self.paused.values()):
                why = paused.why_end(now)
                if why is not None:
                    try:
                        await self._end_paused(paused, why)
                    except Exception:
                        log.exception("ending paused session %s", paused.id)

    # -- snapshots, forks, pauses --------------------------------------------------------------

    def require_forks(self) -> Forks:
        if self.forks is None:
            raise JailUnavailable(
                f"snapshots and forks are not available: {self.snapshots_problem}"
            )
        return self.forks

    async def snapshot(self, session_id: str, tenant: Tenant) -> Snapshot:
        """A snapshot of the tenant's session, the tenant's own."""
        forks = self.require_forks()
        session = await self.use(session_id, tenant)
        async with session.lock:
            self._check_live(session)
            started = time.monotonic()
            record, _ = await forks.snapshot(session, tenant)
        events.branched("snapshot", time.monotonic() - started)
        return record

    async def fork(
        self, session_id: str, tenant: Tenant, count: int, *, elsewhere: int = 0,
        idle_timeout: float | None = None, lifetime: float | None = None,
        memory_mb: int | None = None, pause_after: float | None = None,
    ) -> tuple[builtins.list[Session], dict[str, Any]]:  # fmt: skip
        """`count` new sessions with the state of the tenant's session (which goes on), each
        with its own box, uid, limits (the parent's unless given) and work dir; and what of the
        state was kept. All or none: a fork that fails leaves no session of it. `elsewhere`:
        the owner's live sessions in other workers (as `create`)."""
        forks = self.require_forks()
        if isinstance(count, bool) or not 1 <= count <= self.config.fork_max:
            raise InvalidRequest(f"count must be from 1 to {self.config.fork_max}, not {count!r}")
        found = self.find(session_id, tenant)
        if isinstance(found, Paused):  # its resume and the forks: refused whole, before either
            self._admit(found.owner, elsewhere, count + 1)
        parent = await self.use(session_id, tenant)
        own = parent.limits
        pause = own.pause_after if pause_after is None else pause_after
        limits = self._limits(idle_timeout or own.idle_timeout, lifetime or own.lifetime,
                              memory_mb or own.memory >> 20, pause)  # fmt: skip
        assert parent.owner is not None
        self._admit(parent.owner, elsewhere, count)
        self._creating += count
        began = time.monotonic()
        try:
            async with parent.lock:
                self._check_live(parent)
                stack, state = await forks.capture(parent)
            started = await asyncio.gather(
                *(forks.start_from(stack, parent.language, limits) for _ in range(count)),
                return_exceptions=True,
            )
            children = [r[0] for r in started if not isinstance(r, BaseException)]
            failed = next((r for r in started if isinstance(r, BaseException)), None)
            try:
                if failed is not None:
                    raise failed
                for child in children:
                    await self._prepare(child, limits, {})
            except BaseException:
                for child in children:
                    await child.close("its fork failed")
                raise
        finally:
            self._creating -= count
        for child in children:
            self._register(child, parent.owner)
        events.branched("fork", time.monotonic() - began)
        return children, state

    def _check_live(self, session: Session) -> None:
        if session.ended:
            raise SessionEnded(f"session {session.id} has ended: {session.ended}")

    def _pause_due(self, session: Session, now: float) -> bool:
        after = session.limits.pause_after
        return (
            after > 0 and self.forks is not None and not session.busy
            and session.id not in self._pausing and session.owner is not None
            and now - session.last_active >= after
            and len(self.paused) + len(self._pausing) < self.config.session_paused_max
        )  # fmt: skip

    async def _pause(self, session: Session) -> None:
        """Snapshot an idle session to disk and free its box; it stays live if that fails
        (a file held open for writing, a full disk) and is tried again after its next use."""
        assert self.forks is not None and session.owner is not None
        try:
            async with session.lock:
                if session.ended or self.sessions.get(session.id) is not session:
                    return
                began = time.monotonic()
                paused = await self.forks.pause(session, self.worker)
                self.sessions.pop(session.id, None)
                self.paused[session.id] = paused
            await self._closed(session, "it was paused")
            events.branched("pause", time.monotonic() - began)
        except Exception as exc:
            log.info("session %s stays live, not paused: %s", session.id, exc)
            session.touch()  # not tried again before it has been idle that long again
        finally:
            self._pausing.discard(session.id)

    async def _resume(self, paused: Paused) -> Session:
        """A box for a paused session, its state read back; the session is live again under
        its id, and its next execution says it was resumed."""
        forks = self.require_forks()
        async with paused.resuming:
            if paused.id not in self.paused:  # resumed (or ended) while this waited
                return self.get(paused.id, paused.owner.tenant)
            self._admit(paused.owner, 0)
            self._creating += 1
            began = time.monotonic()
            try:
                session, loaded = await forks.start_from(
                    paused.stack, paused.language, paused.limits
                )
                await self._prepare(session, paused.limits, {})
            finally:
                self._creating -= 1
            forks.resumed(session, paused, loaded)
            del self.paused[paused.id]
            self._register(session, paused.owner, paused.id)
            await forks.drop_paused(paused)
            events.branched("resume", time.monotonic() - began)
            return session

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

    async def _start(
        self, language: str, limits: SessionLimits, lowers: tuple[Frozen, ...] = (),
        background: bool = False,
    ) -> Session:  # fmt: skip
        if self.live is None:
            raise JailUnavailable("sessions are not started")
        async with self._starts:
            spec = self._spec(language, limits)
            return await Session.start(self.live, spec, language, limits, lowers, background)

    async def _start_over(
        self, language: str, limits: SessionLimits, stack: tuple[Frozen, ...]
    ) -> Session:
        """A session over `stack`: a pooled kernel moved onto it if one is ready, else a box
        started on it."""
        session = await self.pool.take() if language == "python" else None
        if session is None:
            return await self._start(language, limits, stack)
        try:
            await asyncio.to_thread(session.box.rebase, stack)
        except BaseException:
            await session.close("it could not be moved onto a snapshot's layers")
            raise
        return session

    def _spec(self, language: str, limits: SessionLimits) -> RunSpec:
        cfg = self.config
        row = self.registry.rows["python"]
        env = row.resolved_env(cfg.runtime_dir) if language == "python" else {}
        env.pop("MPLBACKEND", None)  # ipykernel then picks its inline backend: figures come back
        # `pip install --user` into the work dir, which snapshots keep (not /tmp, the box's own)
        env["PYTHONUSERBASE"] = f"{BOX_WORKDIR}/.local"
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
        pause_after: float | None = None,
    ) -> SessionLimits:
        cfg = self.config
        memory = memory_mb if memory_mb is not None and memory_mb > 0 else cfg.memory_mb
        pause = cfg.session_pause_after if pause_after is None else pause_after
        if pause:
            bounded(pause, cfg.max_session_idle_timeout, "pause_after")
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
            pause_after=pause,
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
