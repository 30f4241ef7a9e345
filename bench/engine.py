"""Throughput, latency and CPU cost of runs through sandlot's HTTP API, next to bare runs.

Each cell runs one program back-to-back from N client threads for a fixed time, either through
`POST /run_code` or as a bare subprocess with the same interpreter (or the same binary), and
reports runs/s, p50/p90 latency and machine-wide CPU ms per run from /proc/stat. Bare and sandlot
cells alternate at each concurrency so that drift in the machine's load hits both alike.

    .venv/bin/python bench/engine.py [--duration S] [--concurrency 1,2,4,8] [--url URL]
                                     [--slots N] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sandlot.config import Config
from sandlot.jail import Jail, JailConfig, RunSpec, placement

REPO_ROOT = Path(__file__).resolve().parent.parent
SANDBOX_PYTHON = "/opt/sandlot/python/bin/python3"
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
STATE_DIR = "/run/sandlot-bench"
CPP_CONCURRENCY = (1, 2)
TARGET_RATIO = 0.5  # python at concurrency 2: sandlot runs/s >= 0.5 x bare runs/s
TARGET_RATIO_AT = 2
TARGET_OVERHEAD_MS = 8.0  # jail CPU ms per run - bare CPU ms per run (no HTTP)
JAIL_UID_BASE = 65000
WARMUP_S = 1.5
HTTP_TIMEOUT_S = 60.0

# One call of a worker: None when the run succeeded, else a short description of what went wrong.
Call = Callable[[], str | None]


@dataclass(frozen=True)
class Program:
    name: str
    language: str
    code: str
    expected: str


PYTHON = Program("python", "python", "print(1)", "1\n")
CPP = Program("cpp", "cpp", '#include <iostream>\nint main(){std::cout<<"hi\\n";}', "hi\n")


@dataclass
class Cell:
    program: str
    mode: str  # "bare", "sandlot" (through HTTP), "jail-zygote" / "jail-warm" / "jail-bwrap"
    concurrency: int
    runs: int = 0
    errors: int = 0
    seconds: float = 0.0
    cpu_ms: float = 0.0
    runs_per_s: float = 0.0
    p50_ms: float = 0.0
    p90_ms: float = 0.0
    cpu_ms_per_run: float = 0.0
    own_cpu_ms_per_run: float | None = None  # this process + the server's process tree only
    client_cpu_ms_per_run: float = 0.0  # this process's threads alone (httpx or subprocess)
    first_error: str | None = None
    ratio_to_bare: float | None = None
    overhead_cpu_ms: float | None = None
    own_overhead_cpu_ms: float | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class Setup:
    url: str
    duration: float
    server_pid: int | None  # None: a server we did not start, whose CPU we cannot attribute


@dataclass
class WorkerLog:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None


# --- measuring ---------------------------------------------------------------------------------


def cpu_jiffies() -> tuple[int, int]:
    """Machine-wide (non-idle, total) jiffies since boot; non-idle excludes idle and iowait."""
    with open("/proc/stat") as f:
        parts = f.readline().split()
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in parts[1:9])
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def busy_jiffies() -> int:
    return cpu_jiffies()[0]


def background_busy(seconds: float = 1.0) -> float:
    """Percent of all CPUs busy over `seconds` while this benchmark sends nothing."""
    busy0, total0 = cpu_jiffies()
    time.sleep(seconds)
    busy1, total1 = cpu_jiffies()
    return round(100.0 * (busy1 - busy0) / max(1, total1 - total0), 1)


def jiffies_to_ms(jiffies: int) -> float:
    return jiffies * 1000.0 / os.sysconf("SC_CLK_TCK")


def proc_stat_times(pid: int) -> tuple[int, int]:
    """(ppid, utime + stime + cutime + cstime in jiffies) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), sum(int(x) for x in fields[11:15])


