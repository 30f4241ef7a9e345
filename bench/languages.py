"""Hello world in every available language: cold, cached, the same run in a box, and bare.

For each language the same hello-world program (the one tests/languages/test_languages.py checks)
runs `--reps` times in four interleaved variants, so that all four meet the same machine load:

- *cold*: a request through the in-process engine (`Service`, no HTTP) with the compile cache
  emptied first, so a compiled language pays its compiler;
- *cached*: the same request again, the compile cache serving the build;
- *box*: the run step of that request (same argv, files and limits) given straight to the jail:
  what the run costs without the engine's own work (validation, cache look-up);
- *bare*: the same argv on the same files, outside the jail, as a subprocess of this process
  with the box's environment: what the toolchain itself costs.

With `--before-table FILE` (another version's sandlot/languages/table.py beside its family
modules, e.g. main's after `git archive main sandlot/languages | tar -x -C /tmp/before`: FILE
is /tmp/before/sandlot/languages/table.py) each repetition also runs that table's box and bare
run of each language whose row it has otherwise, interleaved with this one's: a change to a row
measured before and after under the same load.

Medians go to a JSON file and the languages table of docs/languages.md is rewritten from the
registry and these numbers. The compile-cache target is checked for every compiled language: a
cached request costs at most its box run + 1 ms, and where the compiler takes at least 9 runs' time
(compile wall >= 9 x box wall), cold / cached >= 10x.

    .venv/bin/python bench/languages.py [--reps 7] [--languages a,b] [--out bench/languages.json]
                                        [--no-page] [--before-table FILE]

Runs as root (the jail needs it), beside any server: its own state dir and uid range.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from sandlot.config import Config  # noqa: E402
from sandlot.docgen.languages import update  # noqa: E402
from sandlot.executor import CodeRequest, Executor  # noqa: E402
from sandlot.executor.cache import CompileCache  # noqa: E402
from sandlot.jail import RunSpec  # noqa: E402
from sandlot.jail.bwrap import DEFAULT_ENV  # noqa: E402
from sandlot.jail.workdir import write_files  # noqa: E402
from sandlot.languages import Language, Registry  # noqa: E402
from sandlot.languages.hello import HELLO_WORLDS  # noqa: E402
from sandlot.service import Service  # noqa: E402
from tests.languages.test_languages import HELLO, RUN_TIMEOUT  # noqa: E402  (the tests' hello worlds)

MAX_OVERHEAD_S = 0.001  # a cached request: at most its box run + 1 ms
TARGET_RATIO = 10.0  # cold / cached, where the compiler takes at least COMPILER_RUNS runs' time
COMPILER_RUNS = 9.0
UID_BASE = 65400


def says_hello(language: str, stdout: bytes) -> bool:
    """Whether a run printed the row's hello world (a test framework's row: any report)."""
    expected = HELLO_WORLDS[language].output
    return expected is None or stdout == expected.encode()


def request(language: str) -> CodeRequest:
    return CodeRequest(
        language=language,
        code=HELLO[language],
        compile_timeout=120,
        run_timeout=RUN_TIMEOUT.get(language, 30),
    )


async def through_engine(service: Service, language: str, cold: bool) -> dict[str, Any]:
    executor = service.require_executor()
    if cold:
        executor.cache = CompileCache(max_bytes=executor.cache.max_bytes)
    start, own = time.perf_counter(), time.process_time()
    result = await executor.execute(request(language))
    wall, own = time.perf_counter() - start, time.process_time() - own
    run = result.run
    ok = result.error is None and run is not None and run.ok and says_hello(language, run.stdout)
    return {
        "wall": wall,
        "cpu": run.cpu_time if run else None,
        "own": own,
        "compile": result.compile.wall_time if result.compile else None,
        "cached": result.cached,
        "error": None if ok else (result.error or _why(result.compile, run)),
    }


async def in_box(executor: Executor, name: str, spec: RunSpec) -> dict[str, Any]:
    start, own = time.perf_counter(), time.process_time()
    outcome = await executor.run_box(spec)
    wall, own = time.perf_counter() - start, time.process_time() - own
    ok = outcome.ok and says_hello(name, outcome.stdout)
    return {
        "wall": wall,
        "cpu": outcome.cpu_time,
        "own": own,
        "error": None if ok else _why(outcome),
    }


def run_bare(
    spec: RunSpec, workdir: Path, timeout: float | None = None
) -> tuple[subprocess.CompletedProcess[bytes], float, float]:
    """The box's argv on the box's files, as a plain subprocess (no namespaces, no cgroup):
    what it did, its wall time and its CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        spec.argv, cwd=workdir, input=spec.stdin, capture_output=True,
        env={**DEFAULT_ENV, **spec.env}, timeout=timeout,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def bare(name: str, spec: RunSpec, workdir: Path) -> dict[str, Any]:
    """The box's run of the hello world, bare."""
    done, wall, cpu = run_bare(spec, workdir)
    ok = done.returncode == 0 and says_hello(name, done.stdout)
    error = None if ok else f"bare run: exit {done.returncode}: {done.stderr[-300:]!r}"
    return {"wall": wall, "cpu": cpu, "error": error}


