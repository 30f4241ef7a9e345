"""HumanEval through the judge, next to the same programs run bare, in one run.

Judges all 164 canonical HumanEval solutions through `POST /submit` with as many requests in
flight as the server has slots, and runs the very programs the judge assembled (`full_code`) as
bare subprocesses of the sandbox's Python, with the same concurrency. Sides alternate over
`--rounds` rounds so that drift in the machine's load hits both alike; the best round of each
side is compared. Target: sandlot wall time <= 1.2 x bare (SandboxFusion: ~2x unisolated, 7x
isolated).

    .venv/bin/python bench/judge.py [--slots N] [--rounds R] [--url URL] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
SANDBOX_PYTHON = "/opt/sandlot/python/bin/python3"
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
TARGET = 1.2


def humaneval_samples() -> list[dict[str, Any]]:
    from sandlot.judge import Datasets
    from sandlot.languages import LANGUAGES, Registry

    ds = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
    return [{"id": r["task_id"], "completion": r["canonical_solution"]}
            for r in ds.get("humaneval_python").rows]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(slots: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "SANDLOT_STATE_DIR": "/run/sandlot-bench-judge",
           "SANDLOT_UID_BASE": "65200"}  # fmt: skip
    argv = [sys.executable, "-m", "sandlot", "serve", "--port", str(port), "--slots", str(slots)]
    with log.open("wb") as f:
        proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/v1/ping", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("server not ready in 120 s")


def judge_all(client: httpx.Client, samples: list[dict], slots: int) -> tuple[float, list[dict]]:
    def one(sample: dict) -> dict:
        body = {"dataset": "humaneval_python", "id": sample["id"],
                "completion": sample["completion"], "config": {}}  # fmt: skip
        r = client.post("/submit", json=body)
        r.raise_for_status()
        return r.json()

    start = time.perf_counter()
    with ThreadPoolExecutor(slots) as pool:
        results = list(pool.map(one, samples))
    return time.perf_counter() - start, results


def bare_all(programs: list[str], slots: int, workdir: Path) -> tuple[float, int]:
    paths = []
    for n, code in enumerate(programs):
        path = workdir / f"p{n}.py"
        path.write_text(code)
        paths.append(path)

    def one(path: Path) -> bool:
        done = subprocess.run([SANDBOX_PYTHON, path.name], cwd=workdir, env=CLEAN_ENV,
                              capture_output=True, timeout=60)  # fmt: skip
        return done.returncode == 0

    start = time.perf_counter()
    with ThreadPoolExecutor(slots) as pool:
        ok = sum(pool.map(one, paths))
    return time.perf_counter() - start, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--slots", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--url", help="an already running server (its slots must match --slots)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args()
    samples = humaneval_samples()
    proc = None
    if args.url:
        url = args.url
    else:
        proc, url = start_server(args.slots, Path(tempfile.gettempdir()) / "bench-judge.log")
    try:
        limits = httpx.Limits(max_connections=args.slots * 2)
        with httpx.Client(base_url=url, timeout=120, limits=limits) as client:
            _, warm = judge_all(client, samples, args.slots)  # warm-up; gives the programs
            programs = [r["full_code"] for r in warm]
            rounds: list[dict[str, float]] = []
            with tempfile.TemporaryDirectory() as tmp:
                bare_all(programs, args.slots, Path(tmp))  # warm the page cache alike
                for _ in range(args.rounds):
                    t_bare, ok_bare = bare_all(programs, args.slots, Path(tmp))
                    t_sandlot, results = judge_all(client, samples, args.slots)
                    ok = sum(r["accepted"] for r in results)
                    rounds.append({"bare_s": t_bare, "sandlot_s": t_sandlot,
                                   "bare_ok": ok_bare, "sandlot_ok": ok})  # fmt: skip
                    print(
                        f"round: bare {t_bare:.2f}s ({ok_bare}/164)  "
                        f"sandlot {t_sandlot:.2f}s ({ok}/164)  ratio {t_sandlot / t_bare:.2f}"
                    )
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(30)
    best_bare = min(r["bare_s"] for r in rounds)
    best_sandlot = min(r["sandlot_s"] for r in rounds)
    ratio = best_sandlot / best_bare
    mark = "meets" if ratio <= TARGET else "misses"
    print(
        f"\nHumanEval 164 canonical, concurrency {args.slots}: bare {best_bare:.2f}s, "
        f"sandlot /submit {best_sandlot:.2f}s, ratio {ratio:.2f} ({mark} the {TARGET}x target)"
    )
    if args.out:
        args.out.write_text(json.dumps({"slots": args.slots, "rounds": rounds, "ratio": ratio,
                                        "target": TARGET}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