def tree_cpu_ms(root: int | None) -> float | None:
    """CPU ms of this process and its reaped children, plus `root` and its live descendants.

    A descendant that exits between two samples moves its time into its parent's cutime when
    reaped, so differences of this sum count the server's short-lived runs too.
    """
    if root is None:
        return None
    procs: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                procs[int(entry.name)] = proc_stat_times(int(entry.name))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    tree, frontier = {root}, [root]
    while frontier:
        kids = [k for k in children.get(frontier.pop(), []) if k not in tree]
        tree.update(kids)
        frontier += kids
    own = os.times()
    mine = (own.user + own.system + own.children_user + own.children_system) * 1000.0
    return mine + jiffies_to_ms(sum(procs[p][1] for p in tree if p in procs))


def client_cpu_ms() -> float:
    own = os.times()
    return (own.user + own.system) * 1000.0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[rank]


def work(call: Call, deadline: list[float], start: threading.Barrier, log: WorkerLog) -> None:
    """Call back-to-back until the deadline (set by the main thread before the barrier)."""
    start.wait()
    while time.perf_counter() < deadline[0]:
        t0 = time.perf_counter()
        problem = call()
        elapsed_ms = (time.perf_counter() - t0) * 1000.0
        if problem is None:
            log.latencies_ms.append(elapsed_ms)
            continue
        log.errors += 1
        log.first_error = log.first_error or problem
        time.sleep(0.01)  # a failing server answers fast; do not spin on it


def measure(cell: Cell, calls: list[Call], duration: float, server_pid: int | None) -> Cell:
    """Run one call per thread for `duration` seconds and fill in the cell's numbers."""
    logs = [WorkerLog() for _ in calls]
    start = threading.Barrier(len(calls) + 1)
    deadline = [0.0]
    threads = [
        threading.Thread(target=work, args=(c, deadline, start, log), daemon=True)
        for c, log in zip(calls, logs, strict=True)
    ]
    for t in threads:
        t.start()
    client0, own0 = client_cpu_ms(), tree_cpu_ms(server_pid)
    cpu0, t0 = busy_jiffies(), time.perf_counter()
    deadline[0] = t0 + duration
    start.wait()
    for t in threads:
        t.join()
    cell.seconds = time.perf_counter() - t0
    cell.cpu_ms = jiffies_to_ms(busy_jiffies() - cpu0)
    own1, client1 = tree_cpu_ms(server_pid), client_cpu_ms()
    summarize(cell, logs)
    cell.client_cpu_ms_per_run = (client1 - client0) / cell.runs if cell.runs else 0.0
    if own0 is not None and own1 is not None and cell.runs:
        cell.own_cpu_ms_per_run = (own1 - own0) / cell.runs
    return cell


def summarize(cell: Cell, logs: list[WorkerLog]) -> None:
    latencies = [ms for log in logs for ms in log.latencies_ms]
    cell.runs = len(latencies)
    cell.errors = sum(log.errors for log in logs)
    cell.first_error = next((log.first_error for log in logs if log.first_error), None)
    cell.runs_per_s = cell.runs / cell.seconds if cell.seconds else 0.0
    cell.p50_ms = percentile(latencies, 0.50)
    cell.p90_ms = percentile(latencies, 0.90)
    cell.cpu_ms_per_run = cell.cpu_ms / cell.runs if cell.runs else 0.0


# --- the two ways of running a program ---------------------------------------------------------


