"""Settings: each a field of `Config` with its default, help and range, overridable by a TOML file
and SANDLOT_* variables; `SETTINGS` is the table of them, read off `Config`.

Request limits come in pairs: a default used when a request does not say, and a server maximum
that no request may exceed. Both settings of a pair come from the limit's row in sandlot.limits.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import os
import pwd
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sandlot.errors import SandlotError
from sandlot.limits import (
    COMPILE_TIMEOUT,
    MEMORY,
    REQUEST_LIMITS,
    RUN_TIMEOUT,
    SESSION_IDLE_TIMEOUT,
    SESSION_LIFETIME,
    MiB,
    RequestLimit,
)

_BOOL = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting. A number must satisfy each bound that is given: `ge` (>=), `gt` (>), `le`."""

    name: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    ge: float | None = None
    gt: float | None = None
    le: float | None = None

    @property
    def env(self) -> str:
        return f"SANDLOT_{self.name.upper()}"


AUTO = 0  # `workers = 0`: as many as the slots need (see `workers_for`)


def setting(
    default: Any,
    help: str,
    choices: tuple[str, ...] = (),
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
) -> Any:
    """A field of `Config` that is a setting: its default, help and range (see `Setting`)."""
    return field(
        default=default,
        metadata={"setting": {"help": help, "choices": choices, "ge": ge, "gt": gt, "le": le}},
    )


def default_of(limit: RequestLimit) -> Any:
    """The setting of a request limit's default."""
    return setting(limit.default, limit.help, ge=limit.ge, gt=limit.gt)


def maximum_of(limit: RequestLimit) -> Any:
    """The setting of a request limit's server maximum."""
    return setting(limit.maximum, limit.max_help, ge=limit.ge, gt=limit.gt)


