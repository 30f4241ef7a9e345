"""`sandlot eval`: judge a file of samples against a dataset, locally, on servers or on a Ray
cluster, with pass@k.

Each judged sample is appended to the results file as soon as it is known, so an interrupted run
resumes where it stopped (`sandlot.usecases.ResultsFile` says which results still hold). The
dataset and every problem id are checked before anything is judged or reused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from sandlot.cli.common import ConfigOpt, console, fail, load_config, show_table
from sandlot.errors import SandlotError

if TYPE_CHECKING:  # the judge is imported by the commands that judge, not by every command
    from sandlot.judge import Sample

    Done = Callable[[Sample, dict[str, Any]], None]


def read_samples(path: Path) -> list[Sample]:
    from sandlot.judge import number_samples

    rows = []
    try:
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise fail(f"{path}, line {n}: not valid JSON ({exc.msg})") from None
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc}") from None
    try:
        return number_samples(rows, str(path))
    except SandlotError as exc:
        raise fail(str(exc)) from None


def check_problems(
    dataset: str, samples: list[Sample], language: str | None, extra: dict[str, Any],
    server: str | None, config: Path | None,
) -> None:  # fmt: skip
    """The dataset exists and has every sample's problem, here (server None) or on the server:
    a misspelt name or a wrong id fails before anything is judged or reused."""
    try:
        if server is None:
            from sandlot.judge import JudgeConfig
            from sandlot.service import Service
            from sandlot.usecases import check_ids

            judge = Service(load_config(config)).judge  # no jail: the datasets only
            check_ids(judge, dataset, samples, JudgeConfig(language=language, extra=extra))
            return
        from sandlot.client import Client

        with Client([u.strip() for u in server.split(",") if u.strip()]) as client:
            ids = {str(i) for i in client.list_ids(dataset, language=language, extra=extra)}
    except SandlotError as exc:
        raise fail(str(exc)) from None
    missing = sorted({str(s.id) for s in samples} - ids)
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise fail(f"dataset {dataset!r} on {server} has no problem {shown}")


async def run_local(
    dataset: str, samples: list[Sample], extra: dict[str, Any], language: str | None,
    config: Path | None, on_done: Done,
) -> None:  # fmt: skip
    from sandlot.judge import JudgeConfig
    from sandlot.service import Service
    from sandlot.usecases import evaluate

    # Its own samples: they wait their turns as long as it takes (no client here gives up).
    patient = dataclasses.replace(load_config(config), queue_timeout=math.inf)
    service = Service(patient).start()
    try:
        cfg = JudgeConfig(language=language, extra=extra)
        await evaluate(service, dataset, samples, cfg, lambda j: on_done(j.sample, j.record))
    finally:
        service.close()


async def run_remote(
    urls: list[str], dataset: str, samples: list[Sample], extra: dict[str, Any],
    language: str | None, concurrency: int, on_done: Done,
) -> None:  # fmt: skip
    from sandlot.client import AsyncClient
    from sandlot.usecases import answer_record

    gate = asyncio.Semaphore(concurrency)
    async with AsyncClient(urls, timeout=600) as client:  # the least busy server takes each

        async def one(sample: Sample) -> None:
            async with gate:
                res = await client.submit(dataset, sample.id, sample.completion,
                                          language=language, extra=extra)  # fmt: skip
            on_done(sample, answer_record(sample, res, dataset))

        await asyncio.gather(*(one(s) for s in samples))


def datasets_command(
    as_json: Annotated[bool, typer.Option("--json", help="print them as JSON")] = False,
    config: ConfigOpt = None,
) -> None:
    """List the datasets this machine can judge, with their aliases (what --dataset takes)."""
    from sandlot.service import Service

    judge = Service(load_config(config)).judge  # no jail: the datasets only
    specs = judge.datasets.specs.values()
    if as_json:
        rows = [{"name": s.name, "aliases": list(s.aliases), "language": s.language,
                 "summary": s.summary} for s in specs]  # fmt: skip
        print(json.dumps(rows, indent=2))
        return
    show_table(("dataset", "aliases", "language", "summary"),
               [(s.name, ", ".join(s.aliases), s.language or "any", s.summary)
                for s in specs])  # fmt: skip


def write_report(path: Path, records: list[dict[str, Any]], ks: list[int], title: str) -> None:
    try:
        from sandlot import reports

        written = reports.write(path, records, ks, title)
    except ImportError as exc:
        raise fail(str(exc), 1) from None
    except OSError as exc:
        raise fail(f"cannot write the report: {exc}", 1) from None
    console.print("report: " + ", ".join(str(p) for p in written))


def eval_command(
    dataset: Annotated[
        str, typer.Option("--dataset", "-d", help="dataset id (`sandlot datasets` lists them)")
    ],
    samples: Annotated[
        Path, typer.Option("--samples", "-s", help="JSONL: {task_id|id, completion} per line")
    ],
    k: Annotated[str, typer.Option(help="comma-separated k of pass@k")] = "1",
    server: Annotated[
        str,
        typer.Option(
            help="a sandlot (or SandboxFusion) URL, several separated by commas, or "
            "'local' for this machine"
        ),
    ] = "local",
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="judge on a Ray cluster, one engine per node: its address "
            "or 'auto' (needs sandlot[ray])",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="results JSONL (default: SAMPLES_results.jsonl)")
    ] = None,
    mode: Annotated[str | None, typer.Option(help="cruxeval: input or output")] = None,
    language: Annotated[str | None, typer.Option(help="for datasets of any language")] = None,
    concurrency: Annotated[int, typer.Option(help="requests in flight (remote)")] = 8,
    restart: Annotated[bool, typer.Option(help="ignore earlier results and judge all")] = False,
    report: Annotated[
        Path | None,
        typer.Option(help="write an HTML report here, with a .json summary and a .png plot"),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Judge every sample of a file, write per-sample results, print pass@k."""
    try:
        ks = [int(x) for x in k.split(",") if x.strip()]
    except ValueError:
        raise fail(f"--k must be comma-separated integers, got {k!r}") from None
    if report is not None and report.suffix.lower() not in (".html", ".htm"):
        raise fail(f"--report names the HTML file to write (e.g. report.html), got {report}")
    all_samples = read_samples(samples)
    extra: dict[str, Any] = {"mode": mode} if mode else {}
    remote = None if server == "local" or ray is not None else server
    check_problems(dataset, all_samples, language, extra, remote, config)
    out = out or samples.with_name(samples.name.removesuffix(".jsonl") + "_results.jsonl")
    from sandlot.usecases import ResultsFile

    results = ResultsFile(out, dataset, language, extra, all_samples, restart)
    todo = results.todo
    console.print(f"{len(all_samples)} samples, {len(results.done)} already judged, "
                  f"{len(todo)} to go")  # fmt: skip
    if results.stale:
        console.print(
            f"{results.stale} earlier results are for other completions, another dataset or "
            f"other options (or for samples no longer in {samples.name}): not reused"
        )
    with results.appending() as add, Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("accepted {task.fields[ok]}"), TimeRemainingColumn(), console=console,
    ) as progress:  # fmt: skip
        bar = progress.add_task(dataset, total=len(todo), ok=0)
        accepted = 0

        def on_done(sample: Sample, rec: dict[str, Any]) -> None:
            nonlocal accepted
            accepted += bool(add(sample, rec)["accepted"])
            progress.update(bar, advance=1, ok=accepted)

        per_node: dict[str, int] = {}
        try:
            if ray is not None:
                from sandlot.cluster import run_ray

                per_node = run_ray(ray, dataset, todo, extra, language, config, on_done)
            elif server == "local":
                asyncio.run(run_local(dataset, todo, extra, language, config, on_done))
            else:
                urls = [u.strip() for u in server.split(",") if u.strip()]
                asyncio.run(run_remote(urls, dataset, todo, extra, language, concurrency,
                                       on_done))  # fmt: skip
        except SandlotError as exc:
            raise fail(str(exc), 1) from None
    for node, count in per_node.items():
        console.print(f"ray node {node[:12]}: {count} samples judged")
    from sandlot.judge import pass_at_k, sample_counts

    done = results.done
    pairs = [(s.id, done[s.key]["accepted"]) for s in all_samples if s.key in done]
    table = Table("metric", "value")
    scores = pass_at_k(pairs, ks)
    for name, value in scores.items():
        table.add_row(name, f"{value:.4f}")
    table.add_row("accepted", f"{sum(a for _, a in pairs)}/{len(pairs)}")
    console.print(table)
    fewest = min(sample_counts(pairs).values(), default=(0, 0))[0]
    for wanted in sorted(set(ks)):
        if f"pass@{wanted}" not in scores:
            console.print(f"pass@{wanted} needs {wanted} samples of every problem; "
                          f"the fewest here is {fewest}")  # fmt: skip
    console.print(f"per-sample results: {out}")
    if report is not None:
        write_report(report, results.records(), ks, f"sandlot eval: {dataset} ({samples.name})")
