"""The server's own CPU per request (its HTTP side, not the boxes), and throughput by workers.

Starts `sandlot serve --slots S --workers W` for each W asked, sends requests of three kinds
from C client threads for a fixed time, and reads the CPU (user + system, every thread) of the
server's processes from /proc: the supervisor and its workers, not the slot spawners, zygotes
and boxes under them. Kinds:

- `ping`: `GET /v1/ping`, the floor of a request (HTTP, routing, middleware, response);
- `invalid`: a `/run_code` that fails validation (a 422): HTTP and the request model, no box;
- `run`: `/run_code` with Python `print(1)`: all the server does for a run (admission, its end
  of the spawner's channel, the response), the box's own work excluded.

    .venv/bin/python bench/server_cpu.py [--duration S] [--workers 1,2] [--concurrency C]
                                         [--fresh] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
STATE_DIR = "/run/sandlot-bench-cpu"
UID_BASE = 65200
TICK = os.sysconf("SC_CLK_TCK")
KINDS = {
    "ping": ("GET", "/v1/ping", None, 200),
    "invalid": ("POST", "/run_code", {"code": 5, "language": "python"}, 422),
    "run": ("POST", "/run_code", {"code": "print(1)", "language": "python"}, 200),
}


def server_pids(root: int) -> list[int]:
    """The supervisor and its worker processes (or the one server process): python processes
    of sandlot's HTTP side; the jail's spawners and everything under them are left out."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    rows = [line.split(None, 2) for line in out.splitlines()]
    workers = [int(r[0]) for r in rows if int(r[1]) == root and "sandlot.api.server" in r[2]]
    return [root, *workers]


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


def load(url: str, kind: str, duration: float, concurrency: int, fresh: bool) -> tuple[int, int]:
    method, path, body, want = KINDS[kind]
    done, bad = [0] * concurrency, [0] * concurrency
    stop = time.monotonic() + duration

    def worker(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            while time.monotonic() < stop:
                # A fresh connection may reach any worker; a kept one stays on its worker.
                headers = {"Connection": "close"} if fresh else None
                r = c.request(method, path, json=body, headers=headers)
                done[i] += 1
                bad[i] += r.status_code != want

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done), sum(bad)


def measure(workers: int, slots: int, duration: float, concurrency: int, fresh: bool) -> list[dict]:
    port = 18500 + workers
    env = {**os.environ, "SANDLOT_STATE_DIR": STATE_DIR, "SANDLOT_UID_BASE": str(UID_BASE),
           "SANDLOT_LOG_LEVEL": "warning"}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandlot", "serve", "--port", str(port), "--slots", str(slots),
         "--workers", str(workers)],
        cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        time.sleep(1.0)  # every worker up (each answers /health once its jail is ready)
        pids = server_pids(proc.pid)
        rows = []
        for kind in KINDS:
            load(url, kind, 1.0, concurrency, fresh)  # warm-up
            cpu0, t0 = cpu_seconds(pids), time.monotonic()
            n, bad = load(url, kind, duration, concurrency, fresh)
            cpu, wall = cpu_seconds(pids) - cpu0, time.monotonic() - t0
            rows.append({
                "workers": workers, "kind": kind, "fresh": fresh, "requests": n, "unexpected": bad,
                "requests_per_s": round(n / wall, 1),
                "server_cpu_ms_per_request": round(cpu * 1000 / n, 3),
                "ceiling_per_worker_per_s": round(n / cpu) if cpu else None,
            })  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
        return rows
    finally:
        proc.terminate()
        proc.wait(60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--fresh", action="store_true", help="a new connection per request")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    for w in (int(x) for x in args.workers.split(",")):
        rows += measure(w, args.slots, args.duration, args.concurrency, args.fresh)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
