"""Judge throughput on realistic work, next to the same programs run bare, in one run.

For each dataset (HumanEval 164, MBPP 974, HumanEval-X C++ and Java), judges every reference
solution through `POST /submit` with as many requests in flight as the server has slots, and
runs the very programs the judge assembled (`full_code`) as bare subprocesses with the same
toolchain commands (the language table's compile and run argv) and the same concurrency.

- *cold*: the first pass. sandlot compiles each program (its compile cache is empty); bare
  compiles and runs each one.
- *cached*: later passes, alternating sides over `--rounds` rounds, the best round of each
  side compared. sandlot's compile cache serves the builds; bare runs the binaries it built.

Targets (issue 15): HumanEval wall <= 0.7x bare, MBPP <= 0.8x bare.

    .venv/bin/python bench/judge.py [--slots N] [--rounds R] [--datasets a,b] [--url URL]
                                    [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import CLEAN_ENV, start_server, stop_server, wait_ping
from sandlot.judge import Datasets
from sandlot.languages import LANGUAGES, Language, Registry

RUNTIME = "/opt/sandlot"
MEMORY_MB = 1024
TARGETS = {"humaneval_python": 0.7, "mbpp": 0.8}


@dataclass(frozen=True)
class Dataset:
    name: str
    solution: str  # the row field holding the reference solution


DATASETS = {
    "humaneval": Dataset("humaneval_python", "canonical_solution"),
    "mbpp": Dataset("mbpp", "code"),
    "humaneval_x_cpp": Dataset("humaneval_x_cpp", "canonical_solution"),
    "humaneval_x_java": Dataset("humaneval_x_java", "canonical_solution"),
}


def samples(registry: Registry, dataset: Dataset) -> list[dict[str, Any]]:
    data = Datasets(registry)
    spec = data.spec(dataset.name)
    rows = data.get(spec.name).rows
    from sandlot.judge.datasets import row_id

    return [{"id": row_id(r, spec), "completion": r[dataset.solution]} for r in rows]


def judge_all(client: httpx.Client, dataset: str, items: list[dict], slots: int) -> tuple:
    def one(sample: dict) -> dict:
        body = {"dataset": dataset, "id": sample["id"], "completion": sample["completion"],
                "config": {}}  # fmt: skip
        r = client.post("/submit", json=body)
        r.raise_for_status()
        return r.json()

    start = time.perf_counter()
    with ThreadPoolExecutor(slots) as pool:
        results = list(pool.map(one, items))
    return time.perf_counter() - start, results


class Bare:
    """The judge's programs as plain subprocesses: one directory each, the row's commands."""

    def __init__(self, row: Language, programs: list[str], root: Path) -> None:
        self.row, self.dirs = row, []
        self.env = {**CLEAN_ENV, **row.resolved_env(RUNTIME)}
        for n, code in enumerate(programs):
            d = root / f"p{n}"
            d.mkdir()
            (d / row.source).write_text(row.program(code))
            self.dirs.append(d)

    def _step(self, template: tuple[str, ...], cwd: Path) -> bool:
        argv = self.row.argv(template, RUNTIME, MEMORY_MB)
        done = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, timeout=120)
        return done.returncode == 0

    def one(self, compile_first: bool) -> Callable[[Path], bool]:
        def go(d: Path) -> bool:
            if compile_first and self.row.compile is not None:
                for artifact in self.row.artifacts:
                    shutil.rmtree(d / artifact, ignore_errors=True)
                    (d / artifact).unlink(missing_ok=True)
                if not self._step(self.row.compile, d):
                    return False
            return self._step(self.row.run, d)

        return go

    def run_all(self, slots: int, compile_first: bool) -> tuple[float, int]:
        start = time.perf_counter()
        with ThreadPoolExecutor(slots) as pool:
            ok = sum(pool.map(self.one(compile_first), self.dirs))
        return time.perf_counter() - start, ok


def bench_dataset(client: httpx.Client, registry: Registry, key: str, args: Any) -> dict:
    dataset = DATASETS[key]
    items = samples(registry, dataset)
    n = len(items)
    t_cold, results = judge_all(client, dataset.name, items, args.slots)
    language = results[0]["extra"]["language"]
    row = registry.get(language)
    with tempfile.TemporaryDirectory(prefix="sandlot-bench-judge-") as tmp:
        bare = Bare(row, [r["full_code"] or "" for r in results], Path(tmp))
        t_bare_cold, ok_bare_cold = bare.run_all(args.slots, compile_first=True)
        ok_cold = sum(r["accepted"] for r in results)
        ratio = t_cold / t_bare_cold
        print(f"{key} cold: bare {t_bare_cold:.2f}s ({ok_bare_cold}/{n}), "
              f"sandlot {t_cold:.2f}s ({ok_cold}/{n}), ratio {ratio:.2f}")  # fmt: skip
        rounds = []
        for _ in range(args.rounds):
            t_bare, ok_bare = bare.run_all(args.slots, compile_first=False)
            t_sandlot, again = judge_all(client, dataset.name, items, args.slots)
            ok = sum(r["accepted"] for r in again)
            rounds.append({"bare_s": t_bare, "sandlot_s": t_sandlot, "bare_ok": ok_bare,
                           "sandlot_ok": ok})  # fmt: skip
            ratio = t_sandlot / t_bare
            print(f"{key} cached: bare {t_bare:.2f}s ({ok_bare}/{n}), "
                  f"sandlot {t_sandlot:.2f}s ({ok}/{n}), ratio {ratio:.2f}")  # fmt: skip
    best_bare = min(r["bare_s"] for r in rounds)
    best = min(r["sandlot_s"] for r in rounds)
    return {
        "dataset": dataset.name, "language": language, "problems": n,
        "cold": {"bare_s": t_bare_cold, "sandlot_s": t_cold, "ratio": t_cold / t_bare_cold},
        "cached": {"bare_s": best_bare, "sandlot_s": best, "ratio": best / best_bare},
        "rounds": rounds, "target": TARGETS.get(dataset.name),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--slots", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--datasets", default=",".join(DATASETS), help="of: " + ", ".join(DATASETS))
    ap.add_argument("--url", help="an already running server (its slots must match --slots)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args()
    registry = Registry(LANGUAGES, RUNTIME)
    registry.probe()
    proc = None
    if args.url:
        url = args.url
    else:
        log = Path(tempfile.gettempdir()) / "bench-judge.log"
        proc, url = start_server(args.slots, log)
        wait_ping(url, proc, log)
    try:
        limits = httpx.Limits(max_connections=args.slots * 2)
        with httpx.Client(base_url=url, timeout=300, limits=limits) as client:
            figures = [bench_dataset(client, registry, key, args)
                       for key in args.datasets.split(",")]  # fmt: skip
    finally:
        if proc is not None:
            stop_server(proc)
    print("\n| dataset | problems | cold: bare s | sandlot s | ratio | cached: bare s | "
          "sandlot s | ratio | target |\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    for f in figures:
        c, w = f["cold"], f["cached"]
        target = f"<= {f['target']}x" if f["target"] else ""
        print(f"| {f['dataset']} ({f['language']}) | {f['problems']} | {c['bare_s']:.2f} | "
              f"{c['sandlot_s']:.2f} | {c['ratio']:.2f}x | {w['bare_s']:.2f} | "
              f"{w['sandlot_s']:.2f} | {w['ratio']:.2f}x | {target} |")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps({"slots": args.slots, "datasets": figures}, indent=2))


if __name__ == "__main__":
    main()
