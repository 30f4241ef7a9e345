"""What a language row provides, and the registry that resolves names and checks availability."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sandlot.errors import UnknownLanguage

PACKAGES_STATUS = ".sandlot-packages.json"  # in a package set's dir (sandlot/install/sets.py)


@dataclass(frozen=True, slots=True)
class Split:
    """How the judge's split programs of a row are built (sandlot/executor/split.py): the
    answer is the request's code, written to `answer`; the harness is the request's `harness`
    files. `harness` compiles those alone (a build of its own, which the compile cache keeps for
    every answer to the same problem) and leaves `harness_artifacts`; `build` compiles the
    answer, checks its symbols against the harness's and the runtime libraries' (the files
    `runtime` matches, glob patterns) and links the row's `artifacts`. A row whose harness
    compiles against the answer (Rust's crate, D's import) has no `harness` step: its `build`
    gets the harness's sources too."""

    answer: str
    build: tuple[str, ...]
    harness: tuple[str, ...] | None = None
    harness_artifacts: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Language:
    """One row of the table.

    argv templates may use {src} (the source file), {runtime} (the sandbox runtime dir),
    {memory_mb} (the run's memory limit) and {heap_mb} (three quarters of it, for managed heaps).
    """

    name: str
    source: str  # file the code is written to, in the work dir
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    artifacts: tuple[str, ...] = ()  # what the compile step leaves for the run step
    version: tuple[str, ...] = ()  # argv printing the toolchain version (first line is kept)
    aliases: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()  # file suffixes besides `source`'s that name this language
    binds: tuple[str, ...] = ()  # extra read-only host paths the toolchain needs
    env: dict[str, str] = field(default_factory=dict)
    requires: tuple[str, ...] = ()  # host paths that must exist for the language to be usable
    apt: tuple[str, ...] = ()  # Debian packages `sandlot setup` installs for it
    # The driver that runs a sealed run's program and `{"input", "expected"}` test cases
    # (sandlot/executor/guards), and the file it runs (default: `source`; a build's output).
    harness: str | None = None
    harness_program: str = ""
    # A test framework's guard: every run is sealed, accepted only when the framework reported
    # every test passed (sandlot/executor/guards/frameworks.py).
    guard: str | None = None
    pids: int = 0  # processes/threads the toolchain needs at least (the JVM's threads)
    warm: bool = False  # run is `PYTHON SCRIPT`: may run in a fork of a warm interpreter
    summary: str = ""
    # Put before the code unless the code already starts with it (PHP's `<?php` opening tag).
    prefix: str = ""
    # Why the toolchain is absent when `requires` is missing, and how an operator adds it, for
    # languages `sandlot setup` cannot install (not packaged, or needing hardware).
    unavailable: str = ""
    npm: tuple[str, ...] = ()  # npm packages `sandlot setup` installs into {runtime}/node
    # Dirs of package sets `sandlot setup` fetches from a language registry (languages/packages/
    # holds their locks); each has a status file saying where its packages came from.
    packages: tuple[str, ...] = ()
    # A JVM class-data archive the row's compile step (or run step, when it has none) uses:
    # `sandlot setup` records it by running that step once on `sample` (a hello world).
    cds: str = ""
    sample: str = ""
    # A class-data archive of a compiled row's run step (its runtime library, parsed once):
    # setup compiles `sample`, puts its classes in `cds_jar` and runs it once. The JVM maps an
    # archive only for a class path that starts with the one it was recorded with, so the run's
    # class path is the runtime's jars, then `cds_jar` (whose class must not be a user's name),
    # then the user's classes.
    run_cds: str = ""
    cds_jar: str = ""
    # How the judge builds an answer apart from its tests (None: this row has no split).
    split: Split | None = None

    def program(self, code: str) -> str:
        """The text written to `source`: the code, with `prefix` when it lacks it."""
        if self.prefix and not code.lstrip().startswith(self.prefix.strip()):
            return self.prefix + code
        return code

    def argv(self, template: tuple[str, ...], runtime: str, memory_mb: int) -> tuple[str, ...]:
        values = {
            "src": self.source,
            "runtime": runtime,
            "memory_mb": memory_mb,
            "heap_mb": max(16, memory_mb * 3 // 4),
        }
        return tuple(part.format(**values) for part in template)

    def resolved_binds(self, runtime: str) -> tuple[str, ...]:
        return tuple(b.format(runtime=runtime) for b in self.binds)

    def resolved_env(self, runtime: str) -> dict[str, str]:
        return {k: v.format(runtime=runtime) for k, v in self.env.items()}

    def missing(self, runtime: str) -> list[str]:
        return [
            p for p in (r.format(runtime=runtime) for r in self.requires) if not os.path.exists(p)
        ]


def _stamp(row: Language, runtime: str) -> list:
    """What a row's probe depends on: its version command's program and required paths."""
    paths = [r.format(runtime=runtime) for r in row.requires]
    if row.version:
        program = row.argv(row.version, runtime, 1024)[0]
        paths.append(shutil.which(program, path="/usr/bin:/bin") or program)
    stamp: list[list[str | int]] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            stamp.append([path])
        else:
            stamp.append([path, st.st_ino, st.st_size, st.st_mtime_ns])
    return stamp


@dataclass(slots=True)
class Availability:
    available: bool
    version: str | None
    reason: str | None


class Registry:
    """Resolves names and aliases to rows and knows which rows this machine can run."""

    def __init__(self, rows: Iterable[Language], runtime: str) -> None:
        self.runtime = runtime
        self.rows = {row.name: row for row in rows}
        self.names: dict[str, str] = {}
        for row in self.rows.values():
            for key in (row.name, *row.aliases):
                self.names[key] = row.name
                self.names.setdefault(key.lower(), row.name)
        self.status: dict[str, Availability] = {}

    def etc_entries(self) -> tuple[str, ...]:
        """Host /etc paths some language needs; the jail copies them into the box's /etc."""
        paths = (b for row in self.rows.values() for b in row.resolved_binds(self.runtime))
        return tuple(p for p in dict.fromkeys(paths) if p.startswith("/etc/") and os.path.exists(p))

    def get(self, name: str) -> Language:
        key = self.names.get(name) or self.names.get(name.lower())
        if key is None:
            raise UnknownLanguage(name, list(self.rows))
        return self.rows[key]

    def probe(self) -> dict[str, Availability]:
        """Check every row's toolchain once (in parallel) and remember the versions.

        A probe runs the toolchain (a JVM's takes a second), so results are kept in the runtime
        dir, each with the identity (inode, size, mtime) of the files it depends on: a row is
        probed again only when one of them changed (a package upgrade, `sandlot setup`).
        """
        cache = self._read_cache()
        stamps = {name: _stamp(row, self.runtime) for name, row in self.rows.items()}
        stale = [row for name, row in self.rows.items()
                 if cache.get(name, {}).get("stamp") != stamps[name]]  # fmt: skip
        with ThreadPoolExecutor(max_workers=8) as pool:
            probed = pool.map(self._probe_one, stale)
            fresh = dict(zip((r.name for r in stale), probed, strict=True))
        self.status = {
            name: fresh.get(name) or Availability(**cache[name]["status"]) for name in self.rows
        }
        # A probe that failed (a timeout on a busy machine, a crash) is tried again next time.
        keep = {name: {"stamp": stamps[name], "status": asdict(status)}
                for name, status in self.status.items()
                if status.available or self.rows[name].missing(self.runtime)}  # fmt: skip
        if fresh:
            self._write_cache(keep)
        return self.status

    def _cache_path(self) -> Path:
        return Path(self.runtime) / ".probe-cache.json"

    def _read_cache(self) -> dict:
        try:
            data = json.loads(self._cache_path().read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_cache(self, data: dict) -> None:
        path = self._cache_path()
        try:
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as f:
                json.dump(data, f)
            os.chmod(f.name, 0o644)
            os.replace(f.name, path)
        except OSError:
            pass  # not ours to write (no runtime dir, not root): probe again next time

    def _probe_one(self, row: Language) -> Availability:
        missing = row.missing(self.runtime)
        if missing and row.unavailable:
            return Availability(False, None, row.unavailable)
        if missing:
            return Availability(
                False,
                None,
                f"not installed on this server (missing {', '.join(missing)}); "
                f"an operator adds it with `sandlot setup --languages {row.name}`",
            )
        if not row.version:
            return Availability(True, None, None)
        # Templates as in a run (JVM rows size their heap from {memory_mb}): 1 GiB for a probe.
        argv = list(row.argv(row.version, self.runtime, 1024))
        try:
            done = subprocess.run(
                argv, capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Availability(False, None, f"version probe failed: {exc}")
        text = (done.stdout or done.stderr).decode(errors="replace").strip()
        first = text.splitlines()[0] if text else None
        if done.returncode != 0:
            return Availability(
                False, None, f"broken on this server: {' '.join(argv)} says {first}"
            )
        return Availability(True, first, None)

    def packages(self, name: str) -> list[dict[str, object]]:
        """Where each of the row's package sets came from, as `sandlot setup` recorded it in the
        set's status file (sandlot/install/sets.py): fetched from the registry, or Debian's
        packages in its place with the pins it could not get; `installed: False` if absent."""
        sets = []
        for template in self.rows[name].packages:
            path = Path(template.format(runtime=self.runtime))
            try:
                status = json.loads((path / PACKAGES_STATUS).read_text())
            except (OSError, ValueError):
                status = None
            sets.append(
                status if isinstance(status, dict) else {"dir": str(path), "installed": False}
            )
        return sets

    def available(self, name: str) -> Availability:
        return self.status.get(name) or self._probe_one(self.rows[name])