def bare_call(argv: list[str], expected: str) -> Call:
    def call() -> str | None:
        try:
            proc = subprocess.run(
                argv, env=CLEAN_ENV, stdin=subprocess.DEVNULL, capture_output=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
        if proc.returncode != 0:
            return f"exit {proc.returncode}: {proc.stderr[:200]!r}"
        if proc.stdout.decode() != expected:
            return f"stdout {proc.stdout[:100]!r}"
        return None

    return call


def sandlot_call(client: httpx.Client, program: Program) -> Call:
    payload = {"code": program.code, "language": program.language}

    def call() -> str | None:
        try:
            resp = client.post("/run_code", json=payload)
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"
        if resp.status_code != 200:
            return f"HTTP {resp.status_code}: {resp.text[:200]}"
        body = resp.json()
        if body.get("status") != "Success":
            return f"status {body.get('status')}: {str(body.get('message'))[:200]}"
        stdout = (body.get("run_result") or {}).get("stdout")
        if stdout != program.expected:
            return f"stdout {str(stdout)[:100]!r}"
        return None

    return call


def jail_call(jail: Jail, slot: int, spec: RunSpec, expected: str) -> Call:
    def call() -> str | None:
        out = jail.run(slot, spec)
        if out.exit_code != 0 or out.stdout.decode() != expected:
            return f"exit {out.exit_code} signal {out.signal}: {out.stderr[:200]!r}"
        return None

    return call


@contextlib.contextmanager
def http_clients(url: str, n: int) -> Iterator[list[httpx.Client]]:
    """One keep-alive client per worker thread, so that threads never share a connection pool."""
    clients = [httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) for _ in range(n)]
    try:
        yield clients
    finally:
        for c in clients:
            c.close()


def compile_cpp(program: Program, workdir: Path) -> Path:
    source, binary = workdir / "hello.cpp", workdir / "hello"
    source.write_text(program.code)
    subprocess.run(["g++", "-std=c++17", "-O2", "-o", str(binary), str(source)], check=True)
    return binary


# --- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    slots: int, log_path: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    argv = [sys.executable, "-m", "sandlot", "serve", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--slots", str(slots)]
    env = {**os.environ, "SANDLOT_STATE_DIR": STATE_DIR, **(env or {})}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}"


