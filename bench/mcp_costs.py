"""The MCP face's costs, against the HTTP API's, measured in one run.

1. Server CPU per call (time on a CPU of the server's own threads, not the boxes'): the
   `run_code` tool with Python `print(1)` over streamable HTTP (`/mcp`, one initialized
   connection per client thread, the answer as the SDK sends it: an SSE event), against
   `POST /run_code` with the same program (bench/server_cpu.py's `run`), in short turns taken
   one after the other (`--rounds`), the median of each kind's turns. Target: <= 1.5x.
2. How long `sandlot mcp` takes to answer `initialize` on stdio, from its start: bridged to the
   server (`--server`), and serving a local jail (as root); against a bare `python3 -c pass`
   started the same way. Target: <= 1 s.

    .venv/bin/python bench/mcp_costs.py [--duration S] [--rounds R] [--concurrency C] [--starts N]
                                        [--out F.json]
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
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "run_code", "arguments": {"language": "python", "code": "print(1)"}},
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
    done, bad = [0] * concurrency, [0] * concurrency
    stop = time.monotonic() + duration

    def worker(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            headers = connect(c) if kind == "mcp" else {}
            while time.monotonic() < stop:
                if kind == "mcp":
                    r = c.post("/mcp", json=CALL, headers=headers)
                    ok = r.status_code == 200 and '"stdout":"1\\n"' in r.text.replace(" ", "")
                else:
                    r = c.post("/run_code", json={"code": "print(1)", "language": "python"})
                    ok = r.status_code == 200 and r.json()["stdout"] == "1\n"
                done[i] += 1
                bad[i] += not ok
            if kind == "mcp":
                c.delete("/mcp", headers=headers)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done), sum(bad)


def cpu_per_call(
    url: str, pids: list[int], duration: float, concurrency: int, rounds: int
) -> list[dict]:
    rows = []
    for kind in ("http", "mcp"):
        load(url, kind, 1.0, concurrency)  # warm-up
    for rnd in range(rounds):  # interleaved, short and many: a noisy machine hits both alike
        for kind in ("http", "mcp"):
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


def readiness(url: str, starts: int) -> dict[str, dict[str, float]]:
    init = (json.dumps(INIT) + "\n").encode()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDLOT_")}
    local = {**env, "SANDLOT_STATE_DIR": STATE_DIR + "-stdio", "SANDLOT_SLOTS": "1",
             "SANDLOT_UID_BASE": str(UID_BASE + 10), "SANDLOT_SESSION_POOL": "0",
             "SANDLOT_SESSION_UID_BASE": "120000"}  # fmt: skip
    runs = {
        "bare_python": ([sys.executable, "-c", "print()"], env, None),
        "stdio_bridge": ([sys.executable, "-m", "sandlot", "mcp", "--server", url], env, init),
        "stdio_local": ([sys.executable, "-m", "sandlot", "mcp"], local, init),
    }
    out = {}
    for name, (argv, run_env, line) in runs.items():
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
        rows = cpu_per_call(url, pids, args.duration, args.concurrency, args.rounds)
        starts = readiness(url, args.starts) if args.starts else {}
    finally:
        proc.terminate()
        proc.wait(60)
    per = {k: statistics.median(r["server_cpu_ms_per_call"] for r in rows if r["kind"] == k)
           for k in ("http", "mcp")}  # fmt: skip
    summary = {
        "server_cpu_ms_per_call": per,
        "mcp_over_http_cpu": round(per["mcp"] / per["http"], 2),
        "target_cpu_ratio": 1.5,
        "ready_s": starts,
        "target_ready_s": 1.0,
    }
    print(json.dumps(summary), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, **summary}, indent=1) + "\n")


if __name__ == "__main__":
    main()
