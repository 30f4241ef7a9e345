"""Hello world in every available language, in the jail: cold (compile + run) and cached times.

For each language the same hello-world program (the one tests/test_languages.py checks) goes
through the in-process engine (`Service`, no HTTP) `--reps` times in two interleaved variants:

- *cold*: the compile cache is emptied first, so a compiled language pays its compiler;
- *cached*: the same source again right after, so the compile cache serves the build.

Interleaving puts both variants under the same machine load. The medians go to a JSON file, the
ratio cold / cached is checked against the target (>= 10x for every compiled language), and the
README's languages table is rewritten from the registry and these numbers.

    .venv/bin/python bench/languages.py [--reps 5] [--languages a,b] [--out bench/languages.json]
                                        [--no-readme]

Runs as root (the jail needs it), beside any server: its own state dir and uid range.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))  # the hello-world programs the tests check

from test_languages import HELLO, RUN_TIMEOUT  # noqa: E402

from sandlot.config import Config  # noqa: E402
from sandlot.executor import CodeRequest  # noqa: E402
from sandlot.executor.cache import CompileCache  # noqa: E402
from sandlot.languages.docs import update_readme  # noqa: E402
from sandlot.service import Service  # noqa: E402

TARGET_RATIO = 10.0  # cached submissions of a compiled language: >= 10x faster than cold ones
UID_BASE = 64500


async def one(service: Service, language: str, cold: bool) -> tuple[float, dict[str, Any]]:
    executor = service.require_executor()
    if cold:
        executor.cache = CompileCache(max_bytes=executor.cache.max_bytes)
    req = CodeRequest(
        language=language,
        code=HELLO[language],
        compile_timeout=120,
        run_timeout=RUN_TIMEOUT.get(language, 30),
    )
    start = time.perf_counter()
    result = await executor.execute(req)
    wall = time.perf_counter() - start
    run = result.run
    ok = result.error is None and run is not None and run.ok and run.stdout == b"hello\n"
    detail = {
        "ok": ok,
        "cached": result.cached,
        "compile_s": result.compile.wall_time if result.compile else None,
        "run_s": run.wall_time if run else None,
        "error": None if ok else (result.error or _why(result)),
    }
    return wall, detail


def _why(result: Any) -> str:
    for step in (result.compile, result.run):
        if step is not None and not step.ok:
            return (step.stderr or step.stdout).decode(errors="replace")[-300:]
    return "unexpected output"


async def measure(service: Service, languages: list[str], reps: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in languages:
        row = service.registry.get(name)
        compiled = row.compile is not None
        cold: list[float] = []
        cached: list[float] = []
        errors: list[str] = []
        for _ in range(reps):
            wall, detail = await one(service, name, cold=True)
            cold.append(wall)
            if not detail["ok"]:
                errors.append(detail["error"])
            wall, detail = await one(service, name, cold=False)
            cached.append(wall)
            if not detail["ok"]:
                errors.append(detail["error"])
            if compiled and detail["ok"] and not detail["cached"]:
                errors.append("the second submission was not served by the compile cache")
        entry: dict[str, Any] = {
            "compiled": compiled,
            "cold_median_s": round(statistics.median(cold), 4),
            "cached_median_s": round(statistics.median(cached), 4),
            "cold_s": [round(v, 4) for v in cold],
            "cached_s": [round(v, 4) for v in cached],
            "errors": errors[:3],
        }
        if compiled:
            entry["ratio"] = round(entry["cold_median_s"] / entry["cached_median_s"], 1)
            entry["meets_target"] = entry["ratio"] >= TARGET_RATIO
        out[name] = entry
        ratio = f"  ratio {entry['ratio']:5.1f}x" if compiled else ""
        flag = "  ERRORS: " + errors[0][:120] if errors else ""
        print(
            f"{name:14} cold {entry['cold_median_s'] * 1000:8.0f} ms  "
            f"cached {entry['cached_median_s'] * 1000:8.0f} ms{ratio}{flag}",
            flush=True,
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--languages", help="comma-separated; default: every available one")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "languages.json")
    parser.add_argument("--readme", type=Path, default=REPO_ROOT / "README.md")
    parser.add_argument("--no-readme", action="store_true", help="leave README.md alone")
    args = parser.parse_args()

    config = Config.load(slots=1, uid_base=UID_BASE, state_dir="/run/sandlot-bench-languages")
    service = Service(config).start()
    if service.problem:
        print(f"isolation unavailable: {service.problem}", file=sys.stderr)
        return 2
    try:
        status = service.registry.status
        wanted = args.languages.split(",") if args.languages else sorted(HELLO)
        names = [service.registry.get(n).name for n in wanted]
        skipped = [n for n in names if not status[n].available]
        names = [n for n in names if status[n].available]
        if skipped:
            print(f"not available here, skipped: {', '.join(skipped)}")
        load_before = os.getloadavg()[0]
        measured = asyncio.run(measure(service, names, args.reps))
        load = f"load average {load_before:.1f} → {os.getloadavg()[0]:.1f}"
    finally:
        service.close()

    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    results = {
        "measured_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, {load}",
        "reps": args.reps,
        "target_ratio": TARGET_RATIO,
        # A run for some languages keeps the others' earlier numbers.
        "languages": {**previous.get("languages", {}), **measured},
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    if not args.no_readme:
        update_readme(args.readme, results, config.runtime_dir)
        print(f"rewrote the languages table in {args.readme}")
    missed = [n for n, e in measured.items() if e.get("meets_target") is False]
    failed = [n for n, e in measured.items() if e["errors"]]
    if missed:
        print(f"below the {TARGET_RATIO:g}x cached target: {', '.join(missed)}")
    if failed:
        print(f"with errors: {', '.join(failed)}")
    return 1 if failed or missed else 0


if __name__ == "__main__":
    sys.exit(main())
