"""Latency of `/run_jupyter`, of creating a session, and of an execution in a live session,
through sandlot's HTTP API, next to the same agent run bare (no box, no HTTP) in the same run.

    .venv/bin/python bench/sessions.py [--requests N] [--slots 1] [--pool 2] [--out FILE.json]

- notebook: `/run_jupyter` with 3 small cells. "paced" waits until the server's pool of
  prestarted kernels is full before each request (a client that pauses); "back-to-back" sends
  the next at once, so after the pool is drained each request waits for a kernel to start.
  Bare: the agent started outside any box (a kernel start), the 3 cells, the agent stopped.
- create: `POST /sessions` (Python) from a full pool, and with the pool empty (a kernel start).
- execute: `x += 1` in one live session, back to back. Bare: the same op over the agent's pipes.
  Its row also says the server process's own CPU per request (HTTP, validation, the pump): on a
  loaded machine the wall time is mostly waiting for a CPU, this is what the server costs.

Targets (printed, not asserted): notebook p50 <= 300 ms at 1 slot, create p50 <= 150 ms from
the pool, execute p50 <= 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from engine import SANDBOX_PYTHON, start_server, stop_server, wait_ping

from sandlot.sessions.manager import AGENT

CELLS = ["a = 1", "a + 1", "print(a)"]
TARGETS_MS = {"notebook paced": 300.0, "create from pool": 150.0, "execute x += 1": 10.0}
ENV = {"SANDLOT_UID_BASE": "65100", "SANDLOT_SESSION_UID_BASE": "66000"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(call: Callable[[], object], n: int, before: Callable[[], None] = lambda: None) -> list:
    out = []
    for _ in range(n):
        before()
        t = time.perf_counter()
        call()
        out.append((time.perf_counter() - t) * 1000)
    return out


class BareAgent:
    """sandlot's in-box agent as a plain child process: the work of a session without a box."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [SANDBOX_PYTHON, AGENT, "python"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=tempfile.gettempdir(), env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
        )  # fmt: skip
        assert self.recv()["type"] == "ready"

    def send(self, op: dict) -> None:
        body = json.dumps(op).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(struct.pack(">I", len(body)) + body)
        self.proc.stdin.flush()

    def recv(self) -> dict:
        assert self.proc.stdout is not None
        (size,) = struct.unpack(">I", self.proc.stdout.read(4))
        return json.loads(self.proc.stdout.read(size))

    def run(self, code: str) -> None:
        self.send({"op": "execute", "code": code, "timeout": 30, "max_output": 1 << 20})
        while self.recv()["type"] != "end":
            pass

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def bare_notebook() -> None:
    agent = BareAgent()
    for cell in CELLS:
        agent.run(cell)
    agent.close()


def pool_full(c: httpx.Client, size: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while c.get("/health").json()["sessions"]["pool_ready"] < size:
        if time.monotonic() > deadline:
            sys.exit("the pool did not fill up")
        time.sleep(0.05)


def process_cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def measure(url: str, n: int, pool: int, server_pid: int) -> dict[str, dict[str, float]]:
    rows: dict[str, list[float]] = {}
    bare: dict[str, list[float]] = {}
    with httpx.Client(base_url=url, timeout=300) as c:
        pool_full(c, pool)

        def notebook() -> None:
            r = c.post("/run_jupyter", json={"cells": CELLS})
            assert r.status_code == 200 and r.json()["cells"][2]["stdout"] == "1\n", r.text

        rows["notebook paced"] = timed(notebook, n, lambda: pool_full(c, pool))
        bare["notebook paced"] = timed(bare_notebook, max(3, n // 4))
        pool_full(c, pool)
        started = time.perf_counter()
        rows["notebook back-to-back"] = timed(notebook, n)
        rate = n / (time.perf_counter() - started)

        made: list[str] = []

        def create() -> None:
            r = c.post("/sessions", json={"language": "python"})
            assert r.status_code == 200, r.text
            made.append(r.json()["id"])

        def drop() -> None:
            while made:
                c.delete(f"/sessions/{made.pop()}")

        rows["create from pool"] = timed(create, n, lambda: (drop(), pool_full(c, pool)))
        drop()
        pool_full(c, pool)
        for _ in range(pool):
            create()  # the pool is empty now: the next creates start a kernel each
        rows["create, pool empty"] = timed(create, max(3, n // 4), drop)
        drop()

        sid = c.post("/sessions", json={"language": "python"}).json()["id"]
        c.post(f"/sessions/{sid}/execute", json={"code": "x = 0"})

        def step() -> None:
            r = c.post(f"/sessions/{sid}/execute", json={"code": "x += 1"})
            assert r.status_code == 200 and r.json()["status"] == "ok", r.text

        before = process_cpu_ms(server_pid)
        rows["execute x += 1"] = timed(step, n * 10)
        server_cpu = (process_cpu_ms(server_pid) - before) / (n * 10)
        c.delete(f"/sessions/{sid}")
    agent = BareAgent()
    agent.run("x = 0")
    bare["execute x += 1"] = timed(lambda: agent.run("x += 1"), n * 10)
    agent.close()
    report = {}
    for name, values in rows.items():
        b = bare.get(name)
        report[name] = {
            "p50_ms": round(pct(values, 0.5), 2),
            "p90_ms": round(pct(values, 0.9), 2),
            "bare_p50_ms": round(pct(b, 0.5), 2) if b else None,
            "ratio": round(pct(values, 0.5) / pct(b, 0.5), 2) if b else None,
            "target_ms": TARGETS_MS.get(name),
        }
    report["notebook back-to-back"]["per_s"] = round(rate, 2)
    report["execute x += 1"]["server_cpu_ms"] = round(server_cpu, 2)
    return report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--slots", type=int, default=1)
    p.add_argument("--pool", type=int, default=2)
    p.add_argument("--out", help="write the figures as JSON here too")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        env = {**ENV, "SANDLOT_SESSION_POOL": str(args.pool)}
        proc, url = start_server(args.slots, log, env)
        try:
            wait_ping(url, proc, log)
            report = measure(url, args.requests, args.pool, proc.pid)
        except httpx.HTTPError:
            sys.stderr.write(f"the server's log, last lines:\n{log.read_text()[-4000:]}\n")
            raise
        finally:
            stop_server(proc)
    load = os.getloadavg()[0]
    print(f"slots={args.slots} pool={args.pool} requests={args.requests} load={load:.1f}")
    print(f"{'':24} {'p50 ms':>8} {'p90 ms':>8} {'bare p50':>9} {'ratio':>6} {'target':>7}")
    for name, r in report.items():
        bare = "" if r["bare_p50_ms"] is None else f"{r['bare_p50_ms']:.1f}"
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        target = "" if r["target_ms"] is None else f"<= {r['target_ms']:g}"
        extra = f"  ({r['per_s']}/s)" if "per_s" in r else ""
        if "server_cpu_ms" in r:
            extra = f"  (server CPU {r['server_cpu_ms']} ms/request)"
        print(f"{name:24} {r['p50_ms']:8.1f} {r['p90_ms']:8.1f} {bare:>9} {ratio:>6} "
              f"{target:>7}{extra}")  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