def wait_ping(url: str, proc: subprocess.Popen[bytes] | None, log_path: Path | None) -> None:
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log_path.read_text()[-2000:] if log_path else ""
            sys.exit(f"server exited with {proc.returncode} before answering:\n{tail}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/v1/ping", timeout=2.0).status_code == 200:
                return
        time.sleep(0.2)
    sys.exit(f"server at {url} did not answer /v1/ping within 60 s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def server_health(url: str) -> dict[str, Any]:
    try:
        return dict(httpx.get(f"{url}/health", timeout=10.0).json())
    except (httpx.HTTPError, ValueError) as exc:
        return {"error": str(exc)}


# --- the run -----------------------------------------------------------------------------------


def warm_up(calls: list[Call], label: str) -> str | None:
    """A first call per program, then WARMUP_S of load; the first call's problem if it failed."""
    problem = calls[0]()
    if problem is not None:
        print(f"  warm-up {label}: {problem}", flush=True)
        return problem
    measure(Cell(label, "warmup", len(calls)), calls, WARMUP_S, None)
    return None


def run_pair(
    program: Program, conc: int, bare_argv: list[str], setup: Setup, broken: str | None
) -> list[Cell]:
    """The bare cell, then the sandlot cell, at one concurrency."""
    bare_calls = [bare_call(bare_argv, program.expected)] * conc
    bare = measure(Cell(program.name, "bare", conc), bare_calls, setup.duration, setup.server_pid)
    cell = Cell(program.name, "sandlot", conc)
    if broken:
        cell.skipped = broken
    else:
        with http_clients(setup.url, conc) as clients:
            calls = [sandlot_call(c, program) for c in clients]
            measure(cell, calls, setup.duration, setup.server_pid)
    compare(cell, bare)
    print(
        f"  {program.name} c={conc}: bare {bare.runs_per_s:.1f}/s, "
        f"sandlot {cell.runs_per_s:.1f}/s, errors {cell.errors + bare.errors}",
        flush=True,
    )
    return [bare, cell]


def compare(cell: Cell, bare: Cell) -> None:
    if cell.runs and bare.runs_per_s:
        cell.ratio_to_bare = cell.runs_per_s / bare.runs_per_s
        cell.overhead_cpu_ms = cell.cpu_ms_per_run - bare.cpu_ms_per_run
    if cell.own_cpu_ms_per_run is not None and bare.own_cpu_ms_per_run is not None:
        cell.own_overhead_cpu_ms = cell.own_cpu_ms_per_run - bare.own_cpu_ms_per_run


def bench_program(
    program: Program, bare_argv: list[str], setup: Setup, concs: list[int]
) -> list[Cell]:
    top = max(concs)
    warm_up([bare_call(bare_argv, program.expected)] * top, f"{program.name} bare")
    with http_clients(setup.url, top) as clients:
        broken = warm_up([sandlot_call(c, program) for c in clients], f"{program.name} sandlot")
    cells: list[Cell] = []
    for conc in concs:
        cells += run_pair(program, conc, bare_argv, setup, broken)
    return cells


def bench_jail(binary: Path, duration: float, concs: list[int]) -> list[Cell]:
    """The isolation alone (the zygote's boxes or bwrap's, cgroups, seccomp, spawner): no HTTP.

    Runs go back to back, so the zygote's box built ahead of the next run is not ready when
    that run comes: these cells show a box's full cost, not the latency a client with a gap
    between requests sees."""
    runtime = str(Path(SANDBOX_PYTHON).parents[1])
    script = {"main.py": PYTHON.code.encode()}
    cpp = RunSpec(argv=("./main",), files={"main": binary.read_bytes()})
    cold = RunSpec(argv=(SANDBOX_PYTHON, "main.py"), files=script)
    warm = RunSpec(argv=(SANDBOX_PYTHON, "main.py"), files=script, warm=True)
    py_bare = [SANDBOX_PYTHON, "-c", PYTHON.code]
    cases = {  # boxes -> [(program, mode, spec, bare argv)]
        "zygote": [(CPP, "jail-zygote", cpp, [str(binary)]),
                   (PYTHON, "jail-zygote", cold, py_bare),
                   (PYTHON, "jail-warm", warm, py_bare)],
        "bwrap": [(CPP, "jail-bwrap", cpp, [str(binary)]),
                  (PYTHON, "jail-bwrap", cold, py_bare)],
    }  # fmt: skip
    cells: list[Cell] = []
    # The slots kept to CPUs as the server's are (`slot_cpus`, from its config or $SANDLOT_*).
    cpu_sets = placement.resolve_cpu_sets(
        Config.load().slot_cpus, max(concs), placement.allowed_cpus()
    )
    for boxes, runs in cases.items():
        config = JailConfig(
            slots=max(concs), state_dir=STATE_DIR + "-jail", uid_base=JAIL_UID_BASE,
            cpu_sets=cpu_sets,
            ro_binds=(runtime,), boxes=boxes, zygote_python=SANDBOX_PYTHON,
        )  # fmt: skip
        with Jail(config) as jail:
            for program, mode, spec, bare_argv in runs:
                top = [jail_call(jail, i, spec, program.expected) for i in range(max(concs))]
                warm_up(top, f"{program.name} {mode}")
                for conc in concs:
                    bare_calls = [bare_call(bare_argv, program.expected)] * conc
                    bare = measure(Cell(program.name, "bare", conc), bare_calls, duration, None)
                    cell = measure(Cell(program.name, mode, conc), top[:conc], duration, None)
                    compare(cell, bare)
                    over = cell.overhead_cpu_ms or 0
                    print(
                        f"  {program.name} {mode} c={conc}: bare {bare.runs_per_s:.1f}/s, "
                        f"jail {cell.runs_per_s:.1f}/s, +{over:.1f} CPU ms/run",
                        flush=True,
                    )
                    cells += [bare, cell]
    return cells


def run_all(setup: Setup, concs: list[int]) -> list[Cell]:
    cells = bench_program(PYTHON, [SANDBOX_PYTHON, "-c", PYTHON.code], setup, concs)
    with tempfile.TemporaryDirectory(prefix="sandlot-bench-") as tmp:
        binary = compile_cpp(CPP, Path(tmp))
        cpp_concs = [c for c in CPP_CONCURRENCY if c in concs] or [min(concs)]
        cells += bench_program(CPP, [str(binary)], setup, cpp_concs)
        cells += bench_jail(binary, setup.duration, cpp_concs)
    return cells


# --- the report --------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "kernel": os.uname().release,
    }