@dataclass(frozen=True, slots=True)
class Config:
    """The settings, each declared once here: its type, default, help and range (`setting`).

    The limits a request may ask for take both settings from their row in sandlot.limits.
    """

    host: str = setting("127.0.0.1", "address the server binds to")
    port: int = setting(8080, "port the server listens on", ge=1, le=65535)
    allowed_hosts: str = setting(
        "",
        "comma-separated host names the server answers to besides its addresses and localhost "
        "(a guard against DNS rebinding); * for any",
    )
    forwarded_allow_ips: str = setting(
        "",
        "comma-separated addresses or networks (10.0.0.0/8) of proxies whose X-Forwarded-For "
        "and X-Forwarded-Proto are believed; none: a request's client is its socket's peer, "
        "whatever its headers say; * for any peer (only behind a proxy nothing else reaches)",
    )
    workers: int = setting(
        AUTO,
        "server processes on the port, each with its share of the slots; 0: one per 16 slots",
        ge=0,
        le=256,
    )
    api_keys: str = setting(
        "",
        "comma-separated keys a request must carry (Authorization: Bearer KEY or X-Auth-Token: "
        "KEY); none: no key asked",
    )
    api_keys_file: str = setting("", "a file of more keys, one a line (# starts a comment)")
    metrics_open: bool = setting(False, "serve GET /metrics without a key even when keys are set")
    insecure: bool = setting(
        False,
        "allow binding an address other than loopback with no api_keys (anyone who reaches "
        "the port can run code)",
    )
    log_format: str = setting(
        "auto",
        "auto (text on a terminal, JSON lines otherwise), json or text",
        choices=("auto", "json", "text"),
    )
    log_level: str = setting(
        "info", "least severe log level written", choices=("debug", "info", "warning", "error")
    )
    shutdown_grace: float = setting(
        30.0, "seconds SIGTERM waits for runs in flight before cancelling them", ge=0, le=3600
    )
    drain_seconds: float = setting(
        0.0,
        "seconds after SIGTERM during which the server still answers (GET /health says 503, "
        "so a load balancer stops sending) before it stops accepting",
        ge=0,
        le=3600,
    )
    warm_python: bool = setting(
        True, "run Python in forks of a warm interpreter (same box, faster)"
    )
    boxes: str = setting(
        "zygote",
        "who builds a run's box: zygote (a root helper per slot, one box ahead) or bwrap",
        choices=("zygote", "bwrap"),
    )
    reuse_netns: bool = setting(
        True,
        "a box is built in its slot's last network namespace when the run there left it as it "
        "was made (no packet, socket or counter of its own): ~1-2 ms of CPU less per run",
    )
    slot_cpus: str = setting(
        "auto",
        "the CPUs each slot's runs are kept to: auto (slot k gets every n-th CPU the server may "
        "use from the k-th, n the slots), none (the kernel places runs), or a CPU list per "
        "slot, ';' between them (0-3;4-7)",
    )
    slots: int = setting(
        os.cpu_count() or 1, "runs at the same time (one spawner and uid each)", ge=1, le=4096
    )
    queue_size: int = setting(
        256, "requests that may wait for a slot; beyond it the answer is 504", ge=0
    )
    # verl reads an answer for compile + run timeout + 10 s and retries only a 504: a request
    # that starts within 8 s still answers in its time, one that cannot is refused at once.
    queue_timeout: float = setting(
        8.0, "seconds a request may wait to start before a 504 (an RL client's patience)", gt=0
    )
    uid_base: int = setting(
        61000,
        "uid of slot 0; slot k runs as uid_base + k (no user of this machine may have one)",
        ge=1000,
        le=2**31 - 1,
    )
    bwrap: str = setting("/usr/bin/bwrap", "the bubblewrap binary")
    state_dir: str = setting("/run/sandlot", "where the jail keeps per-slot work dirs")
    runtime_dir: str = setting(
        "/opt/sandlot", "sandbox runtimes (Python, Go, ...) made by `sandlot setup`"
    )
    maven_repository: str = setting(
        "",
        "a Maven repository URL `sandlot setup` fetches the JVM rows' jars from (a mirror of "
        "Maven Central); empty: Maven Central",
    )
    goproxy: str = setting(
        "",
        "the GOPROXY `sandlot setup` downloads the Go rows' modules through (a mirror); "
        "empty: Go's default",
    )
    cargo_registry: str = setting(
        "",
        "a cargo registry's index URL (sparse+https://...) `sandlot setup` vendors the rust "
        "row's crates from instead of crates.io; empty: crates.io",
    )
    run_timeout: float = default_of(RUN_TIMEOUT)
    max_run_timeout: float = maximum_of(RUN_TIMEOUT)
    compile_timeout: float = default_of(COMPILE_TIMEOUT)
    max_compile_timeout: float = maximum_of(COMPILE_TIMEOUT)
    memory_mb: int = default_of(MEMORY)
    max_memory_mb: int = maximum_of(MEMORY)
    pids: int = setting(256, "processes and threads one run may have", ge=1)
    max_pids: int = setting(4096, "most processes and threads a dataset's runs may be given", ge=1)
    output_bytes: int = setting(8 * MiB, "cap per output stream; past it the run is stopped", ge=1)
    disk_bytes: int = setting(256 * MiB, "size of a run's work dir (tmpfs)", ge=MiB)
    tmp_bytes: int = setting(
        64 * MiB, "size of a run's /tmp and of its /dev/shm (each a tmpfs)", ge=MiB
    )
    open_files: int = setting(1024, "open files per process", ge=16)
    max_code_bytes: int = setting(4 * MiB, "largest `code` a request may send", ge=1)
    max_files_bytes: int = setting(
        64 * MiB, "largest total of `files` (decoded) a request may send", ge=0
    )
    max_test_cases: int = setting(1000, "most test cases in one request", ge=1)
    max_batch_items: int = setting(10_000, "most items in one /run_batch request", ge=1)
    max_batch_cases: int = setting(
        20_000, "most test cases, all items together, in one /run_batch", ge=1
    )
    max_batch_bytes: int = setting(32 * MiB, "largest /run_batch request body", ge=1)
    dataset_dir: str = setting("", "a directory of *.jsonl user datasets for the judge (see docs)")
    coder_roots: str = setting(
        "", "colon-separated directories POST /code may edit; none: no /code"
    )
    coder_jobs: int = setting(
        2, "most POST /code jobs at once; past it the answer is 504 (retry)", ge=1
    )
    repo_dir: str = setting(
        "/var/cache/sandlot/repos",
        "where repository tasks keep cached environments, checkouts and each run's layer",
    )
    repo_env_quota: int = setting(
        20 * 1024 * MiB, "bytes of cached environments kept; past it the least recently used go",
        ge=0,
    )  # fmt: skip
    repo_env_bytes: int = setting(
        2048 * MiB, "most bytes one setup may write (its layer is a tmpfs, charged to the "
        "setup's memory on top of repo_setup_memory_mb)", ge=MiB,
    )  # fmt: skip
    repo_setup_memory_mb: int = setting(2048, "memory of a setup box in MiB", ge=1)
    repo_setup_timeout: float = setting(900.0, "wall-clock seconds a setup may take", gt=0)
    repo_test_timeout: float = setting(600.0, "largest wall-clock seconds of a test run", gt=0)
    egress_allow: str = setting(
        "", "host names a setup may reach through the egress proxy besides the package "
        "registries (comma-separated; .example.org: the domain and every name below it)",
    )  # fmt: skip
    session_max: int = setting(64, "live sessions at most; past it creating one answers 429", ge=1)
    session_per_client: int = setting(
        0, "live sessions one client (API key and address) may hold (0: no cap)", ge=0
    )
    session_pool: int = setting(
        2, "Python kernels kept started, so a session or notebook starts fast", ge=0
    )
    session_uid_base: int = setting(
        62000, "uid of the first live box (sessions, notebooks)", ge=1000
    )
    session_idle_timeout: float = default_of(SESSION_IDLE_TIMEOUT)
    max_session_idle_timeout: float = maximum_of(SESSION_IDLE_TIMEOUT)
    session_lifetime: float = default_of(SESSION_LIFETIME)
    max_session_lifetime: float = maximum_of(SESSION_LIFETIME)
    session_cpu_seconds: float = setting(
        3600.0, "CPU seconds a session may use over its life", gt=0
    )
    session_disk_bytes: int = setting(256 * MiB, "size of a session's work dir (tmpfs)", ge=MiB)
    snapshot_dir: str = setting(
        "/var/lib/sandlot/snapshots",
        "where session snapshots and paused sessions are kept on disk (empty: no snapshots, "
        "forks or pauses)",
    )
    snapshot_quota: int = setting(
        10 * 1024 * MiB, "bytes of frozen layers one API key may hold: those its snapshots name "
        "and its sessions stack (forks' too, in memory)", ge=0,
    )  # fmt: skip
    fork_max: int = setting(16, "sessions one fork may make (POST /sessions/{id}/fork)", ge=1)
    session_pause_after: float = setting(
        0.0,
        "default seconds a session sits unused before it is paused: snapshotted to disk and "
        "its box freed until its next use (0: never)",
        ge=0,
    )
    session_paused_max: int = setting(
        1024,
        "paused sessions at most (each keeps up to session_disk_bytes on disk); past it an idle "
        "session stays live",
        ge=0,
    )
    mcp_connections: int = setting(256, "MCP clients connected to /mcp at once, at most", ge=1)
    mcp_idle_timeout: float = setting(
        600.0,
        "seconds an MCP connection may sit unused before it (and the sessions it opened) ends",
        gt=0,
    )
    languages: str = setting("", "languages `sandlot setup` installs, comma-separated (empty: all)")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, **overrides: Any) -> Config:
        """Defaults, then the TOML file (path or $SANDLOT_CONFIG), $SANDLOT_*, overrides; each
        value checked against its type and range, SandlotError saying which is wrong."""
        values = {s.name: s.default for s in SETTINGS}
        path = path or os.environ.get("SANDLOT_CONFIG")
        if path:
            try:
                data = tomllib.loads(Path(path).read_text())
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise SandlotError(f"cannot read config file {path}: {exc}") from exc
            for key, value in data.items():
                values[_known(key, str(path))] = value
        _check_variables(os.environ)
        for s in SETTINGS:
            env = os.environ.get(s.env)
            if env is not None:
                values[s.name] = env
        for key, value in overrides.items():
            if value is not None:
                values[_known(key, "overrides")] = value
        typed = {s.name: _typed(s, values[s.name]) for s in SETTINGS}
        for low, high in _PAIRS:
            if typed[low] > typed[high]:
                raise SandlotError(
                    f"setting {low}={typed[low]:g} is above {high}={typed[high]:g}: a request's "
                    "default may not exceed what a request may ask for"
                )
        _check_slot_cpus(typed["slot_cpus"])
        _check_proxies(typed["forwarded_allow_ips"])
        last_uid = typed["uid_base"] + typed["slots"] - 1
        if last_uid > 2**31 - 1:
            raise SandlotError(f"uid_base + slots - 1 = {last_uid} is past the largest uid")
        return cls(**typed)

    def keys(self) -> frozenset[str]:
        """The API keys: `api_keys` and the lines of `api_keys_file`; SandlotError for a file
        that cannot be read or a key that is too short, too long or not printable."""
        found = [k.strip() for k in self.api_keys.split(",") if k.strip()]
        if self.api_keys_file:
            try:
                text = Path(self.api_keys_file).read_text()
            except (OSError, UnicodeDecodeError) as exc:
                raise SandlotError(
                    f"cannot read api_keys_file {self.api_keys_file}: {exc}"
                ) from exc
            for line in text.splitlines():
                line = line.split("#", 1)[0].strip()
                if line:
                    found.append(line)
        for n, key in enumerate(found, 1):
            if (
                not (MIN_KEY_CHARS <= len(key) <= MAX_KEY_CHARS)
                or not key.isascii()
                or any(c.isspace() or not c.isprintable() or c == "," for c in key)
            ):
                raise SandlotError(
                    f"API key {n} is not usable: a key is {MIN_KEY_CHARS} to {MAX_KEY_CHARS} "
                    "printable ASCII characters with no space or comma (e.g. from `openssl rand "
                    "-hex 32`)"
                )
        return frozenset(found)

    def proxies(self) -> list[str]:
        """`forwarded_allow_ips` as a list (empty: no proxy is believed)."""
        return [p.strip() for p in self.forwarded_allow_ips.split(",") if p.strip()]

    def worker_count(self) -> int:
        """Server processes: `workers`, or as many as the slots need (at least one)."""
        if self.workers == AUTO:
            return max(1, -(-self.slots // SLOTS_PER_WORKER))
        return self.workers

    def live_uids(self) -> int:
        """Uids of live boxes (sessions, notebooks, kernels in the pool) one process may hold
        at once, from `session_uid_base` on: every session, the pool, and two notebooks a slot."""
        return self.session_max + self.session_pool + 2 * self.slots


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f.name, f.default, **f.metadata["setting"]) for f in fields(Config)
)
# Variables read from the environment that are not settings of the server: the config file
# itself, and what the client and the coder route read where no config file is at hand.
VARIABLES: dict[str, str] = {
    "SANDLOT_CONFIG": "the TOML config file (like --config)",
    "SANDLOT_API_KEY": "the key the client (sandlot eval --server, sandlot.Client) sends",
    "SANDLOT_CODER_MODEL": "the model `sandlot code` and POST /code use when none is given",
    "SANDLOT_AIDER": "the aider executable (default: sandlot's own venv, then PATH)",
}
_BY_NAME = {s.name: s for s in SETTINGS}
_KNOWN_VARIABLES = frozenset({s.env for s in SETTINGS} | set(VARIABLES))
SLOTS_PER_WORKER = 16  # slots one server process parses and routes for (docs/operations.md)
MIN_KEY_CHARS = 16
MAX_KEY_CHARS = 4096
LOOPBACK_NAMES = ("localhost",)


