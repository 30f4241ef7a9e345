"""Snapshots of sessions on disk, and the frozen layers a server process holds.

A snapshot is a stack of frozen layers (jail/layers.py, the top first) and what the session's
agent wrote in the top one (a kernel's names, a shell's environment: see box/namespace.py).
Its layers are copied to disk in the background once it is made (`status` is `writing` until
then, `ready` after); until they are, the process that made it stacks them from memory.

On disk, under `root`:
- `snapshots/ID.json`: a snapshot, with its tenant (only that tenant reaches it: to any other
  it does not exist), its layers and their sizes, and what it holds;
- `layers/LID/`: a frozen layer, shared by every snapshot (and session) that stacks it; removed
  once no snapshot names it and no process stacks it (each holds `layers/LID.lock` shared while
  one of its sessions does: flock(2), which goes with a process that dies);
- `sessions/ID.json`: a paused session (`paused.py`), with the snapshot that holds its state.

A tenant's snapshots count against its quota: the bytes of the distinct layers they name and
its sessions stack (a fork's frozen layers too, in memory). A snapshot or fork that would go
over it, or a snapshot over what the disk has free, is refused before anything is written
(QuotaExceeded, HTTP 507). Paused sessions' snapshots are not the tenant's to count:
they are bounded by `session_paused_max` times `session_disk_bytes`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sandlot.errors import InvalidRequest, NotFound, QuotaExceeded
from sandlot.jail import Frozen, copy_layer
from sandlot.tenancy import Tenant

log = logging.getLogger("sandlot.sessions")
SNAPSHOT_ID = re.compile(r"snap-[0-9a-f]{32}")
LAYER_ID = re.compile(r"[0-9a-f]{16}")
DISK_RESERVE = 256 << 20  # bytes a snapshot leaves free on the store's file system
WAIT_READY = 0.05  # seconds between looks at a snapshot another process is writing


@dataclass(slots=True)
class Snapshot:
    id: str
    tenant: str
    language: str
    layers: list[tuple[str, int]]  # (layer id, bytes), the top first
    created_at: float
    state: dict[str, Any] = field(default_factory=dict)  # what the agent reported it kept
    status: str = "writing"  # writing, ready, failed
    error: str | None = None
    kind: str = "snapshot"  # or "pause": a paused session's, not the tenant's to count
    session: str = ""  # the session it was taken of

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.layers)

    def info(self) -> dict[str, Any]:
        state = self.state
        return {
            "id": self.id,
            "language": self.language,
            "session_id": self.session,
            "created_at": self.created_at,
            "status": self.status,
            "error": self.error,
            "bytes": self.bytes,
            "layers": len(self.layers),
            "holds": {
                "files": True,
                "names": state.get("names"),
                "cwd": state.get("cwd"),
                "environment": True,
                "not_copied": state.get("not_copied", []),
                "not_copied_count": state.get("not_copied_count", 0),
            },
        }


class Store:
    """The snapshot directory of a server (every worker process shares it)."""

    def __init__(self, root: str | Path, quota: int) -> None:
        self.root = Path(root)
        self.quota = quota

    def start(self) -> Store:
        for sub in ("snapshots", "layers", "sessions"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o700)  # layers hold a session's files as stored: root's alone
        for partial in (self.root / "layers").glob(".*.partial"):
            shutil.rmtree(partial, ignore_errors=True)
        return self

    # -- snapshots ---------------------------------------------------------------------------

    def _path(self, snapshot_id: str) -> Path:
        return self.root / "snapshots" / f"{snapshot_id}.json"

    def layer_path(self, layer_id: str) -> Path:
        return self.root / "layers" / layer_id

    def new_id(self) -> str:
        return f"snap-{secrets.token_hex(16)}"

    def write(self, snap: Snapshot) -> None:
        """Save its record, whole or not at all."""
        path = self._path(snap.id)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(asdict(snap)))
        os.replace(partial, path)

    def read(self, snapshot_id: str) -> Snapshot | None:
        if not SNAPSHOT_ID.fullmatch(snapshot_id):
            return None
        try:
            raw = json.loads(self._path(snapshot_id).read_text())
            raw["layers"] = [tuple(layer) for layer in raw["layers"]]
            return Snapshot(**raw)
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def get(self, snapshot_id: str, tenant: Tenant) -> Snapshot:
        """The tenant's snapshot of that id (another's does not exist to it)."""
        snap = self.read(snapshot_id)
        if snap is None or snap.tenant != tenant.id or snap.kind != "snapshot":
            raise NotFound(f"no snapshot {snapshot_id!r}: POST /sessions/{{id}}/snapshot makes one")
        return snap

    def all(self) -> Iterator[Snapshot]:
        for path in (self.root / "snapshots").glob("snap-*.json"):
            snap = self.read(path.stem)
            if snap is not None:
                yield snap

    def list(self, tenant: Tenant) -> list[Snapshot]:
        mine = [s for s in self.all() if s.tenant == tenant.id and s.kind == "snapshot"]
        return sorted(mine, key=lambda s: s.created_at)

    def remove(self, snapshot_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(snapshot_id).unlink()

    async def wait_ready(self, snap: Snapshot, deadline: float) -> Snapshot:
        """The snapshot once its layers are on disk (another process is writing them)."""
        while snap.status == "writing" and time.monotonic() < deadline:
            await asyncio.sleep(WAIT_READY)
            snap = self.read(snap.id) or snap
        return snap

    # -- paused sessions ---------------------------------------------------------------------

    def write_paused(self, record: dict[str, Any]) -> None:
        path = self.root / "sessions" / f"{record['id']}.json"
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(record))
        os.replace(partial, path)

    def paused_records(self) -> Iterator[dict[str, Any]]:
        for path in (self.root / "sessions").glob("*.json"):
            with contextlib.suppress(OSError, ValueError):
                raw = json.loads(path.read_text())
                if isinstance(raw, dict) and raw.get("id") == path.stem:
                    yield raw

    def remove_paused(self, session_id: str) -> None:
        if session_id and "/" not in session_id and not session_id.startswith("."):
            with contextlib.suppress(FileNotFoundError):
                (self.root / "sessions" / f"{session_id}.json").unlink()

    # -- what a tenant may write -------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The store's lock, between processes: a quota check and the record it allows are one
        step."""
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def charge(
        self, tenant: Tenant, layers: Iterable[tuple[str, int]], kind: str,
        held: dict[str, int] | None = None,
    ) -> None:  # fmt: skip
        """Refuse (QuotaExceeded) a snapshot or fork (`kind`) of `layers` the tenant's quota, or
        the disk, has no room for: the bytes of its layers that neither a snapshot of the
        tenant names nor one of its sessions stacks (`held`) yet. A paused session's snapshot is
        not the tenant's to count; a fork's layers stay in memory, not on this disk."""
        counted: dict[str, int] = dict(held or {})
        for snap in self.all():
            if snap.tenant == tenant.id and snap.kind == "snapshot":
                counted.update(snap.layers)
        new = sum(size for lid, size in layers if lid not in counted)
        held_bytes = sum(counted.values())
        if kind != "pause" and held_bytes + new > self.quota:
            raise QuotaExceeded(
                f"this {kind} needs {mib(new)} more, and this API key holds {mib(held_bytes)} "
                "of snapshots and of layers its sessions stack (one per snapshot or fork in "
                f"their line): over its quota of {mib(self.quota)}. Delete some snapshots "
                "(DELETE /snapshots/{id}) or sessions (DELETE /sessions/{id}), or remove files "
                "from the session first"
            )
        if kind == "fork":
            return
        st = os.statvfs(self.root)
        if new + DISK_RESERVE > st.f_bavail * st.f_frsize:
            raise QuotaExceeded(
                f"the server's disk has {mib(st.f_bavail * st.f_frsize)} free, not enough for "
                f"this snapshot's {mib(new)} and the {mib(DISK_RESERVE)} it keeps free"
            )

    # -- layers on disk ----------------------------------------------------------------------

    def persist(self, frozen: Frozen) -> int:
        """Copy a frozen layer to disk (if it is not there yet) and stack it from there from
        now on; the bytes it takes there."""
        dst = self.layer_path(frozen.id)
        if frozen.memory is None:
            return frozen.size
        if not dst.exists():
            frozen.size = copy_layer(frozen.path, dst)
        frozen.moved_to(str(dst))
        return frozen.size

    def lock_layer(self, layer_id: str) -> int:
        """A shared lock on a layer on disk, held while a session of this process stacks it."""
        fd = os.open(self.root / "layers" / f"{layer_id}.lock",
                     os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)  # fmt: skip
        fcntl.flock(fd, fcntl.LOCK_SH)
        return fd

    def collect(self) -> int:
        """Remove the layers no snapshot or paused session names and no process stacks; how
        many went."""
        named = {lid for snap in self.all() for lid, _ in snap.layers}
        gone = 0
        for path in (self.root / "layers").iterdir():
            if path.name.startswith(".") or not LAYER_ID.fullmatch(path.name) or path.name in named:
                continue
            lock = self.root / "layers" / f"{path.name}.lock"
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a session stacks it
                shutil.rmtree(path, ignore_errors=True)
                lock.unlink(missing_ok=True)
                gone += 1
            finally:
                os.close(fd)
        return gone


def mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


class Book:
    """The frozen layers one server process knows (by id) and who holds each: its sessions
    that stack it, and its snapshots not yet on disk. A layer nobody holds leaves memory (its
    tmpfs detached; a box stacking it keeps it until it goes); one on disk is locked while held.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.frozen: dict[str, Frozen] = {}
        self.holders: dict[str, set[str]] = {}
        self._locks: dict[str, int] = {}  # a lock fd per layer on disk that is held
        self._writing: dict[str, asyncio.Lock] = {}

    def add(self, frozen: Frozen) -> Frozen:
        return self.frozen.setdefault(frozen.id, frozen)

    def hold(self, holder: str, layers: Iterable[Frozen]) -> None:
        for layer in layers:
            self.add(layer)
            self.holders.setdefault(layer.id, set()).add(holder)
            self._lock_if_on_disk(layer)

    def release(self, holder: str, layers: Iterable[Frozen]) -> bool:
        """`holder` holds `layers` no more; whether a layer on disk is now held by none here
        (the store may then remove it, if no snapshot names it: `Store.collect`)."""
        freed = False
        for layer in layers:
            held = self.holders.get(layer.id)
            if held is None:
                continue
            held.discard(holder)
            if not held:
                freed |= layer.memory is None
                self._forget(layer.id)
        return freed

    def _lock_if_on_disk(self, layer: Frozen) -> None:
        if layer.memory is None:
            self._lock(layer.id)

    def _lock(self, layer_id: str) -> None:
        if layer_id not in self._locks:
            with contextlib.suppress(OSError):
                self._locks[layer_id] = self.store.lock_layer(layer_id)

    def _forget(self, layer_id: str) -> None:
        self.holders.pop(layer_id, None)
        layer = self.frozen.pop(layer_id, None)
        if layer is not None:
            layer.drop()
        fd = self._locks.pop(layer_id, None)
        if fd is not None:
            os.close(fd)

    def stack_of(self, snap: Snapshot) -> tuple[Frozen, ...]:
        """A snapshot's layers, from memory where this process has them, else from disk."""
        out = []
        for lid, size in snap.layers:
            layer = self.frozen.get(lid)
            if layer is None:
                path = self.store.layer_path(lid)
                if not path.is_dir():
                    raise InvalidRequest(f"snapshot {snap.id} has lost a layer: delete it")
                layer = Frozen(lid, str(path), size)
            out.append(layer)
        return tuple(out)

    async def persist(self, layers: Iterable[Frozen]) -> list[tuple[str, int]]:
        """Copy each layer to disk (one at a time each: two snapshots may share one), locking
        it there for its holders; their ids and sizes on disk."""
        out = []
        for layer in layers:
            lock = self._writing.setdefault(layer.id, asyncio.Lock())
            async with lock:
                # Locked before it lands on disk: else a `collect` (a snapshot deleted meanwhile)
                # could remove it between its copy and the lock, under the sessions stacking it.
                if layer.id in self.holders:
                    self._lock(layer.id)
                size = await asyncio.to_thread(self.store.persist, layer)
            out.append((layer.id, size))
        return out

    def close(self) -> None:
        for layer_id in list(self.frozen):
            self._forget(layer_id)