def ratio_mark(cell: Cell) -> str:
    if (cell.mode, cell.program, cell.concurrency) != ("sandlot", PYTHON.name, TARGET_RATIO_AT):
        return ""
    ok = cell.ratio_to_bare is not None and cell.ratio_to_bare >= TARGET_RATIO
    return f">={TARGET_RATIO:.2f} {'ok' if ok else 'MISS'}"


def overhead_mark(cell: Cell) -> str:
    # The target is for the isolation alone; through HTTP the server's own work adds to it.
    if cell.overhead_cpu_ms is None or not cell.mode.startswith("jail"):
        return ""
    ok = cell.overhead_cpu_ms <= TARGET_OVERHEAD_MS
    return f"<={TARGET_OVERHEAD_MS:.0f} {'ok' if ok else 'MISS'}"


COLUMNS = "prog c mode runs runs/s p50ms p90ms cpu/run own/run ratio target ovh target own-ovh"
HEADINGS = (*COLUMNS.split(), "errors")


def fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "" if value is None else f"{value:{spec}}{suffix}"


def row(cell: Cell) -> tuple[str, ...]:
    head = (cell.program, str(cell.concurrency), cell.mode)
    if cell.skipped:
        return (*head, *["-"] * 6, ratio_mark(cell), "-", "", "-", "SKIPPED")
    return (
        *head,
        str(cell.runs),
        f"{cell.runs_per_s:.1f}",
        f"{cell.p50_ms:.1f}",
        f"{cell.p90_ms:.1f}",
        f"{cell.cpu_ms_per_run:.2f}",
        fmt(cell.own_cpu_ms_per_run, ".2f"),
        fmt(cell.ratio_to_bare, ".2f", "x"),
        ratio_mark(cell),
        fmt(cell.overhead_cpu_ms, "+.1f"),
        overhead_mark(cell),
        fmt(cell.own_overhead_cpu_ms, "+.1f"),
        f"{cell.errors} FLAGGED" if cell.errors else "0",
    )


LEGEND = (
    "cpu/run: machine-wide CPU ms per run (/proc/stat); own/run: this benchmark + the server's\n"
    "process tree only; ratio: sandlot runs/s / bare runs/s; ovh, own-ovh: sandlot - bare CPU ms"
)