# A request default may not exceed its maximum.
_PAIRS = tuple((limit.setting, limit.max_setting) for limit in REQUEST_LIMITS)


def split(total: int, parts: int) -> list[int]:
    """total in near-equal whole parts, the larger first."""
    size, extra = divmod(total, parts)
    return [size + (k < extra) for k in range(parts)]


def worker_shares(slots: int, workers: int) -> list[range]:
    """Which slots (so which uids, uid_base + k) each worker owns: disjoint, near-equal parts."""
    if not 1 <= workers <= slots:
        raise SandlotError(
            f"workers={workers} must be from 1 to slots={slots}: each worker owns at least a slot"
        )
    out, start = [], 0
    for n in split(slots, workers):
        out.append(range(start, start + n))
        start += n
    return out


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_serving(cfg: Config, keys: frozenset[str]) -> None:
    """What `serve` refuses to start with, beyond a setting's own range: an open port reachable
    from elsewhere, or a slot uid that belongs to a user of this machine."""
    if not is_loopback(cfg.host) and not keys and not cfg.insecure:
        raise SandlotError(
            f"refusing to listen on {cfg.host} with no API keys: anyone who reaches the port could "
            "run code. Set api_keys (or SANDLOT_API_KEYS, or api_keys_file), or pass --insecure "
            "if something in front of this server checks who calls it"
        )
    slots = range(cfg.uid_base, cfg.uid_base + cfg.slots)
    live = range(cfg.session_uid_base, cfg.session_uid_base + cfg.live_uids())
    if slots.start < live.stop and live.start < slots.stop:  # LiveBoxes sees one worker's only
        raise SandlotError(
            f"the live boxes' uids {live.start}-{live.stop - 1} overlap the slots' "
            f"{slots.start}-{slots.stop - 1}: choose another session_uid_base"
        )
    for uid in slots:
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            continue
        raise SandlotError(
            f"uid {uid} (slot {uid - cfg.uid_base}) belongs to the user {user!r} of this "
            f"machine: boxes would run as that user. Choose a uid_base with {cfg.slots} free "
            "uids after it"
        )


