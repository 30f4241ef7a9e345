"""RL rewards at scale, in ScaleBox's format: N problems x M stdin cases, three ways, one run.

The samples are solutions (correct and wrong, mixed) to shipped CodeContests and LiveCodeBench
problems (`tests/rl_samples.py`), each repeated with a comment that makes every sample a distinct
program, as rollouts are, and cut to M cases. The same cases are scored
- `bare`: one subprocess of the sandbox's Python per case, no isolation, `--slots` at a time;
- `run_code`: one `POST /run_code` per case, as verl's sandbox_fusion reward sends them (its
  payload, `--fan-out` requests in flight, retried on 504 only, 1 s then 2 s);
- `run_batch`: `POST /run_batch` with `--batch-items` samples per request, `--batch-inflight`
  requests at a time;
in chunks that alternate between the three, so that a change in the machine's load hits all
alike. Reported per way: wall time, cases/s, CPU ms per case (machine-wide and this process
tree's), errors, and the ratios the targets are stated in.

    .venv/bin/python bench/rl.py [--problems N] [--cases M] [--slots S] [--out FILE.json]

With `--overload X` it measures instead how the server sheds load: `run_code` requests, as
verl sends them, arriving open-loop at X times what the server can do (bench/overload.py).

    .venv/bin/python bench/rl.py --overload 3 [--case-seconds 1] [--duration 60] [--slots 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
from engine import (
    CLEAN_ENV,
    REPO_ROOT,
    SANDBOX_PYTHON,
    busy_jiffies,
    jiffies_to_ms,
    machine,
    start_server,
    stop_server,
    tree_cpu_ms,
    wait_ping,
)

sys.path.insert(0, str(REPO_ROOT))
from tests import rl_samples

TIMEOUT = 10  # verl's per-case compile and run timeout
VERL_RETRIES = 3  # verl retries a 504 twice, after 1 s and 2 s


@dataclass
class Case:
    sample: int
    code: str
    stdin: str
    expected: str


@dataclass
class Way:
    name: str
    cases: int = 0
    passed: int = 0
    errors: int = 0  # answers that are neither a verdict nor a 504 (verl: a silent failed case)
    retried_504: int = 0
    seconds: float = 0.0
    cpu_ms: float = 0.0
    own_cpu_ms: float = 0.0

    def row(self) -> dict[str, float | int | str]:
        n = max(1, self.cases)
        return {"way": self.name, "cases": self.cases, "passed": self.passed,
                "wall_s": round(self.seconds, 2),
                "cases_per_s": round(self.cases / max(self.seconds, 1e-9), 1),
                "cpu_ms_per_case": round(self.cpu_ms / n, 2),
                "own_cpu_ms_per_case": round(self.own_cpu_ms / n, 2),
                "errors": self.errors, "retried_504": self.retried_504}  # fmt: skip


def build_samples(problems: int, cases: int) -> list[list[Case]]:
    # stdin problems with at least M cases, so that N samples make exactly N x M cases
    base = [(completion, truth) for _, completion, truth in rl_samples.samples(cases)
            if truth.get("fn_name") is None and len(truth["inputs"]) >= cases]  # fmt: skip
    out = []
    for n in range(problems):
        completion, truth = base[n % len(base)]
        code = completion.split("```python\n", 1)[1].split("```", 1)[0] + f"# sample {n}\n"
        out.append([Case(n, code, i, o) for i, o in zip(truth["inputs"], truth["outputs"],
                                                         strict=True)])  # fmt: skip
    return out


def same(actual: str, expected: str) -> bool:
    return actual.rstrip("\n") == expected.rstrip("\n")  # verl's comparison


def bare(chunk: list[list[Case]], slots: int, workdir: Path, way: Way) -> None:
    def one(case: Case) -> None:
        path = workdir / f"s{case.sample}.py"
        if not path.exists():
            path.write_text(case.code)
        try:
            proc = subprocess.run([SANDBOX_PYTHON, str(path)], input=case.stdin.encode(),
                                  capture_output=True, timeout=TIMEOUT, env=CLEAN_ENV,
                                  cwd=workdir)  # fmt: skip
            ok = proc.returncode == 0 and same(proc.stdout.decode(errors="replace"), case.expected)
        except subprocess.TimeoutExpired:
            ok = False
        way.passed += ok

    with ThreadPoolExecutor(slots) as pool:
        list(pool.map(one, [c for sample in chunk for c in sample]))


def run_code(chunk: list[list[Case]], url: str, fan_out: int, way: Way) -> None:
    lock = threading.Lock()
    http = httpx.Client(timeout=2 * TIMEOUT + 10, limits=httpx.Limits(max_connections=fan_out))

    def one(case: Case) -> None:
        payload = {"compile_timeout": TIMEOUT, "run_timeout": TIMEOUT, "code": case.code,
                   "stdin": case.stdin, "memory_limit_MB": 1024, "language": "python",
                   "files": {}, "fetch_files": []}  # fmt: skip
        for attempt in range(VERL_RETRIES):
            try:
                r = http.post(f"{url}/run_code", json=payload)
            except httpx.HTTPError:
                break
            if r.status_code == 504:
                with lock:
                    way.retried_504 += 1
                if attempt < VERL_RETRIES - 1:
                    time.sleep(attempt + 1)
                continue
            if r.status_code != 200:
                break
            body = r.json()
            run = body.get("run_result") or {}
            ok = body.get("status") == "Success" and same(run.get("stdout") or "", case.expected)
            with lock:
                way.passed += ok
            return
        with lock:
            way.errors += 1

    with ThreadPoolExecutor(fan_out) as pool:
        list(pool.map(one, [c for sample in chunk for c in sample]))
    http.close()


def run_batch(chunk: list[list[Case]], url: str, per_request: int, inflight: int,
              way: Way) -> None:  # fmt: skip
    lock = threading.Lock()
    http = httpx.Client(timeout=3600)

    def one(samples: list[list[Case]]) -> None:
        items = [{"id": s[0].sample, "code": s[0].code, "checker": "verl",
                  "run_timeout": TIMEOUT, "compile_timeout": TIMEOUT, "memory_limit_MB": 1024,
                  "test_cases": [{"stdin": c.stdin, "expected_stdout": c.expected} for c in s]}
                 for s in samples]  # fmt: skip
        r = http.post(f"{url}/run_batch", json={"items": items})
        with lock:
            if r.status_code != 200:
                way.errors += sum(len(s) for s in samples)
                return
            for result in r.json()["results"]:
                way.passed += sum(c["verdict"] == "accepted" for c in result["cases"])

    groups = [chunk[i : i + per_request] for i in range(0, len(chunk), per_request)]
    with ThreadPoolExecutor(inflight) as pool:
        list(pool.map(one, groups))
    http.close()


def own_cpu_ms(server_pid: int | None) -> float:
    """This process, the children it reaped (the bare runs) and the server's process tree."""
    if server_pid is not None:
        return tree_cpu_ms(server_pid) or 0.0
    t = os.times()
    return (t.user + t.system + t.children_user + t.children_system) * 1000.0


