"""Eval reports: per-sample results (the lines `sandlot eval` writes) to a summary, plots and
a self-contained HTML page.

    summary.summarize(records, ks)   -> a JSON-able summary: pass@k per dataset and language,
                                        per-problem rows, verdicts, run times, slowest, failing
    plots.main_plot(summary)         -> PNG bytes: pass@k and the verdict mix per group
    plots.run_time_plot(summary)     -> PNG bytes: a histogram of the samples' run times
    page.render(summary, images)     -> the HTML, images embedded as data: URIs
    write(path, records, ks)         -> writes PATH (.html), its .json and its .png

Pure functions of the records except `write`. Plots need matplotlib (`pip install
'sandlot[report]'`); the summary does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sandlot.reports.summary import summarize

__all__ = ["summarize", "write"]


def write(path: Path, records: Iterable[dict[str, Any]], ks: Iterable[int],
          title: str = "sandlot eval") -> list[Path]:  # fmt: skip
    """The report at `path`, its JSON summary beside it (same name, .json) and its main plot
    (.png); returns the three paths."""
    from sandlot.reports import page, plots  # matplotlib only when a report is asked for

    summary = summarize(list(records), ks, title)
    main = plots.main_plot(summary)
    images = {"main": main, "run_time": plots.run_time_plot(summary)}
    out = [path, path.with_suffix(".json"), path.with_suffix(".png")]
    out[0].write_text(page.render(summary, images), encoding="utf-8")
    out[1].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    out[2].write_bytes(main)
    return out