async def box_and_bare(
    executor: Executor, name: str, workdir: Path
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The run step of a request (its build from the executor's compile cache) in a box, then
    bare; None when it does not build."""
    step = await executor.run_step(request(name))
    if step is None:
        return None
    spec, _ = step  # a framework's row is sealed: its hello world is any report
    box = await in_box(executor, name, spec)
    workdir.mkdir()
    write_files(str(workdir), spec.files, os.getuid(), os.getgid())  # as the jail does
    return box, bare(name, spec, workdir)


def load_table(path: Path) -> tuple[Language, ...]:
    """The languages table of another version's sandlot/languages/table.py.

    Its rows live in family modules beside it (scripting.py, jvm.py, ...), which it imports as
    `sandlot.languages.*`: for the time of the import that package is the file's directory,
    then this tree's (a table.py of before the split, alone in /tmp, still finds csharp.py),
    with this tree's registry, so that its rows are made of this version's `Language`.
    """
    ours = {name: module for name, module in sys.modules.items()
            if name.startswith("sandlot.languages.") or name == "sandlot.languages"}  # fmt: skip
    package = types.ModuleType("sandlot.languages")
    package.__path__ = [str(path.resolve().parent), *ours["sandlot.languages"].__path__]
    for name in ours:
        del sys.modules[name]
    sys.modules["sandlot.languages"] = package
    sys.modules["sandlot.languages.registry"] = ours["sandlot.languages.registry"]
    try:
        return importlib.import_module("sandlot.languages.table").LANGUAGES
    finally:
        for name in [n for n in sys.modules if n.startswith("sandlot.languages")]:
            del sys.modules[name]
        sys.modules.update(ours)


def _why(*steps: Any) -> str:
    for step in steps:
        if step is not None and not step.ok:
            return (step.stderr or step.stdout).decode(errors="replace")[-300:]
    return "unexpected output"


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 4) if present else None


async def measure_one(
    service: Service, name: str, reps: int, before: Executor | None
) -> dict[str, Any]:
    row = service.registry.get(name)
    compiled = row.compile is not None
    executors = {"": service.require_executor()}
    if before is not None and before.registry.rows.get(name) not in (None, row):
        executors["before_"] = before  # only a row the other table has otherwise
    series: dict[str, list[dict[str, Any]]] = {
        "cold": [], "cached": [], **{f"{p}{v}": [] for p in executors for v in ("box", "bare")}
    }  # fmt: skip
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sandlot-bench-bare-") as tmp:
        for rep in range(reps):
            series["cold"].append(await through_engine(service, name, cold=True))
            cached = await through_engine(service, name, cold=False)
            series["cached"].append(cached)
            if compiled and cached["error"] is None and not cached["cached"]:
                errors.append("the second submission was not served by the compile cache")
            for prefix, executor in executors.items():
                runs = await box_and_bare(executor, name, Path(tmp) / f"{prefix}{rep}")
                if runs is None:
                    errors.append(f"the {prefix}build failed")
                    break
                series[f"{prefix}box"].append(runs[0])
                series[f"{prefix}bare"].append(runs[1])
    errors += [e for runs in series.values() for r in runs if (e := r["error"]) is not None]
    entry: dict[str, Any] = {"compiled": compiled}
    for variant, runs in series.items():
        entry[f"{variant}_median_s"] = median([r["wall"] for r in runs])
        entry[f"{variant}_cpu_median_s"] = median([r["cpu"] for r in runs])
        entry[f"{variant}_s"] = [round(r["wall"], 4) for r in runs]
    entry["errors"] = errors[:3]
    if compiled and series["box"]:
        entry |= compile_target(series, entry)
    return entry


def compile_target(series: dict[str, list[dict[str, Any]]], entry: dict[str, Any]) -> dict:
    """Item by item: the engine's cost over a box run, the compiler in runs, cold / cached."""
    pairs = zip(series["cached"], series["box"], strict=False)
    # The program in both boxes is the same; what differs is this process's work (the engine's
    # checks, hashing and look-up), measured in CPU time: wall time on a loaded machine holds
    # the scheduler's noise, tens of ms here.
    overhead = statistics.median(c["own"] - b["own"] for c, b in pairs)
    compile_s = median([r["compile"] for r in series["cold"]]) or 0.0
    compiler_runs = compile_s / entry["box_median_s"]
    ratio = entry["cold_median_s"] / entry["cached_median_s"]
    needs_ratio = compiler_runs >= COMPILER_RUNS
    return {
        "compile_median_s": compile_s,
        "overhead_ms": round(overhead * 1000, 2),
        "compiler_runs": round(compiler_runs, 1),
        "ratio": round(ratio, 1),
        "ratio_applies": needs_ratio,
        "meets_target": overhead <= MAX_OVERHEAD_S and (ratio >= TARGET_RATIO or not needs_ratio),
    }


def ms(value: float | None) -> str:
    return "     —" if value is None else f"{value * 1000:6.0f}"


def line(name: str, entry: dict[str, Any]) -> str:
    times = " ".join(
        f"{variant} {ms(entry[f'{variant}_median_s'])}" for variant in ("cold", "cached", "box")
    )
    text = f"{name:14} {times} bare {ms(entry['bare_median_s'])} ms"
    text += f"  (cpu: box {ms(entry['box_cpu_median_s'])} bare {ms(entry['bare_cpu_median_s'])})"
    if "before_box_median_s" in entry:
        text += (
            f"  before: box {ms(entry['before_box_median_s'])} bare "
            f"{ms(entry['before_bare_median_s'])} ms (cpu: box "
            f"{ms(entry['before_box_cpu_median_s'])} bare {ms(entry['before_bare_cpu_median_s'])})"
        )
    if "ratio" in entry:
        applies = "" if entry["ratio_applies"] else " (n/a)"
        text += (
            f"  +{entry['overhead_ms']:.2f} ms over box, compiler {entry['compiler_runs']:.0f} "
            f"runs, ratio {entry['ratio']:.1f}x{applies} "
            + ("ok" if entry["meets_target"] else "MISS")
        )
    if entry["errors"]:
        text += "  ERRORS: " + entry["errors"][0][:120]
    return text


async def measure(
    service: Service, languages: list[str], reps: int, before: Executor | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in languages:
        out[name] = await measure_one(service, name, reps, before)
        print(line(name, out[name]), flush=True)
    return out


def jail_service(uid_base: int, state_dir: str) -> Service:
    """An in-process engine of one slot, its own uids and state; exit 2 when it has no jail."""
    service = Service(Config.load(slots=1, uid_base=uid_base, state_dir=state_dir)).start()
    if service.problem:
        service.close()
        print(f"isolation unavailable: {service.problem}", file=sys.stderr)
        raise SystemExit(2)
    return service


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--languages", help="comma-separated; default: every available one")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "languages.json")
    parser.add_argument("--page", type=Path, default=REPO_ROOT / "docs" / "languages.md")
    # --no-readme: its name from when the table was in the README (bench/NOTES.md's commands)
    parser.add_argument("--no-page", "--no-readme", action="store_true", help="leave it alone")
    parser.add_argument("--before-table", type=Path, help="another table.py to measure alongside")
    args = parser.parse_args()

    service = jail_service(UID_BASE, "/run/sandlot-bench-languages")
    config = service.config
    before = None
    if args.before_table:
        table = Registry(load_table(args.before_table), config.runtime_dir)
        before = Executor(config, service.jail, table)
    try:
        status = service.registry.status
        wanted = args.languages.split(",") if args.languages else sorted(HELLO)
        names = [service.registry.get(n).name for n in wanted]
        skipped = [n for n in names if not status[n].available]
        names = [n for n in names if status[n].available]
        if skipped:
            print(f"not available here, skipped: {', '.join(skipped)}")
        load_before = os.getloadavg()[0]
        measured = asyncio.run(measure(service, names, args.reps, before))
        load = f"load average {load_before:.1f} → {os.getloadavg()[0]:.1f}"
    finally:
        service.close()

    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    results = {
        "measured_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, {load}",
        "command": " ".join(["bench/languages.py", *sys.argv[1:]]),
        "reps": args.reps,
        "max_overhead_ms": MAX_OVERHEAD_S * 1000,
        "target_ratio": TARGET_RATIO,
        "compiler_runs": COMPILER_RUNS,
        # A run for some languages keeps the others' earlier numbers.
        "languages": {**previous.get("languages", {}), **measured},
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    if not args.no_page:
        update(args.page, results, config.runtime_dir)
        print(f"rewrote the languages table in {args.page}")
    met = [n for n, e in measured.items() if e.get("meets_target") is True]
    missed = [n for n, e in measured.items() if e.get("meets_target") is False]
    failed = [n for n, e in measured.items() if e["errors"]]
    print(
        f"compile-cache target (cached <= box + {MAX_OVERHEAD_S * 1000:g} ms; cold/cached >= "
        f"{TARGET_RATIO:g}x where the compiler takes >= {COMPILER_RUNS:g} runs): met by "
        f"{', '.join(met) or 'none'}; missed by {', '.join(missed) or 'none'}"
    )
    if failed:
        print(f"with errors: {', '.join(failed)}")
    return 1 if failed or missed else 0


if __name__ == "__main__":
    sys.exit(main())
