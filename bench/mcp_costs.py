"""The MCP face's costs, against the HTTP API's, measured in one run.

1. Server CPU per call (time on a CPU of the server's own threads, not the boxes'): the
   `run_code` tool with Python `print(1)` over streamable HTTP (`/mcp`, one initialized
   connection per client thread): `mcp`, a call that asks for no progress (answered as one
   JSON body), and `mcp_stream`, the same call with a progress token (answered as an SSE
   stream); against `POST /run_code` with the same program (bench/server_cpu.py's `run`), in
   short turns taken one after the other (`--rounds`), the median of each kind's turns.
   Target: `mcp` <= 1.5x.
2. CPU per such call over stdio, one after the other (`--stdio-calls`): of `sandlot mcp`
   serving a local jail (as root), and of `sandlot mcp --server` plus the server's.
3. How long `sandlot mcp` takes to answer `initialize` on stdio, from its start: bridged to the
   server (`--server`), and serving a local jail (as root); against a bare `python3 -c pass`
   started the same way. Target: <= 1 s.

    .venv/bin/python bench/mcp_costs.py [--duration S] [--rounds R] [--concurrency C] [--starts N]
                                        [--floor] [--stdio-calls N] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_cpu import cpu_seconds, server_pids

REPO_ROOT = Path(__file__).resolve().parent.parent
STATE_DIR = "/run/sandlot-bench-mcp"
UID_BASE = 65240
PORT = 18540
ACCEPT = {"Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"}}}  # fmt: skip
RUN = {"code": "print(1)", "language": "python"}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "run_code", "arguments": RUN}}  # fmt: skip
STREAMED_CALL = {**CALL, "params": {"name": "run_code", "arguments": RUN,
                                    "_meta": {"progressToken": 1}}}  # fmt: skip
PRINTED = '"stdout":"1\\n"'  # in the answer, its spaces taken out
# kind: where it goes, what it sends (None: a GET), and what a right answer holds
KINDS = {
    "http": ("/run_code", RUN, PRINTED),
    "mcp": ("/mcp", CALL, PRINTED),
    "mcp_stream": ("/mcp", STREAMED_CALL, PRINTED),
}
# --floor: what a request that does nothing costs, plain and over MCP (the SDK's own share)
FLOOR = {
    "http_ping": ("/v1/ping", None, ""),
    "mcp_ping": ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, '"result":{}'),
}


def on_cpu(pids: list[int]) -> float:
    """Seconds the processes' threads have been on a CPU, to the nanosecond (the scheduler's
    count, /proc/PID/task/*/schedstat): /proc/PID/stat counts in ticks of 10 ms, a quarter
    of a short round's total."""
    total = 0
    for pid in pids:
        for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            try:
                total += int(stat.read_text().split()[0])
            except (OSError, IndexError, ValueError):
                continue  # a thread that ended meanwhile
    return total / 1e9


def connect(c: httpx.Client) -> dict[str, str]:
    """An initialized MCP connection: the headers its calls carry."""
    r = c.post("/mcp", json=INIT, headers=ACCEPT)
    r.raise_for_status()
    headers = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}  # fmt: skip
    c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
           headers=headers)  # fmt: skip
    return headers


def load(url: str, kind: str, duration: float, concurrency: int) -> tuple[int, int]:
    path, body, right = {**KINDS, **FLOOR}[kind]
    done, bad = [0] * concurrency, [0] * concurrency
    stop = time.monotonic() + duration

    def worker(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            headers = connect(c) if path == "/mcp" else {}
            while time.monotonic() < stop:
                r = c.get(path) if body is None else c.post(path, json=body, headers=headers)
                done[i] += 1
                bad[i] += r.status_code != 200 or right not in r.text.replace(" ", "")
            if headers:
                c.delete("/mcp", headers=headers)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done), sum(bad)


def cpu_per_call(
    url: str, pids: list[int], duration: float, concurrency: int, rounds: int, kinds: list[str]
) -> list[dict]:
    rows = []
    for kind in kinds:
        load(url, kind, 1.0, concurrency)  # warm-up
    for rnd in range(rounds):  # interleaved, short and many: a noisy machine hits all alike
        for kind in kinds:
            cpu0, t0 = on_cpu(pids), time.monotonic()
            n, bad = load(url, kind, duration, concurrency)
            cpu, wall = on_cpu(pids) - cpu0, time.monotonic() - t0
            rows.append({"round": rnd, "kind": kind, "calls": n, "unexpected": bad,
                         "calls_per_s": round(n / wall, 1),
                         "server_cpu_ms_per_call": round(cpu * 1000 / n, 3)})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    return rows


def time_to_answer(argv: list[str], env: dict[str, str], line: bytes | None) -> tuple[float, float]:
    """Seconds from starting `argv` to its first line on stdout (after sending `line`): wall
    time, and the CPU the process had used by then (what a loaded machine does not inflate)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    if line is not None:
        proc.stdin.write(line)
        proc.stdin.flush()
    answer = proc.stdout.readline()
    elapsed = time.monotonic() - t0
    cpu = cpu_seconds([proc.pid])
    proc.stdin.close()
    proc.wait(60)
    assert answer, f"{argv} answered nothing"
    return elapsed, cpu


def stdio_runs(url: str) -> dict[str, tuple[list[str], dict[str, str]]]:
    """`sandlot mcp` bridged to the server, and serving a local jail; and a bare start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDLOT_")}
    local = {**env, "SANDLOT_STATE_DIR": STATE_DIR + "-stdio", "SANDLOT_SLOTS": "1",
             "SANDLOT_UID_BASE": str(UID_BASE + 10), "SANDLOT_SESSION_POOL": "0",
             "SANDLOT_SESSION_UID_BASE": "120000"}  # fmt: skip
    return {
        "bare_python": ([sys.executable, "-c", "print()"], env),
        "stdio_bridge": ([sys.executable, "-m", "sandlot", "mcp", "--server", url], env),
        "stdio_local": ([sys.executable, "-m", "sandlot", "mcp"], local),
    }


def say(proc: subprocess.Popen[bytes], message: dict, answer: bool = True) -> bytes:
    """One message to a stdio server, and (for a request) the line it answers."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    return proc.stdout.readline() if answer else b""


def stdio_cpu_per_call(url: str, server: list[int], calls: int) -> dict[str, dict[str, float]]:
    """CPU per `run_code` call (Python `print(1)`) over stdio, one call after the other: of the
    `sandlot mcp` process (not its boxes), and for the bridge that of the server too."""
    out = {}
    for name, (argv, env) in stdio_runs(url).items():
        if name == "bare_python":
            continue
        proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
        assert proc.stdin is not None
        pids = [proc.pid, *(server if name == "stdio_bridge" else [])]
        say(proc, INIT)
        say(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"}, answer=False)
        say(proc, CALL)  # the first: a local jail starts now
        bad, cpu0 = 0, on_cpu(pids)
        for i in range(calls):
            bad += PRINTED not in say(proc, {**CALL, "id": i + 2}).decode().replace(" ", "")
        cpu = on_cpu(pids) - cpu0
        proc.stdin.close()
        proc.wait(60)
        out[name] = {"cpu_ms_per_call": round(cpu * 1000 / calls, 3), "unexpected": bad}
        print(json.dumps({"stdio": name, "calls": calls, **out[name]}), flush=True)
    return out


def readiness(url: str, starts: int) -> dict[str, dict[str, float]]:
    init = (json.dumps(INIT) + "\n").encode()
    out = {}
    for name, (argv, run_env) in stdio_runs(url).items():
        line = None if name == "bare_python" else init
        times = [time_to_answer(argv, run_env, line) for _ in range(starts)]
        out[name] = {"wall_s": round(statistics.median(t[0] for t in times), 3),
                     "cpu_s": round(statistics.median(t[1] for t in times), 3)}  # fmt: skip
        print(json.dumps({"start": name, **out[name]}), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="each kind's turns, interleaved")
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--floor", action="store_true", help="also a ping, plain and over MCP")
    ap.add_argument("--stdio-calls", type=int, default=100, help="calls over stdio (0: none)")
    ap.add_argument("--out")
    args = ap.parse_args()
    env = {**os.environ, "SANDLOT_STATE_DIR": STATE_DIR, "SANDLOT_UID_BASE": str(UID_BASE),
           "SANDLOT_LOG_LEVEL": "warning", "SANDLOT_SESSION_POOL": "0"}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandlot", "serve", "--port", str(PORT), "--slots", "2"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{PORT}"
    try:
        for _ in range(600):
            if proc.poll() is not None:  # another server on the port would answer instead
                raise SystemExit(f"the server exited ({proc.returncode}): is port {PORT} taken?")
            try:
                if httpx.get(url + "/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        pids = server_pids(proc.pid)
        kinds = [*KINDS, *(FLOOR if args.floor else ())]
        rows = cpu_per_call(url, pids, args.duration, args.concurrency, args.rounds, kinds)
        stdio = stdio_cpu_per_call(url, pids, args.stdio_calls) if args.stdio_calls else {}
        starts = readiness(url, args.starts) if args.starts else {}
    finally:
        proc.terminate()
        proc.wait(60)
    per = {k: statistics.median(r["server_cpu_ms_per_call"] for r in rows if r["kind"] == k)
           for k in kinds}  # fmt: skip
    summary = {
        "server_cpu_ms_per_call": per,
        "mcp_over_http_cpu": round(per["mcp"] / per["http"], 2),
        "mcp_stream_over_http_cpu": round(per["mcp_stream"] / per["http"], 2),
        "mcp_added_ms_per_call": round(per["mcp"] - per["http"], 3),
        **({"ping_added_ms": round(per["mcp_ping"] - per["http_ping"], 3)} if args.floor else {}),
        "target_cpu_ratio": 1.5,
        "stdio_cpu_ms_per_call": {k: v["cpu_ms_per_call"] for k, v in stdio.items()},
        "ready_s": starts,
        "target_ready_s": 1.0,
    }
    print(json.dumps(summary), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, **summary}, indent=1) + "\n")


if __name__ == "__main__":
    main()
