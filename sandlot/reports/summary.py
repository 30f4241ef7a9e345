"""An eval run's records summarised: what the report shows and its JSON file holds.

A record is one judged sample, as `sandlot eval` writes it: id, sample, accepted, verdict,
reason, and (since reports exist) dataset, language and run_time. Older records without the
last three are grouped under "?" and left out of the run times. A record without a language
(a sample with no code, judged before the judge named one) counts in its dataset's language
when the dataset's other records have only one, so that every problem is one row and the
groups' pass@k is what `sandlot eval` prints.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sandlot.judge import pass_at_k

Record = dict[str, Any]
SLOWEST = 10  # samples listed as the slowest
UNKNOWN = "?"


def _dataset(rec: Record) -> str:
    return str(rec.get("dataset") or UNKNOWN)


def _languages(records: list[Record]) -> dict[str, str]:
    """Each dataset's language, where its records name exactly one."""
    named: dict[str, set[str]] = defaultdict(set)
    for rec in records:
        if rec.get("language"):
            named[_dataset(rec)].add(str(rec["language"]))
    return {dataset: next(iter(langs)) for dataset, langs in named.items() if len(langs) == 1}


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders the numbers in ids by value: 2 before 10, HumanEval/9 before /10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", text) if part)  # fmt: skip


def _verdict(rec: Record) -> str:
    if rec.get("verdict"):
        return str(rec["verdict"])
    return "accepted" if rec.get("accepted") else "rejected"


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _problem(key: tuple[str, str, str], recs: list[Record]) -> dict[str, Any]:
    verdicts = Counter(_verdict(r) for r in recs)
    times = [t for r in recs if (t := _seconds(r.get("run_time"))) is not None]
    reasons = Counter(str(r["reason"]) for r in recs if not r.get("accepted") and r.get("reason"))
    return {
        "dataset": key[0], "language": key[1], "id": key[2], "samples": len(recs),
        "accepted": sum(bool(r.get("accepted")) for r in recs),
        "verdicts": dict(verdicts.most_common()),
        "run_time_mean": round(statistics.fmean(times), 6) if times else None,
        "reason": reasons.most_common(1)[0][0] if reasons else None,
    }  # fmt: skip


def _group(key: tuple[str, str], recs: list[Record], ks: list[int]) -> dict[str, Any]:
    return {
        "dataset": key[0], "language": key[1],
        "problems": len({str(r.get("id")) for r in recs}), "samples": len(recs),
        "accepted": sum(bool(r.get("accepted")) for r in recs),
        "pass_at_k": pass_at_k(((r.get("id"), bool(r.get("accepted"))) for r in recs), ks),
        "verdicts": dict(Counter(_verdict(r) for r in recs).most_common()),
    }  # fmt: skip


def _slow(seconds: float, rec: Record, key: tuple[str, str]) -> dict[str, Any]:
    dataset, language = key
    return {"dataset": dataset, "language": language, "id": str(rec.get("id")),
            "sample": rec.get("sample"), "run_time": seconds, "verdict": _verdict(rec)}  # fmt: skip


def summarize(records: list[Record], ks: Iterable[int], title: str = "sandlot eval") -> dict:
    """pass@k per (dataset, language) and over all, each problem's row, the verdict mix, run
    times, the slowest samples and the failing problems (fewest accepted first)."""
    ks = sorted({k for k in ks if k >= 1}) or [1]
    languages = _languages(records)

    def key(rec: Record) -> tuple[str, str]:
        dataset = _dataset(rec)
        return dataset, str(rec.get("language") or languages.get(dataset) or UNKNOWN)

    by_group: dict[tuple[str, str], list[Record]] = defaultdict(list)
    by_problem: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    for rec in records:
        by_group[key(rec)].append(rec)
        by_problem[(*key(rec), str(rec.get("id")))].append(rec)
    groups = [_group(k, recs, ks) for k, recs in sorted(by_group.items())]
    order = sorted(by_problem, key=lambda k: (k[0], k[1], _natural(k[2])))
    problems = [_problem(k, by_problem[k]) for k in order]
    everyone = ((k, bool(r.get("accepted"))) for k, recs in by_problem.items() for r in recs)
    timed = [(t, r) for r in records if (t := _seconds(r.get("run_time"))) is not None]
    times = [t for t, _ in timed]
    slowest = sorted(timed, key=lambda pair: -pair[0])[:SLOWEST]
    return {
        "title": title,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "ks": ks,
        "samples": len(records),
        "accepted": sum(bool(r.get("accepted")) for r in records),
        "overall": {
            "problems": len(by_problem),
            "samples": len(records),
            "pass_at_k": pass_at_k(everyone, ks),
        },
        "groups": groups,
        "verdicts": dict(Counter(_verdict(r) for r in records).most_common()),
        "run_times": {
            "count": len(times),
            "median": _quantile(times, 0.5) if times else None,
            "p90": _quantile(times, 0.9) if times else None,
            "max": max(times) if times else None,
            "values": [round(t, 6) for t in times],
        },
        "slowest": [_slow(t, r, key(r)) for t, r in slowest],
        "failing": sorted(
            (p for p in problems if p["accepted"] < p["samples"]),
            key=lambda p: (p["accepted"] / p["samples"], p["dataset"], _natural(p["id"])),
        ),
        "problems": problems,
    }
