"""Judge throughput on realistic work, next to the same programs run bare, in one run.

For each dataset (HumanEval 164, MBPP 974, HumanEval-X C++, Java and JavaScript, MultiPL-E C# and
Scala (their GPT answers), a CodeContests stdin slice; `--rows N`: the first N of each), judges
every reference solution through `POST /submit` with as many requests in flight as the server
has slots, and runs the very programs the judge assembled (`full_code`) as bare
subprocesses with the same toolchain commands (the language table's compile and run argv) and
the same concurrency. A HumanEval-style program runs once, without stdin, and passes when it
exits 0; a CodeContests program runs once per test case with that case's stdin, its stdout
compared with the checker the judge used. Bare, the runs of all programs share `--slots`
workers, as the judge's runs share the server's slots.

CodeContests rows carry no reference solutions: `bench/code_contests.json` holds sandlot's own
Python solutions, written for this benchmark and each checked against every test case of its
row, for 14 of the 20 rows (see bench/README.md).

- *cold*: the first pass. sandlot compiles each program (its compile cache is empty); bare
  compiles each one, then runs them.
- *cached*: later passes, alternating sides over `--rounds` rounds, the best round of each
  side compared. sandlot's compile cache serves the builds; bare runs the binaries it built.
  Each pass also says how busy the machine's CPUs were over it and their CPU ms per program
  (from /proc/stat: everything, this process and the server included), which tells the CPU a
  side spends from the time it leaves the CPUs idle; sandlot's passes also say the CPU its
  boxes' run steps spent per program (the results' `run_result.cpu_time`).

Targets (issue 15): HumanEval wall <= 0.7x bare, MBPP <= 0.8x bare.

    .venv/bin/python bench/judge.py [--slots N] [--rounds R] [--rows N] [--datasets a,b] [--url URL]
                                    [--extra JSON] [--out FILE.json]
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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import (
    CLEAN_ENV,
    cpu_jiffies,
    jiffies_to_ms,
    start_server,
    stop_server,
    tree_cpu_ms,
    wait_ping,
)
from sandlot.judge import Datasets
from sandlot.judge.assemble import stdio_cases
from sandlot.judge.checkers import Checker
from sandlot.judge.datasets import row_id
from sandlot.judge.engine import Judge
from sandlot.judge.plans import JudgeConfig
from sandlot.languages import LANGUAGES, Language, Registry

RUNTIME = "/opt/sandlot"
MEMORY_MB = 1024
TARGETS = {"humaneval_python": 0.7, "mbpp": 0.8}
BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Case:
    """One run of a program: its stdin, and the stdout it must print (None: exiting 0 is all)."""

    stdin: str = ""
    expected: str | None = None


# A program that tests itself (HumanEval, MBPP, HumanEval-X): one run, no stdin.
SELF_TESTED = (Case(),)


@dataclass(frozen=True)
class Dataset:
    name: str
    solution: str = ""  # the row field holding the reference solution
    solutions_file: str = ""  # or a JSON file in bench/, {row id: solution}, for the rows covered
    config: dict[str, Any] = field(default_factory=dict)  # the /submit config


DATASETS = {
    "humaneval": Dataset("humaneval_python", "canonical_solution"),
    "mbpp": Dataset("mbpp", "code"),
    "humaneval_x_cpp": Dataset("humaneval_x_cpp", "canonical_solution"),
    "humaneval_x_java": Dataset("humaneval_x_java", "canonical_solution"),
    "humaneval_x_js": Dataset("humaneval_x_js", "canonical_solution"),
    # MultiPL-E's GPT answers (its rows have no reference): C# and Scala, split programs
    "multiple_cs": Dataset("multiple_cs", "gpt_solution"),
    "multiple_scala": Dataset("multiple_scala", "gpt_solution"),
    # Its rows judge any language, so the submission names one.
    "code_contests": Dataset("code_contests", solutions_file="code_contests.json",
                             config={"language": "python"}),
}  # fmt: skip


def samples(registry: Registry, dataset: Dataset) -> list[dict[str, Any]]:
    """Each problem to judge: its id, the solution submitted, and the cases bare runs it on."""
    data = Datasets(registry)
    spec = data.spec(dataset.name)
    rows = data.get(spec.name).rows
    if dataset.solutions_file:
        solutions = json.loads((BENCH_DIR / dataset.solutions_file).read_text())
        solved = [(r, solutions[str(row_id(r, spec))]) for r in rows
                  if str(row_id(r, spec)) in solutions]  # fmt: skip
    else:
        solved = [(r, r[dataset.solution]) for r in rows]
    return [{"id": row_id(r, spec), "completion": code, "cases": cases(r, spec.family.name)}
            for r, code in solved]  # fmt: skip


def cases(row: dict[str, Any], family: str) -> Sequence[Case]:
    if family != "stdio":
        return SELF_TESTED
    return [Case(c.stdin, c.expected) for c in stdio_cases(row.get("test") or row.get("tests"))]


def judge_all(
    client: httpx.Client, dataset: Dataset, items: list[dict], slots: int
) -> tuple[float, list[dict]]:
    def one(sample: dict) -> dict:
        body = {"dataset": dataset.name, "id": sample["id"], "completion": sample["completion"],
                "config": dataset.config}  # fmt: skip
        r = client.post("/submit", json=body)
        r.raise_for_status()
        return r.json()

    start = time.perf_counter()
    with ThreadPoolExecutor(slots) as pool:
        results = list(pool.map(one, items))
    return time.perf_counter() - start, results


class Bare:
    """The judge's programs as plain subprocesses: one directory each, the row's commands. A
    program is compiled once, then run once per case; it passes when every case does."""

    def __init__(
        self, row: Language, programs: list[tuple[str, dict[str, bytes], Sequence[Case]]],
        root: Path, checker: Checker,
    ) -> None:  # fmt: skip
        self.row, self.checker, self.programs = row, checker, []
        self.env = {**CLEAN_ENV, **row.resolved_env(RUNTIME)}
        for n, (code, files, program_cases) in enumerate(programs):
            d = root / f"p{n}"
            d.mkdir()
            for name, data in files.items():  # a split program's answer, beside its tests
                (d / name).parent.mkdir(parents=True, exist_ok=True)
                (d / name).write_bytes(data)
            (d / row.source).write_text(row.program(code))
            self.programs.append((d, program_cases))

    def _step(
        self, template: tuple[str, ...], cwd: Path, stdin: str = ""
    ) -> subprocess.CompletedProcess[bytes]:
        argv = self.row.argv(template, RUNTIME, MEMORY_MB)
        return subprocess.run(argv, cwd=cwd, env=self.env, input=stdin.encode(),
                              capture_output=True, timeout=120)  # fmt: skip

    def _build(self, d: Path) -> bool:
        if self.row.compile is None:
            return True
        for artifact in self.row.artifacts:
            shutil.rmtree(d / artifact, ignore_errors=True)
            (d / artifact).unlink(missing_ok=True)
        return self._step(self.row.compile, d).returncode == 0

    def _passes(self, run: tuple[int, Path, Case]) -> tuple[int, bool]:
        n, d, case = run
        done = self._step(self.row.run, d, case.stdin)
        if done.returncode != 0 or case.expected is None:
            return n, done.returncode == 0
        # Decoded and compared as the judge does with a case's stdout.
        return n, self.checker.compare(done.stdout.decode(errors="replace"), case.expected)[0]

    def run_all(self, slots: int, compile_first: bool) -> tuple[float, int]:
        """Wall time and programs passed. All programs' case runs share the `slots` workers, as
        the judge's share the server's slots; with compile_first every program is built first."""
        start = time.perf_counter()
        with ThreadPoolExecutor(slots) as pool:
            dirs = [d for d, _ in self.programs]
            built = list(pool.map(self._build, dirs)) if compile_first else [True] * len(dirs)
            runs = [(n, d, case) for n, (d, program_cases) in enumerate(self.programs)
                    if built[n] for case in program_cases]  # fmt: skip
            failed = {n for n, ok in pool.map(self._passes, runs) if not ok}
        passed = sum(ok and n not in failed for n, ok in enumerate(built))
        return time.perf_counter() - start, passed


def machine(call: Callable[[], Any], server: int | None = None) -> tuple[Any, dict[str, float]]:
    """What `call` returns, and the machine over it: the share of all CPUs busy, and their
    non-idle CPU ms (server, boxes, this process, everything: other work on a shared machine
    too); with the `server`'s pid, also the CPU ms of its process tree (its jail processes and
    boxes) and this process, which other work does not move."""
    busy0, total0 = cpu_jiffies()
    tree0 = tree_cpu_ms(server)
    out = call()
    tree1 = tree_cpu_ms(server)
    busy1, total1 = cpu_jiffies()
    figures = {"busy": (busy1 - busy0) / max(1, total1 - total0),
               "cpu_ms": jiffies_to_ms(busy1 - busy0)}  # fmt: skip
    if tree0 is not None and tree1 is not None:
        figures["tree_ms"] = tree1 - tree0
    return out, figures


def bench_dataset(client: httpx.Client, registry: Registry, key: str, args: Any) -> dict:
    dataset = DATASETS[key]
    if args.extra:
        dataset = replace(dataset, config={**dataset.config, "extra": args.extra})
    items = samples(registry, dataset)[: args.rows]
    n = len(items)
    runs = sum(len(item["cases"]) for item in items)
    t_cold, results = judge_all(client, dataset, items, args.slots)
    language = results[0]["extra"]["language"]
    row = registry.get(language)
    checker = Checker.parse(results[0]["extra"].get("checker"))  # the one the judge used
    programs = [(r["full_code"] or "", files_of(registry, dataset, item), item["cases"])
                for r, item in zip(results, items, strict=True)]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="sandlot-bench-judge-") as tmp:
        bare = Bare(row, programs, Path(tmp), checker)
        t_bare_cold, ok_bare_cold = bare.run_all(args.slots, compile_first=True)
        ok_cold = sum(r["accepted"] for r in results)
        ratio = t_cold / t_bare_cold
        print(f"{key} cold: bare {t_bare_cold:.2f}s ({ok_bare_cold}/{n}), "
              f"sandlot {t_cold:.2f}s ({ok_cold}/{n}), ratio {ratio:.2f}")  # fmt: skip
        rounds = []
        for _ in range(args.rounds):
            (t_bare, ok_bare), m_bare = machine(lambda: bare.run_all(args.slots, False))
            (t_sandlot, again), m = machine(
                lambda: judge_all(client, dataset, items, args.slots), args.server_pid
            )
            ok, box = sum(r["accepted"] for r in again), box_cpu_ms(again)
            rounds.append({"bare_s": t_bare, "sandlot_s": t_sandlot, "bare_ok": ok_bare,
                           "sandlot_ok": ok, "bare_machine": m_bare,
                           "sandlot_machine": m,
                           "sandlot_box_cpu_ms": box})  # fmt: skip
            ratio = t_sandlot / t_bare
            print(f"{key} cached: bare {t_bare:.2f}s ({ok_bare}/{n}, {said(m_bare, n)}), "
                  f"sandlot {t_sandlot:.2f}s ({ok}/{n}, {said(m, n)}, "
                  f"box runs {box:.1f} CPU ms/program), ratio {ratio:.2f}")  # fmt: skip
    best_bare = min(r["bare_s"] for r in rounds)
    best = min(r["sandlot_s"] for r in rounds)
    return {
        "dataset": dataset.name, "language": language, "problems": n, "runs": runs,
        "cold": {"bare_s": t_bare_cold, "sandlot_s": t_cold, "ratio": t_cold / t_bare_cold},
        "cached": {"bare_s": best_bare, "sandlot_s": best, "ratio": best / best_bare},
        "rounds": rounds, "target": TARGETS.get(dataset.name),
    }  # fmt: skip


def files_of(registry: Registry, dataset: Dataset, item: dict[str, Any]) -> dict[str, bytes]:
    """The files the judge's program has beside its code (a split program's answer: the
    response's `full_code` is the harness alone), assembled here as the judge assembles them."""
    judge = Judge(Datasets(registry), lambda: None)  # type: ignore[arg-type,return-value]
    spec = judge.datasets.spec(dataset.name)
    row = judge.datasets.get(spec.name).get(item["id"])
    cfg = JudgeConfig(language=dataset.config.get("language"))
    job = judge.assemble(spec, row, item["completion"], cfg).job
    return dict(job.files) if job is not None else {}