def table(cells: list[Cell]) -> str:
    rows = [HEADINGS, *(row(c) for c in cells)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADINGS))]
    lines = [
        "  ".join(
            v.rjust(w) if i != 2 else v.ljust(w)
            for i, (v, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def verdicts(cells: list[Cell]) -> list[str]:
    sand = [c for c in cells if c.mode == "sandlot" and not c.skipped]
    key = next(
        (c for c in sand if c.program == PYTHON.name and c.concurrency == TARGET_RATIO_AT), None
    )
    out = []
    if key is not None and key.ratio_to_bare is not None:
        met = "met" if key.ratio_to_bare >= TARGET_RATIO else "MISSED"
        out.append(
            f"target python c={TARGET_RATIO_AT} ratio >= {TARGET_RATIO}x bare: "
            f"{key.ratio_to_bare:.2f}x -> {met}"
        )
    ovh = [c for c in cells if c.mode.startswith("jail") and c.overhead_cpu_ms is not None]
    if ovh:
        worst = max(ovh, key=lambda c: c.overhead_cpu_ms or 0.0)
        met = "met" if (worst.overhead_cpu_ms or 0.0) <= TARGET_OVERHEAD_MS else "MISSED"
        out.append(
            f"target isolation overhead <= {TARGET_OVERHEAD_MS:.0f} CPU ms/run: worst "
            f"{worst.overhead_cpu_ms:+.1f} ({worst.program} c={worst.concurrency}) -> {met}"
        )
    own = [c for c in sand if c.own_overhead_cpu_ms is not None]
    if own:
        worst = max(own, key=lambda c: c.own_overhead_cpu_ms or 0.0)
        out.append(
            f"  (own process tree only, without other work on the machine: worst "
            f"{worst.own_overhead_cpu_ms:+.1f} ({worst.program} c={worst.concurrency}))"
        )
    return out


def report(header: dict[str, Any], cells: list[Cell]) -> None:
    print()
    print(f"sandlot engine bench  {header['date']}")
    print(
        f"machine: nproc={header['nproc']} load avg {header['loadavg']} at start, "
        f"{header['loadavg_end']} at end; cpu={header['cpu_model']!r} kernel={header['kernel']}"
    )
    print(
        f"server: {header['url']} ({header['server']}) slots={header['slots']} "
        f"duration={header['duration']}s/cell"
    )
    print(f"isolation: {header['health'].get('isolation', header['health'])}")
    print(
        f"background CPU busy (1 s idle sample): {header['background_busy_pct']}% before, "
        f"{header['background_busy_pct_end']}% after"
    )
    busy = max(header["background_busy_pct"], header["background_busy_pct_end"])
    if busy > 10.0:
        print(f"WARNING: {busy}% of the CPUs busy with other work; the numbers are noisy")
    print()
    print(table(cells))
    print(LEGEND)
    print()
    for line in verdicts(cells):
        print(line)
    errs = [c for c in cells if c.errors or c.skipped]
    for c in errs:
        print(
            f"FLAGGED {c.program} c={c.concurrency} {c.mode}: {c.errors} errors; "
            f"first: {c.skipped or c.first_error}"
        )
    if not errs:
        print("errors: none")


# --- main --------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=8.0, help="seconds per cell (default 8)")
    p.add_argument("--concurrency", default="1,2,4,8", help="comma-separated (default 1,2,4,8)")
    p.add_argument("--url", help="use this running server instead of starting one")
    p.add_argument("--slots", type=int, default=os.cpu_count() or 1, help="slots of own server")
    p.add_argument("--out", type=Path, help="also write the results here as JSON")
    args = p.parse_args(argv)
    args.concs = sorted({int(x) for x in args.concurrency.split(",") if x.strip()})
    if not args.concs or min(args.concs) < 1:
        p.error("--concurrency needs positive integers")
    return args


@contextlib.contextmanager
def server(args: argparse.Namespace) -> Iterator[tuple[str, int | None]]:
    """The server's URL and, when this benchmark started it, its pid."""
    if args.url:
        wait_ping(args.url.rstrip("/"), None, None)
        yield args.url.rstrip("/"), None
        return
    with tempfile.TemporaryDirectory(prefix="sandlot-bench-log-") as tmp:
        log_path = Path(tmp) / "server.log"
        proc, url = start_server(args.slots, log_path)
        try:
            wait_ping(url, proc, log_path)
            yield url, proc.pid
        finally:
            stop_server(proc)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not Path(SANDBOX_PYTHON).exists():
        sys.exit(f"{SANDBOX_PYTHON} is missing; run `make setup` first")
    header = machine() | {"background_busy_pct": background_busy()}
    with server(args) as (url, pid):
        header |= {
            "url": url,
            "server": "existing" if args.url else "own",
            "duration": args.duration,
            "health": server_health(url),
        }
        header["slots"] = header["health"].get("slots", args.slots)
        print(
            f"benchmarking {url}: {len(args.concs)} python + {len(CPP_CONCURRENCY)} cpp "
            f"concurrencies, {args.duration}s per cell",
            flush=True,
        )
        cells = run_all(Setup(url, args.duration, pid), args.concs)
    header["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    header["background_busy_pct_end"] = background_busy()
    report(header, cells)
    if args.out:
        targets = {"python_ratio_at_c2": TARGET_RATIO, "overhead_cpu_ms": TARGET_OVERHEAD_MS}
        doc = {"header": header, "targets": targets, "cells": [asdict(c) for c in cells]}
        args.out.write_text(json.dumps(doc, indent=2) + "\n")
    return 1 if any(c.errors or c.skipped for c in cells) else 0


if __name__ == "__main__":
    sys.exit(main())
