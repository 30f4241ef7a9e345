"""The report as one self-contained HTML page: styles inline, plots as data: URIs, no script.

Every value from the records (ids, reasons: a program's output can be in them) is escaped,
and the page's own Content-Security-Policy forbids scripts and any other origin, so a report
opened from disk can do nothing but show itself.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
MAX_ROWS = 500  # per table; the JSON summary has every row
REASON_CHARS = 300
STYLE = """
body { font: 14px/1.45 system-ui, "DejaVu Sans", sans-serif; color: #1b1f24; margin: 24px auto;
       max-width: 1150px; padding: 0 16px; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 28px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f6f8fa; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; height: auto; } .muted { color: #57606a; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
"""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f'<td class="n">{value:.4f}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="n">{value}</td>'
    return f"<td>{escape('' if value is None else str(value))}</td>"


def _table(head: list[str], rows: list[list[Any]], total: int | None = None) -> str:
    shown = rows[:MAX_ROWS]
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in shown)
    more = total if total is not None else len(rows)
    note = (f'<p class="muted">{len(shown)} of {more} rows; the JSON summary has all.</p>'
            if more > len(shown) else "")  # fmt: skip
    heads = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f"<table><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>{note}"


def _mix(verdicts: dict[str, int]) -> str:
    return ", ".join(f"{v} {n}" for v, n in verdicts.items())


def _pass(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.4f}" for k, v in values.items()) or "no pass@k"


def _reason(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "…"


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def render(summary: dict[str, Any], images: dict[str, bytes]) -> str:
    """The HTML page of `summary`, with `images` ("main", "run_time": PNG bytes) embedded."""
    ks = summary["ks"]
    every = summary["overall"]
    overall = ["overall", "all", every["problems"], every["samples"], summary["accepted"],
               *(every["pass_at_k"].get(f"pass@{k}") for k in ks)]  # fmt: skip
    groups = _table(
        ["dataset", "language", "problems", "samples", "accepted", *(f"pass@{k}" for k in ks)],
        [[g["dataset"], g["language"], g["problems"], g["samples"], g["accepted"],
          *(g["pass_at_k"].get(f"pass@{k}") for k in ks)] for g in summary["groups"]]
        + ([overall] if len(summary["groups"]) > 1 else []),
    )  # fmt: skip
    rt = summary["run_times"]
    times = (f"median {rt['median']:.3f} s, 90th percentile {rt['p90']:.3f} s, slowest "
             f"{rt['max']:.3f} s over {rt['count']} samples" if rt["count"] else
             "no run times recorded")  # fmt: skip
    slowest = _table(
        ["dataset", "language", "problem", "sample", "run time (s)", "verdict"],
        [[s["dataset"], s["language"], s["id"], s["sample"], s["run_time"], s["verdict"]]
         for s in summary["slowest"]],
    )  # fmt: skip
    failing = _table(
        ["dataset", "language", "problem", "accepted", "verdicts", "reason"],
        [[p["dataset"], p["language"], p["id"], f"{p['accepted']}/{p['samples']}",
          _mix(p["verdicts"]), _reason(p["reason"])] for p in summary["failing"]],
    )  # fmt: skip
    problems = _table(
        ["dataset", "language", "problem", "samples", "accepted", "verdicts", "mean run time (s)"],
        [[p["dataset"], p["language"], p["id"], p["samples"], p["accepted"], _mix(p["verdicts"]),
          p["run_time_mean"]] for p in summary["problems"]],
    )  # fmt: skip
    title = escape(summary["title"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><style>{STYLE}</style></head><body>
<h1>{title}</h1>
<p class="muted">{summary["accepted"]} of {summary["samples"]} samples accepted ·
verdicts: {escape(_mix(summary["verdicts"]))} · made {escape(summary["created"])} by sandlot</p>
<h2>pass@k per dataset and language</h2>
<p>Overall: {escape(_pass(every["pass_at_k"]))} over {every["problems"]} problems (a pass@k
is left out when a problem has fewer than k samples).</p>{groups}
<figure>{_img(images["main"], "pass@k and verdicts per dataset and language")}</figure>
<h2>Run times</h2><p>{times}</p>
<figure>{_img(images["run_time"], "histogram of run times")}</figure>
<h2>Slowest samples</h2>{slowest}
<h2>Failing problems</h2>{failing if summary["failing"] else "<p>None: every sample passed.</p>"}
<h2>Every problem</h2>{problems}
</body></html>
"""
