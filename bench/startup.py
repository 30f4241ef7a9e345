"""Start-up: how long `sandlot run FILE` takes end to end, and a server until it is ready.

Each command runs `--times` times, one after the other; the medians of wall time and CPU (the
command and every process it waited for: spawners, zygotes, the box) are printed. Beside them,
in the same run, a bare `python3 -c pass` shows how fast this machine starts a process at all.

- `sandlot --help`: importing the command line;
- `sandlot run hello.py`, `sandlot run hello.cpp`: the engine on this machine, no server (the
  C++ one compiles every time: a CLI run has no compile cache to reuse);
- `sandlot serve`: from the process start until `GET /v1/ping` answers and until `/health` says
  the jail is ready.

Targets (issue 15): a CLI run of one file well under a second; a server ready in 2 s.

    .venv/bin/python bench/startup.py [--times 5] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import REPO_ROOT, free_port, stop_server

SANDLOT = [sys.executable, "-m", "sandlot"]
PROGRAMS = {
    "hello.py": "print('hello')\n",
    "hello.cpp": '#include <cstdio>\nint main() { std::puts("hello"); }\n',
}
STATE_DIR = "/run/sandlot-bench-startup"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one command, which must succeed."""
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, env=env())
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    return wall, children_cpu() - cpu


def env() -> dict[str, str]:
    return {**os.environ, "SANDLOT_STATE_DIR": STATE_DIR}


def server_start() -> tuple[float, float]:
    """Seconds from spawning `sandlot serve` to /v1/ping answering, and to /health ready."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [*SANDLOT, "serve", "--host", "127.0.0.1", "--port", str(port)]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    ping = ready = 0.0
    try:
        while time.perf_counter() - start < 60:
            if proc.poll() is not None:
                sys.exit(f"sandlot serve exited with {proc.returncode} before it was ready")
            try:
                if not ping and httpx.get(f"{url}/v1/ping", timeout=2).status_code == 200:
                    ping = time.perf_counter() - start
                if ping and httpx.get(f"{url}/health", timeout=2).json()["isolation"]["ready"]:
                    ready = time.perf_counter() - start
                    return ping, ready
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
        sys.exit("sandlot serve was not ready within 60 s")
    finally:
        stop_server(proc)


def median_pair(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--times", type=int, default=5)
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args()
    rows: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="sandlot-bench-startup-") as tmp:
        files = {}
        for name, text in PROGRAMS.items():
            files[name] = Path(tmp) / name
            files[name].write_text(text)
        commands = {
            "python3 -c pass (bare)": ["/usr/bin/python3", "-c", "pass"],
            "sandlot --help": [*SANDLOT, "--help"],
            **{f"sandlot run {n}": [*SANDLOT, "run", str(p)] for n, p in files.items()},
        }
        for label, argv in commands.items():
            timed(argv)  # warm the page cache
            rows[label] = median_pair([timed(argv) for _ in range(args.times)])
    server_start()
    ping, ready = median_pair([server_start() for _ in range(args.times)])
    print(f"\nmedians of {args.times}, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"load {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    print("| command | wall s | CPU s |\n|---|---|---|")
    for label, (wall, cpu) in rows.items():
        print(f"| `{label}` | {wall:.2f} | {cpu:.2f} |")
    print(f"| `sandlot serve` until /v1/ping | {ping:.2f} | |")
    print(f"| `sandlot serve` until /health ready | {ready:.2f} | |")
    if args.out:
        figures = {k: {"wall_s": w, "cpu_s": c} for k, (w, c) in rows.items()}
        figures["serve"] = {"ping_s": ping, "ready_s": ready}
        args.out.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
