"""Entries on disk under one quota: cached environments and checkouts, each a directory
`KIND/KEY/` with a `meta.json`, kept until the quota needs room (least recently used first).

An entry is made in a directory of its own and renamed into place whole, so a reader sees it
complete or not at all. Each has a lock file: users hold it shared while a run mounts the entry,
its maker holds it exclusive while making it (a second maker of the same key waits, then finds
it made), and eviction takes it exclusive without waiting, so nothing in use is removed. The
locks are flock(2): they hold between the server's processes, and go with a process that dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sandlot.errors import InvalidRequest, NotFound

KEY = re.compile(r"^[0-9a-f]{16,64}$")
KINDS = ("envs", "checkouts")


@dataclass(slots=True)
class Entry:
    kind: str
    key: str
    size: int = 0
    created: float = 0.0
    last_used: float = 0.0
    info: dict[str, object] = field(default_factory=dict)  # what made it (repository, command)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class Store:
    def __init__(self, root: str | Path, quota: int) -> None:
        self.root = Path(root)
        self.quota = quota

    def setup(self) -> None:
        for kind in (*KINDS, "runs", "tmp"):
            (self.root / kind).mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o700)  # entries are 0777 inside: nobody but root may reach them
        for stale in (self.root / "tmp").iterdir():  # makings a dead process left
            pid = stale.name.split("-")[2] if stale.name.count("-") >= 3 else ""
            if not (pid.isdigit() and alive(int(pid))):
                shutil.rmtree(stale, ignore_errors=True)

    def path(self, kind: str, key: str) -> Path:
        if kind not in KINDS or not KEY.match(key):
            raise InvalidRequest(f"no {kind} entry is named {key!r}: a key is 16-64 hex digits")
        return self.root / kind / key

    def _lock_path(self, kind: str, key: str) -> Path:
        return self.root / kind / f"{key}.lock"

    @contextlib.contextmanager
    def _lock(self, kind: str, key: str, mode: int) -> Iterator[bool]:
        fd = os.open(self._lock_path(kind, key), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, mode)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # and with it the lock

    def get(self, kind: str, key: str) -> Entry | None:
        meta = self.path(kind, key) / "meta.json"
        try:
            return Entry(**json.loads(meta.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    @contextlib.contextmanager
    def use(self, kind: str, key: str) -> Iterator[Entry | None]:
        """The entry, held (not evicted) while the block runs, its use recorded; None if absent."""
        with self._lock(kind, key, fcntl.LOCK_SH):
            entry = self.get(kind, key)
            if entry is not None:
                self._touch(kind, entry)
            yield entry

    @contextlib.contextmanager
    def making(self, kind: str, key: str) -> Iterator[Path | None]:
        """A directory to make the entry in (then `commit`), or None when the entry exists: made
        before, or by whoever held the lock while this waited."""
        with self._lock(kind, key, fcntl.LOCK_EX):
            if self.get(kind, key) is not None:
                yield None
                return
            tmp = (
                self.root / "tmp" / f"{kind}-{key}-{os.getpid()}-{time.monotonic_ns()}"
            )  # kind, key: no "-"
            tmp.mkdir(mode=0o700)
            try:
                yield tmp
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    def commit(self, kind: str, key: str, made: Path, size: int, info: dict[str, object]) -> Entry:
        """Put what was made (under `making`'s lock) in place, then make room under the quota."""
        now = time.time()
        entry = Entry(kind, key, size, now, now, info)
        (made / "meta.json").write_text(json.dumps(entry.to_dict()))
        target = self.path(kind, key)
        if target.exists():  # a half-removed entry (no meta): what is made now replaces it
            shutil.rmtree(target)
        made.rename(target)
        self.evict(keep=(kind, key))
        return entry

    def _touch(self, kind: str, entry: Entry) -> None:
        entry.last_used = time.time()
        meta = self.path(kind, entry.key) / "meta.json"
        tmp = meta.with_suffix(f".{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(entry.to_dict()))
            tmp.replace(meta)

    def entries(self, kind: str | None = None) -> list[Entry]:
        out = []
        for k in (kind,) if kind else KINDS:
            for path in sorted((self.root / k).glob("*/meta.json")):
                if (entry := self.get(k, path.parent.name)) is not None:
                    out.append(entry)
        return out

    def remove(self, kind: str, key: str, wait: bool = False) -> bool:
        """Remove an entry unless a run holds it (then False, or wait for it with `wait`)."""
        path = self.path(kind, key)
        if not path.exists():
            raise NotFound(f"no {kind[:-1]} {key} (sandlot env list shows what there is)")
        mode = fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)
        with self._lock(kind, key, mode) as held:
            if not held:
                return False
            (path / "meta.json").unlink(missing_ok=True)  # no longer an entry, even if cut short
            shutil.rmtree(path, ignore_errors=True)
        return True  # the lock file stays: one unlinked while another waits on it splits the lock

    def evict(self, keep: tuple[str, str] | None = None) -> list[Entry]:
        """Remove the least recently used entries not in use until the rest fit the quota."""
        entries = sorted(self.entries(), key=lambda e: e.last_used)
        total = sum(e.size for e in entries)
        gone = []
        for entry in entries:
            if total <= self.quota:
                break
            if (entry.kind, entry.key) == keep:
                continue
            if self.remove(entry.kind, entry.key):
                total -= entry.size
                gone.append(entry)
        return gone


def alive(pid: int) -> bool:
    """Whether a process of that pid is alive (a maker or a run's, on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
