"""`sandlot eval`: judge a file of samples against a dataset, locally or on a server, with pass@k.

Each judged sample is appended to the results file as soon as it is known, so an interrupted run
resumes where it stopped (samples already in the results file are not judged again).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from sandlot.cli.common import ConfigOpt, console, fail, load_config
from sandlot.errors import SandlotError

if TYPE_CHECKING:  # the judge is imported by the commands that judge, not by every command
    from sandlot.judge.batch import Sample
    from sandlot.wire.judge import EvalResult

    Done = Callable[[Sample, dict[str, Any]], None]


def read_samples(path: Path) -> list[Sample]:
    from sandlot.judge.batch import number_samples

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


def read_done(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Records of an earlier run (a torn last line from an interruption is ignored)."""
    done: dict[tuple[str, int], dict[str, Any]] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
            done[(str(rec["id"]), int(rec["sample"]))] = rec
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
    return done


async def run_local(
    dataset: str, samples: list[Sample], extra: dict[str, Any], language: str | None,
    config: Path | None, on_done: Done,
) -> None:  # fmt: skip
    from sandlot.judge import JudgeConfig
    from sandlot.judge.batch import judge_many, record
    from sandlot.service import Service

    service = Service(load_config(config)).start()
    try:
        judge = service.judge
        cfg = JudgeConfig(language=language, extra=extra)
        for s in samples:
            judge.problem(dataset, s.id, cfg)  # unknown ids fail before anything runs
        await judge_many(judge, dataset, samples, cfg, service.config.slots * 2,
                         lambda s, r: on_done(s, record(s, r)))  # fmt: skip
    finally:
        service.close()


async def run_remote(
    urls: list[str], dataset: str, samples: list[Sample], extra: dict[str, Any],
    language: str | None, concurrency: int, on_done: Done,
) -> None:  # fmt: skip
    from sandlot.client import AsyncClient

    gate = asyncio.Semaphore(concurrency)
    async with AsyncClient(urls, timeout=600) as client:  # the least busy server takes each

        async def one(sample: Sample) -> None:
            async with gate:
                res = await client.submit(dataset, sample.id, sample.completion,
                                          language=language, extra=extra)  # fmt: skip
            extra_out = res.extra or {}
            on_done(sample, {
                "id": sample.id, "sample": sample.index, "accepted": res.accepted,
                "verdict": extra_out.get("verdict"), "reason": extra_out.get("reason"),
                "extracted_type": res.extracted_type,
                "dataset": extra_out.get("dataset") or dataset,
                "language": extra_out.get("language"), "run_time": wire_run_time(res),
            })  # fmt: skip

        await asyncio.gather(*(one(s) for s in samples))


def wire_run_time(result: EvalResult) -> float | None:
    """Seconds a /submit answer's tests ran, as batch.run_time counts them locally."""
    runs = [t.exec_info.run_result for t in result.tests]
    times = [r.execution_time for r in runs if r is not None and r.execution_time is not None]
    return round(sum(times), 6) if times else None


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
    dataset: Annotated[str, typer.Option("--dataset", "-d", help="dataset id (sandlot: list)")],
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
    out = out or samples.with_name(samples.name.removesuffix(".jsonl") + "_results.jsonl")
    if restart and out.exists():
        out.unlink()
    done = read_done(out)
    todo = [s for s in all_samples if s.key not in done]
    extra: dict[str, Any] = {"mode": mode} if mode else {}
    console.print(f"{len(all_samples)} samples, {len(done)} already judged, {len(todo)} to go")
    with out.open("a", encoding="utf-8") as sink, Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("accepted {task.fields[ok]}"), TimeRemainingColumn(), console=console,
    ) as progress:  # fmt: skip
        bar = progress.add_task(dataset, total=len(todo), ok=0)
        accepted = 0

        def on_done(sample: Sample, rec: dict[str, Any]) -> None:
            nonlocal accepted
            accepted += bool(rec["accepted"])
            sink.write(json.dumps(rec) + "\n")
            sink.flush()  # a crash loses at most the samples in flight
            done[sample.key] = rec
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
    from sandlot.judge.metrics import summarize

    pairs = [(s.id, done[s.key]["accepted"]) for s in all_samples if s.key in done]
    table = Table("metric", "value")
    for name, value in summarize(pairs, ks).items():
        table.add_row(name, f"{value:.4f}")
    table.add_row("accepted", f"{sum(a for _, a in pairs)}/{len(pairs)}")
    console.print(table)
    console.print(f"per-sample results: {out}")
    if report is not None:
        # Records of runs from before reports existed have no dataset: it is this one.
        records = [{**done[s.key], "dataset": done[s.key].get("dataset") or dataset}
                   for s in all_samples if s.key in done]  # fmt: skip
        write_report(report, records, ks, f"sandlot eval: {dataset} ({samples.name})")