def box_cpu_ms(results: list[dict]) -> float:
    """The CPU the boxes' run steps spent per judged program (each result's `run_result`), which
    other work on the machine moves much less than wall times or the machine's busy share."""
    total = 0.0
    for r in results:
        for test in r.get("tests") or ():
            run = (test.get("exec_info") or {}).get("run_result") or {}
            total += run.get("cpu_time") or 0.0
    return 1000 * total / max(1, len(results))


def said(m: dict[str, float], programs: int) -> str:
    out = f"{m['busy']:.0%} busy, {m['cpu_ms'] / programs:.1f} CPU ms/program"
    if "tree_ms" in m:
        out += f" ({m['tree_ms'] / programs:.1f} of them the server's and this process's)"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--slots", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=None, help="the first ROWS of each dataset")
    ap.add_argument("--datasets", default=",".join(DATASETS), help="of: " + ", ".join(DATASETS))
    ap.add_argument("--url", help="an already running server (its slots must match --slots)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    ap.add_argument(
        "--extra",
        type=json.loads,
        default=None,
        help="config.extra of every submission, as JSON: '{\"strict\": true}'",
    )
    args = ap.parse_args()
    if unknown := set(args.datasets.split(",")) - set(DATASETS):
        ap.error(f"unknown datasets {', '.join(sorted(unknown))}; of: {', '.join(DATASETS)}")
    registry = Registry(LANGUAGES, RUNTIME)
    registry.probe()
    proc = None
    if args.url:
        url = args.url
    else:
        log = Path(tempfile.gettempdir()) / "bench-judge.log"
        proc, url = start_server(args.slots, log)
        wait_ping(url, proc, log)
    args.server_pid = proc.pid if proc is not None else None
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
