"""A change to a language's row, measured on a dataset's programs: output by output, and CPU.

bench/languages.py measures a row's change on a hello world; this measures it on real work and
says whether any program's output changed. Each program the judge assembles from a MultiPL-E
dataset's rows (each row's GPT solution, right or wrong, with the row's tests; the same
`full_code` as `/submit`, sealed as the judge seals it) runs bare with this tree's row and with
another version's (its run argv and environment), alternating which goes first, as plain
subprocesses: the change without the jail's own cost. A program's stdout, stderr, exit and
seal are compared between the two; `--mask` (a regular expression) blanks a part known to
differ from run to run, such as how close a deep recursion came to its stack's limit. It
prints the programs that differ, how many pass both ways (exit 0 and the seal's frame), and
the CPU time of each side summed over all programs.

    rm -rf /tmp/before && mkdir /tmp/before && git archive <before> sandlot/languages \
        | tar -x -C /tmp/before
    .venv/bin/python bench/row_change.py --language R --before-table \
        /tmp/before/sandlot/languages/table.py --datasets multiple_r,multiple_mbpp_r

Runs as root beside any server, with its own state dir and uid range (the jail only builds the
run steps; no program runs in it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from languages import jail_service, load_table, run_bare

from sandlot.executor import CodeRequest, Executor
from sandlot.executor.guards import Seal
from sandlot.executor.seal import Opened, open_frame
from sandlot.jail.workdir import write_files
from sandlot.judge import Datasets
from sandlot.judge.engine import Judge, strict
from sandlot.judge.plans import JudgeConfig, Program
from sandlot.languages import Registry
from sandlot.service import Service

UID_BASE = 65600
TIMEOUT_S = 60.0
SHOWN = 10  # programs that differ, printed


def programs(service: Service, datasets: list[str], limit: int | None) -> list[Program]:
    """The programs the judge assembles from each row's GPT solution."""
    judge = Judge(Datasets(service.registry), lambda: service.executor)
    out: list[Program] = []
    for name in datasets:
        spec, rows = judge.rows(name, JudgeConfig())
        for row in rows[:limit]:
            job = judge.assemble(spec, row, row["gpt_solution"], JudgeConfig()).job
            if isinstance(job, Program):
                out.append(job)
    return out


async def one_run(
    executor: Executor, job: Program, workdir: Path, mask: re.Pattern[bytes] | None
) -> dict[str, Any]:
    seal = Seal(job.tests_at, strict(JudgeConfig()), job.entry) if job.seal else None
    step = await executor.run_step(CodeRequest(language=job.language, code=job.code,
                                               files=job.files, seal=seal))  # fmt: skip
    if step is None:  # a wrong solution may not compile: the same with either row
        return {"seen": b"did not build", "ok": False, "cpu": 0.0, "wall": 0.0}
    spec, secret = step
    workdir.mkdir()
    write_files(str(workdir), spec.files, os.getuid(), os.getgid())  # as the jail does
    done, wall, cpu = run_bare(spec, workdir, TIMEOUT_S)
    # The seal's frame holds this run's secret: what is compared is whether it was there.
    opened = open_frame(done.stdout, secret) if secret else Opened(b"", done.stdout)
    seen = repr((opened.stdout, opened.payload, done.stderr, done.returncode)).encode()
    ok = done.returncode == 0 and opened.payload is not None
    return {"seen": mask.sub(b"", seen) if mask else seen, "ok": ok, "cpu": cpu, "wall": wall}


async def compare(
    sides: dict[str, Executor], jobs: list[Program], mask: re.Pattern[bytes] | None
) -> dict[str, Any]:
    totals = {side: {"cpu": 0.0, "wall": 0.0} for side in sides}
    differ: list[str] = []
    passing = 0
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        for i, job in enumerate(jobs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            runs = {side: await one_run(sides[side], job, Path(tmp) / f"{i}-{side}", mask)
                    for side in order}  # fmt: skip
            for side, run in runs.items():
                totals[side]["cpu"] += run["cpu"]
                totals[side]["wall"] += run["wall"]
            after, before = runs["after"], runs["before"]
            if after["seen"] != before["seen"]:
                differ.append(f"program {i}: after {after['seen'][:200]!r}; "
                              f"before {before['seen'][:200]!r}")  # fmt: skip
            passing += after["ok"] and before["ok"]
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(jobs)} programs", flush=True)
    return {"totals": totals, "differ": differ, "passing": passing}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--language", required=True)
    parser.add_argument("--before-table", type=Path, required=True,
                        help="another version's sandlot/languages/table.py")  # fmt: skip
    parser.add_argument("--datasets", required=True, help="comma-separated MultiPL-E datasets")
    parser.add_argument("--limit", type=int, help="at most this many rows of each dataset")
    parser.add_argument("--mask", help="a regular expression blanked in both outputs")
    args = parser.parse_args()

    service = jail_service(UID_BASE, "/run/sandlot-bench-row-change")
    config = service.config
    try:
        before = Registry(load_table(args.before_table), config.runtime_dir)
        name = service.registry.get(args.language).name
        if name not in before.rows:
            print(f"the other table has no {name} row", file=sys.stderr)
            return 2
        sides = {"after": service.executor, "before": Executor(config, service.jail, before)}
        jobs = [j for j in programs(service, args.datasets.split(","), args.limit)
                if j.language == name]  # fmt: skip
        mask = re.compile(args.mask.encode()) if args.mask else None
        print(f"{len(jobs)} {name} programs of {args.datasets}, bare, after and before")
        result = asyncio.run(compare(sides, jobs, mask))
    finally:
        service.close()
    for line in result["differ"][:SHOWN]:
        print(line)
    if len(result["differ"]) > SHOWN:
        print(f"... and {len(result['differ']) - SHOWN} more programs that differ")
    after, before = result["totals"]["after"], result["totals"]["before"]
    print(
        f"identical output and exit: {len(jobs) - len(result['differ'])} of {len(jobs)}; "
        f"passing both ways: {result['passing']}"
    )
    print(
        f"CPU s: before {before['cpu']:.1f}, after {after['cpu']:.1f} "
        f"({after['cpu'] / before['cpu']:.2f}x); wall s: before {before['wall']:.1f}, "
        f"after {after['wall']:.1f} ({after['wall'] / before['wall']:.2f}x)"
    )
    return 1 if result["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
