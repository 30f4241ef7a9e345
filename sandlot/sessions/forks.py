"""Snapshots, forks and pauses of sessions, on layers (jail/layers.py).

A session's state is its files and what its agent keeps beside them (a kernel's names by
cloudpickle, its working directory, sys.path and environment; a shell's exported environment,
functions and working directory: box/namespace.py, box/shell.py). `capture` has the agent write
that into the session's writable layer, seals the layer and moves the session onto a new one
above it: the session goes on with its processes, and the sealed layer (with those below it)
is a stack any number of new sessions can start from, at a cost that does not grow with what
the session holds. `start_from` makes such a session: a box (a kernel from the pool when one is
ready) moved onto a writable layer of its own over the stack, and the agent reading the state
back. A new session is another box, uid, cgroup and writable layer: as apart from its parent and
siblings as two sessions that were never related.

What is not kept, by anything here: processes and threads (a kernel's, or started in the
background), open files and sockets, /tmp (each box's own), and what cannot be pickled (named in
the report: `not_copied`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from sandlot.errors import Conflict, InvalidRequest, SessionEnded
from sandlot.jail import MAX_LAYERS, Frozen, LayerBusy
from sandlot.sessions.link import AgentGone
from sandlot.sessions.session import Session, SessionLimits
from sandlot.sessions.snapshots import Book, Snapshot, Store
from sandlot.tenancy import Owner, Tenant

log = logging.getLogger("sandlot.sessions")
READY_TIMEOUT = 120.0  # seconds to wait for a snapshot another process is writing


@dataclass(slots=True)
class Paused:
    """A session whose box was freed: its state is in a snapshot (kind "pause"), and the next
    use starts a box from it (`resume`)."""

    id: str
    owner: Owner
    language: str
    limits: SessionLimits
    snapshot: Snapshot
    stack: tuple[Frozen, ...]
    created_at: float  # Unix time, as the session said
    expires: float  # monotonic
    paused_at: float  # Unix time
    last_active: float  # monotonic
    execution_count: int
    resumes: int = 0
    resuming: asyncio.Lock = field(default_factory=asyncio.Lock)

    def why_end(self, now: float) -> str | None:
        if now >= self.expires:
            return f"it reached its lifetime of {self.limits.lifetime:g} s"
        if now - self.last_active >= self.limits.idle_timeout:
            return f"it was idle for {self.limits.idle_timeout:g} s"
        return None

    def info(self) -> dict[str, Any]:
        now = time.monotonic()
        return {
            "id": self.id, "language": self.language, "status": "paused",
            "created_at": self.created_at, "expires_in": max(0.0, self.expires - now),
            "idle_timeout": self.limits.idle_timeout, "idle_for": now - self.last_active,
            "execution_count": self.execution_count, "memory_limit_MB": self.limits.memory >> 20,
            "paused_at": self.paused_at,
        }  # fmt: skip


Starter = Callable[[str, SessionLimits, tuple[Frozen, ...]], Awaitable[Session]]


class Forks:
    """What a server process does with the layers of its sessions: capture, start from, pause,
    resume. `start` makes a session of a language with limits over a stack (from the pool
    when it can)."""

    def __init__(self, store: Store, start: Starter) -> None:
        self.store = store
        self.book = Book(store)
        self._start = start
        self._tenants: dict[str, Tenant] = {}  # whose each session (live or paused) is
        self._persisting: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        await asyncio.gather(*self._persisting, return_exceptions=True)
        self.book.close()
        await asyncio.to_thread(self.store.collect)

    # -- capturing a session -----------------------------------------------------------------

    async def capture(
        self, session: Session, record: Snapshot | None = None
    ) -> tuple[tuple[Frozen, ...], dict[str, Any]]:
        """The session's state, frozen: the stack (top first) and what the agent kept. The
        caller holds the session's lock. The new layer is charged to the session's tenant
        (with `record`, a snapshot to be, written) before anything is sealed: refused
        (QuotaExceeded), nothing is. The session goes on above the sealed layer with its
        processes."""
        if len(session.box.lowers) >= MAX_LAYERS:  # its own layer would be one too many
            raise Conflict(
                f"session {session.id} stacks {len(session.box.lowers)} frozen layers, one per "
                "snapshot or fork taken of it or of the sessions it came from, and a box stacks "
                f"at most {MAX_LAYERS}: it cannot be snapshotted or forked again. Take from a "
                "new session (POST /sessions) instead"
            )
        assert session.owner is not None
        tenant = session.owner.tenant
        saved = await self._keep(session, "save")
        try:
            if saved["error"]:
                raise Conflict(f"the session's state could not be saved: {saved['error']}")
            box = session.box
            assert box.upper is not None
            lowers = box.lowers
            layers = [(box.upper.id, box.upper.used()), *((f.id, f.size) for f in lowers)]
            if record is not None:
                record.layers = layers
                record.state = state_of(saved)
            kind = record.kind if record is not None else "fork"
            held = self.held(tenant)
            await asyncio.to_thread(self._reserve, tenant, layers, kind, held, record)
            try:
                frozen = await asyncio.to_thread(box.seal)
            except BaseException:
                if record is not None:
                    self.store.remove(record.id)
                raise
        except LayerBusy as exc:
            raise Conflict(str(exc)) from None
        finally:
            # The session follows onto its new layer, without the state file (it is in the
            # sealed layer); after a failed seal this only removes the file.
            await self._keep(session, "rebase", cwd=saved.get("cwd"))
        stack = (frozen, *lowers)
        self.holds(session.id, stack, tenant)
        return stack, state_of(saved)

    def held(self, tenant: Tenant) -> dict[str, int]:
        """The frozen layers the tenant's sessions (live or paused) stack, in memory or on disk:
        they count against its quota as its snapshots' do, else a line of forks (each deleting
        its parent) or of snapshots deleted at once would hold layers no quota counts."""
        return {
            lid: self.book.frozen[lid].size
            for lid, holders in self.book.holders.items()
            if lid in self.book.frozen and any(self._tenants.get(h) == tenant for h in holders)
        }

    def _reserve(
        self, tenant: Tenant, layers: list[tuple[str, int]], kind: str, held: dict[str, int],
        record: Snapshot | None,
    ) -> None:  # fmt: skip
        with self.store.locked():
            self.store.charge(tenant, layers, kind, held)
            if record is not None:
                self.store.write(record)

    async def _keep(self, session: Session, op: str, **fields: Any) -> dict[str, Any]:
        """The agent's answer to a snapshot's op; a session whose agent fails ends."""
        try:
            return await session.keep(op, **fields)
        except AgentGone as exc:
            await session.close(session.ended or f"its agent failed ({exc})")
            raise SessionEnded(f"session {session.id} has ended: {session.ended}") from None

    # -- snapshots ---------------------------------------------------------------------------

    async def snapshot(
        self, session: Session, tenant: Tenant, kind: str = "snapshot"
    ) -> tuple[Snapshot, tuple[Frozen, ...]]:
        """A snapshot of the session (the caller holds its lock), written to disk behind; and
        its stack, to start sessions from at once."""
        record = Snapshot(id=self.store.new_id(), tenant=tenant.id, language=session.language,
                          layers=[], created_at=time.time(), kind=kind,
                          session=session.id)  # fmt: skip
        stack, _ = await self.capture(session, record)
        record.layers = [(f.id, f.size) for f in stack]
        self.book.hold(record.id, stack)
        await asyncio.to_thread(self.store.write, record)
        self._behind(self._persist(record, stack))
        return record, stack

    async def _persist(self, record: Snapshot, stack: tuple[Frozen, ...]) -> None:
        try:
            record.layers = await self.book.persist(stack)
            record.status = "ready"
        except Exception as exc:  # a full disk, a failing copy: said, and nothing half left
            log.warning("snapshot %s could not be written: %s", record.id, exc)
            record.status, record.error = "failed", f"its layers could not be written: {exc}"
        finally:
            self.book.release(record.id, stack)
        if self.store.read(record.id) is not None:  # not deleted meanwhile
            await asyncio.to_thread(self.store.write, record)
        else:
            await asyncio.to_thread(self.store.collect)

    async def stack_of(self, record: Snapshot) -> tuple[Frozen, ...]:
        """A snapshot's layers, to start a session from: from this process's memory, or from
        disk once written (by another process: waited for)."""
        here = all(lid in self.book.frozen for lid, _ in record.layers)
        if record.status == "writing" and not here:
            record = await self.store.wait_ready(record, time.monotonic() + READY_TIMEOUT)
        if record.status == "failed":
            raise Conflict(f"snapshot {record.id} failed: {record.error}")
        if record.status == "writing" and not here:
            raise Conflict(f"snapshot {record.id} is still being written: retry")
        return self.book.stack_of(record)

    async def delete(self, record: Snapshot) -> None:
        self.store.remove(record.id)
        await asyncio.to_thread(self.store.collect)

    # -- sessions from a stack ---------------------------------------------------------------

    async def start_from(
        self, stack: tuple[Frozen, ...], language: str, limits: SessionLimits
    ) -> tuple[Session, dict[str, Any]]:
        """A new session over `stack`, its state read back by its agent; and what that said
        (an `error` if the state could not be read: the session then has the files alone)."""
        session = await self._start(language, limits, stack)
        try:
            loaded = await session.keep("load")
        except BaseException:
            await session.close("its start from a snapshot failed")
            raise
        session.restore_error = loaded["error"]
        session.execution_count = loaded["count"] or 0
        return session, loaded

    def holds(self, session_id: str, stack: tuple[Frozen, ...], tenant: Tenant) -> None:
        """The tenant's session stacks these layers (they count against its quota)."""
        self._tenants[session_id] = tenant
        self.book.hold(session_id, stack)

    def ended(self, session_id: str, stack: tuple[Frozen, ...]) -> None:
        """A session (live or paused) ended: its layers are no longer its own to keep (and
        those on disk that nothing names go)."""
        self._tenants.pop(session_id, None)
        if self.book.release(session_id, stack):
            self._behind(asyncio.to_thread(self.store.collect))

    def _behind(self, work: Awaitable[Any]) -> None:
        """Run `work` in a task the forks wait for when they close."""
        task = asyncio.ensure_future(work)
        self._persisting.add(task)
        task.add_done_callback(self._persisting.discard)

    # -- pauses ------------------------------------------------------------------------------

    async def pause(self, session: Session, worker: int) -> Paused:
        """The session's state in a snapshot of its own, on disk (behind), as a paused session
        the worker of index `worker` takes back after a restart. The caller holds its lock and
        then frees its box."""
        assert session.owner is not None
        record, stack = await self.snapshot(session, session.owner.tenant, kind="pause")
        paused = Paused(
            id=session.id, owner=session.owner, language=session.language,
            limits=session.limits, snapshot=record, stack=stack,
            created_at=session.created_at, expires=session.expires, paused_at=time.time(),
            last_active=session.last_active, execution_count=session.execution_count,
            resumes=session.resumes,
        )  # fmt: skip
        await asyncio.to_thread(self.store.write_paused, paused_record(paused, worker))
        return paused

    def resumed(self, session: Session, paused: Paused, loaded: dict[str, Any]) -> None:
        """A new session takes a paused one's place: its clocks, counts and limits."""
        session.created = paused.expires - paused.limits.lifetime
        session.created_at = paused.created_at
        session.execution_count = paused.execution_count
        session.resumed = True
        session.resumes = paused.resumes + 1

    async def drop_paused(self, paused: Paused) -> None:
        """A paused session is no more (resumed or ended): its records go, and what of its
        layers nothing else names."""
        self.store.remove_paused(paused.id)
        self.store.remove(paused.snapshot.id)
        await asyncio.to_thread(self.store.collect)

    def load_paused(self, worker: int) -> list[Paused]:
        """The paused sessions a predecessor of this worker left on disk, whose snapshots were
        written whole (the others are removed: their state was lost with that process)."""
        out = []
        now, wall = time.monotonic(), time.time()
        for raw in self.store.paused_records():
            if raw.get("worker") != worker:
                continue
            record = self.store.read(raw.get("snapshot", ""))
            try:
                if record is None or record.status != "ready":
                    raise ValueError("its snapshot was not written whole")
                paused = Paused(
                    id=raw["id"], owner=Owner(Tenant(raw["tenant"]), raw["client"]),
                    language=raw["language"], limits=SessionLimits(**raw["limits"]),
                    snapshot=record, stack=self.book.stack_of(record),
                    created_at=raw["created_at"], expires=now + raw["expires_at"] - wall,
                    paused_at=raw["paused_at"], last_active=now - (wall - raw["last_active_at"]),
                    execution_count=raw["execution_count"], resumes=raw["resumes"],
                )  # fmt: skip
            except (KeyError, TypeError, ValueError, InvalidRequest) as exc:
                log.warning("dropping paused session %s: %s", raw.get("id"), exc)
                self.store.remove_paused(str(raw.get("id", "")))
                if record is not None:
                    self.store.remove(record.id)
                continue
            self.holds(paused.id, paused.stack, paused.owner.tenant)
            out.append(paused)
        self.store.collect()
        return out


def paused_record(paused: Paused, worker: int) -> dict[str, Any]:
    wall, now = time.time(), time.monotonic()
    return {
        "id": paused.id, "tenant": paused.owner.tenant.id, "client": paused.owner.client,
        "language": paused.language, "limits": asdict(paused.limits),
        "snapshot": paused.snapshot.id, "created_at": paused.created_at,
        "expires_at": wall + paused.expires - now, "paused_at": paused.paused_at,
        "last_active_at": wall - (now - paused.last_active),
        "execution_count": paused.execution_count, "resumes": paused.resumes, "worker": worker,
    }  # fmt: skip


def state_of(answer: dict[str, Any]) -> dict[str, Any]:
    """What a snapshot says it holds, from the agent's report."""
    return {k: answer[k] for k in ("names", "cwd", "bytes", "not_copied", "not_copied_count")}