def _typed(s: Setting, value: Any) -> Any:
    kind = type(s.default)
    try:
        typed = _coerce(kind, value)
    except (TypeError, ValueError, KeyError) as exc:
        raise SandlotError(f"setting {s.name} must be {_KINDS[kind]}, got {value!r}") from exc
    if s.choices and typed not in s.choices:
        raise SandlotError(f"setting {s.name} must be one of {', '.join(s.choices)}, got {typed!r}")
    if kind in (int, float):
        for bound, ok, words in (
            (s.ge, lambda b: typed >= b, "at least"),
            (s.gt, lambda b: typed > b, "more than"),
            (s.le, lambda b: typed <= b, "at most"),
        ):
            if bound is not None and not ok(bound):
                raise SandlotError(f"setting {s.name} must be {words} {bound:g}, got {typed!r}")
    return typed


_KINDS = {bool: "true or false", int: "a whole number", float: "a finite number", str: "text"}


def _coerce(kind: type, value: Any) -> Any:
    """A value of the setting's type, strictly: no bool for a number (TOML `slots = true`), no
    fraction for an int, no NaN or infinity, no list for a string."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        return _BOOL[value.lower()]  # bool("false") would be True
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError("not a whole number")
        return int(value)
    if kind is float:
        number = float(value)
        if not math.isfinite(number):
            raise ValueError("not a finite number")
        return number
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _check_slot_cpus(setting: str) -> None:
    if setting.strip().lower() in ("auto", "none"):
        return
    from sandlot.jail import parse_cpu_sets  # the jail's own syntax; most settings never need it

    try:
        parse_cpu_sets(setting)
    except ValueError as exc:
        raise SandlotError(f"setting slot_cpus={setting!r}: {exc}") from exc


def _check_proxies(setting: str) -> None:
    """Each entry an address or a network: uvicorn would take any other text as a name that
    never matches, so a typo would silently believe no proxy."""
    for entry in (p.strip() for p in setting.split(",") if p.strip()):
        if entry == "*":
            continue
        try:
            ipaddress.ip_network(entry) if "/" in entry else ipaddress.ip_address(entry)
        except ValueError:
            raise SandlotError(
                f"setting forwarded_allow_ips: {entry!r} is not an IP address or network "
                "(e.g. 127.0.0.1, ::1, 10.0.0.0/8, with no host bits), nor *"
            ) from None


def _check_variables(environ: Mapping[str, str]) -> None:
    """A SANDLOT_* variable that names nothing is a typo that would silently do nothing."""
    for name in environ:
        if name.startswith("SANDLOT_") and name not in _KNOWN_VARIABLES:
            close = difflib.get_close_matches(name, sorted(_KNOWN_VARIABLES), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise SandlotError(
                f"unknown environment variable {name}: {hint}`sandlot config` lists the "
                "variables sandlot reads"
            )


def _known(key: str, where: str) -> str:
    if key not in _BY_NAME:
        close = difflib.get_close_matches(key, list(_BY_NAME), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SandlotError(
            f"unknown setting {key!r} in {where}{hint}; known: {', '.join(_BY_NAME)}"
        )
    return key
