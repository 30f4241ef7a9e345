"""The report's plots as PNG bytes, drawn with matplotlib's object API (no pyplot, so no global
backend or state is touched in the caller's process)."""

from __future__ import annotations

import io
from typing import Any

try:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
except ImportError as exc:  # an optional face: say how to get it
    raise ImportError(
        "eval reports draw their plots with matplotlib: pip install 'sandlot[report]'"
    ) from exc

# One colour per verdict, the same in every plot (ColorBrewer-like, readable in grey too).
COLOURS = {
    "accepted": "#1a9850", "wrong_answer": "#d73027", "time_limit_exceeded": "#fc8d59",
    "memory_limit_exceeded": "#c51b7d", "output_limit_exceeded": "#8073ac",
    "runtime_error": "#984ea3", "compile_error": "#8c510a", "sandbox_error": "#333333",
    "no_code": "#bababa", "skipped": "#e0e0e0", "rejected": "#d73027",
}  # fmt: skip
OTHER = "#878787"
DPI = 110


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, bbox_inches="tight")
    return out.getvalue()


def _label(group: dict[str, Any]) -> str:
    return f"{group['dataset']} / {group['language']}"


def _empty(fig: Figure, text: str) -> bytes:
    fig.text(0.5, 0.5, text, ha="center", va="center", fontsize=12)
    return _png(fig)


def main_plot(summary: dict[str, Any]) -> bytes:
    """pass@k per dataset and language (left) and the verdict mix of their samples (right)."""
    groups = summary["groups"]
    fig = Figure(figsize=(11, 2.2 + 0.6 * max(1, len(groups))), layout="constrained")
    if not groups:
        return _empty(fig, "no samples judged")
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.2]})
    labels = [_label(g) for g in groups]
    ks = [k for k in summary["ks"] if any(f"pass@{k}" in g["pass_at_k"] for g in groups)]
    height = 0.8 / max(1, len(ks))
    for i, k in enumerate(ks):
        values = [g["pass_at_k"].get(f"pass@{k}", 0.0) for g in groups]
        ys = [n + (i - (len(ks) - 1) / 2) * height for n in range(len(groups))]
        bars = left.barh(ys, values, height=height * 0.92, label=f"pass@{k}")
        left.bar_label(bars, labels=[f"{v:.1%}" for v in values], padding=3, fontsize=8)
    left.set_yticks(range(len(groups)), labels)
    left.invert_yaxis()
    left.set_xlim(0, 1.18)
    left.set_xlabel("pass@k (unbiased estimator)")
    left.set_title("pass@k per dataset and language")
    if ks:
        left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=len(ks), fontsize=8)
    order = list(COLOURS)
    verdicts = sorted({v for g in groups for v in g["verdicts"]},
                      key=lambda v: (order.index(v) if v in order else len(order), v))  # fmt: skip
    starts = [0.0] * len(groups)
    for verdict in verdicts:
        shares = [g["verdicts"].get(verdict, 0) / g["samples"] for g in groups]
        right.barh(range(len(groups)), shares, left=starts, label=verdict,
                   color=COLOURS.get(verdict, OTHER))  # fmt: skip
        starts = [s + v for s, v in zip(starts, shares, strict=True)]
    right.set_yticks(range(len(groups)), [f"{g['samples']} samples" for g in groups])
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_xlabel("share of samples")
    right.set_title("verdicts")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3, fontsize=8)
    fig.suptitle(summary["title"])
    return _png(fig)


def run_time_plot(summary: dict[str, Any]) -> bytes:
    """How long the samples' tests ran: a histogram, log-scaled when the times span decades."""
    times = [t for t in summary["run_times"]["values"] if t > 0]
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    if not times:
        return _empty(fig, "no run times recorded")
    ax = fig.subplots()
    low, high = min(times), max(times)
    if high / low > 100:
        edges: list[float] | int = [low * (high / low) ** (i / 30) for i in range(31)]
        ax.set_xscale("log")
    else:
        edges = 30
    ax.hist(times, bins=edges, color="#4575b4")
    median = summary["run_times"]["median"]
    ax.axvline(median, color="#d73027", linestyle="--", label=f"median {median:.3f} s")
    ax.set_xlabel("run time of a sample's tests (s)")
    ax.set_ylabel("samples")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"run times ({len(times)} samples)")
    ax.legend(fontsize=8)
    return _png(fig)
