"""Settings: one table of (name, default, help), overridable by a TOML file and SANDLOT_* variables.

Request limits come in pairs: a default used when a request does not say, and a server maximum
that no request may exceed.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sandlot.errors import SandlotError

MiB = 1 << 20
_BOOL = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()


SETTINGS: tuple[Setting, ...] = (
    Setting("host", "127.0.0.1", "address the server binds to"),
    Setting("port", 8080, "port the server listens on"),
    Setting(
        "allowed_hosts",
        "",
        "comma-separated host names the server answers to besides its addresses and localhost "
        "(a guard against DNS rebinding); * for any",
    ),
    Setting("warm_python", True, "run Python in forks of a warm interpreter (same box, faster)"),
    Setting(
        "boxes",
        "zygote",
        "who builds a run's box: zygote (a root helper per slot, one box ahead) or bwrap",
        ("zygote", "bwrap"),
    ),
    Setting(
        "share_netns",
        False,
        "a slot's boxes share one loopback-only network namespace: ~2 ms of CPU less per run; "
        "the loopback's and TCP's counters then cross from one run to the next",
    ),
    Setting("slots", os.cpu_count() or 1, "runs at the same time (one spawner and uid each)"),
    Setting("queue_size", 256, "requests that may wait for a slot; beyond it the answer is 504"),
    Setting("queue_timeout", 60.0, "seconds a request may wait for a slot before a 504"),
    Setting("uid_base", 61000, "uid of slot 0; slot k runs as uid_base + k"),
    Setting("bwrap", "/usr/bin/bwrap", "the bubblewrap binary"),
    Setting("state_dir", "/run/sandlot", "where the jail keeps per-slot work dirs"),
    Setting(
        "runtime_dir", "/opt/sandlot", "sandbox runtimes (Python, Go, ...) made by `sandlot setup`"
    ),
    Setting("run_timeout", 10.0, "default wall-clock seconds of a run"),
    Setting("max_run_timeout", 300.0, "largest run_timeout a request may ask for"),
    Setting("compile_timeout", 10.0, "default wall-clock seconds of a compile step"),
    Setting("max_compile_timeout", 300.0, "largest compile_timeout a request may ask for"),
    Setting("memory_mb", 1024, "default memory limit of a run in MiB (memory cgroup)"),
    Setting("max_memory_mb", 8192, "largest memory_limit_MB a request may ask for"),
    Setting("pids", 256, "processes and threads one run may have"),
    Setting("output_bytes", 8 * MiB, "cap per output stream; past it the run is stopped"),
    Setting("disk_bytes", 256 * MiB, "size of a run's work dir (tmpfs)"),
    Setting("tmp_bytes", 64 * MiB, "size of a run's /tmp and of its /dev/shm (each a tmpfs)"),
    Setting("open_files", 1024, "open files per process"),
    Setting("max_code_bytes", 4 * MiB, "largest `code` a request may send"),
    Setting("max_files_bytes", 64 * MiB, "largest total of `files` (decoded) a request may send"),
    Setting("max_test_cases", 1000, "most test cases in one request"),
    Setting("max_batch_items", 10_000, "most items in one /run_batch request"),
    Setting("max_batch_cases", 20_000, "most test cases, all items together, in one /run_batch"),
    Setting("max_batch_bytes", 32 * MiB, "largest /run_batch request body"),
    Setting("dataset_dir", "", "a directory of *.jsonl user datasets for the judge (see docs)"),
    Setting("coder_roots", "", "colon-separated directories POST /code may edit; none: no /code"),
    Setting("coder_jobs", 2, "most POST /code jobs at once; past it the answer is 504 (retry)"),
    Setting("session_max", 64, "live sessions at most; past it creating one answers 429"),
    Setting("session_per_client", 0, "live sessions one client address may hold (0: no cap)"),
    Setting("session_pool", 2, "Python kernels kept started, so a session or notebook starts fast"),
    Setting("session_uid_base", 62000, "uid of the first live box (sessions, notebooks)"),
    Setting("session_idle_timeout", 300.0, "default seconds a session may sit unused"),
    Setting("max_session_idle_timeout", 3600.0, "largest idle_timeout a session may ask for"),
    Setting("session_lifetime", 3600.0, "default seconds a session lives, however busy"),
    Setting("max_session_lifetime", 86400.0, "largest lifetime a session may ask for"),
    Setting("session_cpu_seconds", 3600.0, "CPU seconds a session may use over its life"),
    Setting("session_disk_bytes", 256 * MiB, "size of a session's work dir (tmpfs)"),
)
_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True, slots=True)
class Config:
    host: str
    port: int
    allowed_hosts: str
    warm_python: bool
    boxes: str
    share_netns: bool
    slots: int
    queue_size: int
    queue_timeout: float
    uid_base: int
    bwrap: str
    state_dir: str
    runtime_dir: str
    run_timeout: float
    max_run_timeout: float
    compile_timeout: float
    max_compile_timeout: float
    memory_mb: int
    max_memory_mb: int
    pids: int
    output_bytes: int
    disk_bytes: int
    tmp_bytes: int
    open_files: int
    max_code_bytes: int
    max_files_bytes: int
    max_test_cases: int
    max_batch_items: int
    max_batch_cases: int
    max_batch_bytes: int
    dataset_dir: str
    coder_roots: str
    coder_jobs: int
    session_max: int
    session_per_client: int
    session_pool: int
    session_uid_base: int
    session_idle_timeout: float
    max_session_idle_timeout: float
    session_lifetime: float
    max_session_lifetime: float
    session_cpu_seconds: float
    session_disk_bytes: int

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, **overrides: Any) -> Config:
        """Defaults, then the TOML file (path or $SANDLOT_CONFIG), $SANDLOT_*, overrides."""
        values = {s.name: s.default for s in SETTINGS}
        path = path or os.environ.get("SANDLOT_CONFIG")
        if path:
            try:
                data = tomllib.loads(Path(path).read_text())
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise SandlotError(f"cannot read config file {path}: {exc}") from exc
            for key, value in data.items():
                values[_known(key, str(path))] = value
        for s in SETTINGS:
            env = os.environ.get(f"SANDLOT_{s.name.upper()}")
            if env is not None:
                values[s.name] = env
        for key, value in overrides.items():
            if value is not None:
                values[_known(key, "overrides")] = value
        typed = {}
        for f in fields(cls):
            kind = type(_BY_NAME[f.name].default)
            try:
                typed[f.name] = _coerce(kind, values[f.name])
            except (TypeError, ValueError, KeyError) as exc:
                raise SandlotError(
                    f"setting {f.name} must be a {kind.__name__}, got {values[f.name]!r}"
                ) from exc
        for s in SETTINGS:
            if s.choices and typed[s.name] not in s.choices:
                raise SandlotError(
                    f"setting {s.name} must be one of {', '.join(s.choices)}, got {typed[s.name]!r}"
                )
        return cls(**typed)


def _coerce(kind: type, value: Any) -> Any:
    if kind is bool and isinstance(value, str):
        return _BOOL[value.lower()]  # bool("false") would be True
    return kind(value)


def _known(key: str, where: str) -> str:
    if key not in _BY_NAME:
        raise SandlotError(f"unknown setting {key!r} in {where}; known: {', '.join(_BY_NAME)}")
    return key