def timed(
    way: Way, chunk: list[list[Case]], server_pid: int | None, fn: Callable[[], None]
) -> None:
    busy0, own0, t0 = busy_jiffies(), own_cpu_ms(server_pid), time.monotonic()
    fn()
    way.seconds += time.monotonic() - t0
    way.cpu_ms += jiffies_to_ms(busy_jiffies() - busy0)
    way.own_cpu_ms += own_cpu_ms(server_pid) - own0
    way.cases += sum(len(s) for s in chunk)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--problems", type=int, default=1000, help="samples (problem, solution)")
    ap.add_argument("--cases", type=int, default=10, help="stdin cases per sample, at most")
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--fan-out", type=int, default=64, help="/run_code requests in flight")
    ap.add_argument("--batch-items", type=int, default=50, help="samples per /run_batch")
    ap.add_argument("--batch-inflight", type=int, default=4, help="/run_batch requests in flight")
    ap.add_argument("--chunks", type=int, default=10, help="alternations of the three ways")
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--overload",
        type=float,
        default=0.0,
        help="instead: verl's requests at this multiple of capacity",
    )
    ap.add_argument(
        "--case-seconds",
        type=float,
        default=1.0,
        help="--overload: seconds each case holds its slot (asleep)",
    )
    ap.add_argument("--duration", type=float, default=60.0, help="--overload: seconds of arrivals")
    args = ap.parse_args()
    if args.overload > 0:
        overloaded(args)
        return

    samples = build_samples(args.problems, args.cases)
    ways = {name: Way(name) for name in ("bare", "run_code", "run_batch")}
    size = max(1, len(samples) // args.chunks)
    chunks = [samples[i : i + size] for i in range(0, len(samples), size)]
    log = Path(tempfile.gettempdir()) / "sandlot-bench-rl.log"
    proc, url = start_server(args.slots, log)
    try:
        wait_ping(url, proc, log)
        warm = build_samples(4, 2)  # the first runs pay for imports and the box plan
        run_batch(warm, url, 4, 1, Way("warm"))
        with tempfile.TemporaryDirectory() as tmp:
            for n, chunk in enumerate(chunks):
                order = ("bare", "run_batch", "run_code")
                for name in order[n % 3 :] + order[: n % 3]:
                    run = {
                        "bare": lambda c=chunk: bare(c, args.slots, Path(tmp), ways["bare"]),
                        "run_code": lambda c=chunk: run_code(c, url, args.fan_out,
                                                             ways["run_code"]),
                        "run_batch": lambda c=chunk: run_batch(c, url, args.batch_items,
                                                               args.batch_inflight,
                                                               ways["run_batch"]),
                    }[name]  # fmt: skip
                    timed(ways[name], chunk, proc.pid if name != "bare" else None, run)
                print(f"chunk {n + 1}/{len(chunks)}: " + ", ".join(
                    f"{w.name} {w.seconds:.1f}s" for w in ways.values()), flush=True)  # fmt: skip
    finally:
        stop_server(proc)
    report(ways, args)


def overloaded(args: argparse.Namespace) -> None:
    import overload

    log = Path(tempfile.gettempdir()) / "sandlot-bench-rl-overload.log"
    proc, url = start_server(args.slots, log, {"SANDLOT_LOG_FORMAT": "json"})
    try:
        wait_ping(url, proc, log)
        figures = overload.run(url, log, build_samples(args.problems, args.cases), args.slots,
                               args.overload, args.case_seconds, args.duration)  # fmt: skip
    finally:
        stop_server(proc)
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"machine": machine(), "args": vars(args) | {"out": None},
                                        "overload": figures}, indent=2))  # fmt: skip


def report(ways: dict[str, Way], args: argparse.Namespace) -> None:
    rows = [w.row() for w in ways.values()]
    for r in rows:
        print("  ".join(f"{k}={v}" for k, v in r.items()))
    b, c, x = ways["run_batch"].seconds, ways["run_code"].seconds, ways["bare"].seconds
    ratios = {"run_batch / bare": round(b / x, 3), "run_code / run_batch": round(c / b, 3),
              "run_code / bare": round(c / x, 3)}  # fmt: skip
    print(
        f"targets: run_batch/bare {ratios['run_batch / bare']} (<= 0.9), run_code/run_batch "
        f"{ratios['run_code / run_batch']} (<= 1.3), run_code non-504 errors "
        f"{ways['run_code'].errors} (0)"
    )
    agree = len({w.passed for w in ways.values()}) == 1
    print(f"passed cases agree across the three ways: {agree}")
    if args.out:
        args.out.write_text(json.dumps({"machine": machine(), "args": vars(args) | {"out": None},
                                        "ways": rows, "ratios": ratios, "agree": agree},
                                       indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
