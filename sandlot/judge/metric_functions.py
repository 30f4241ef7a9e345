"""The Python source `POST /get_metrics_function` hands a client, as SandboxFusion does.

A SandboxFusion client runs it (`exec`) with `k_targets` (the k of pass@k) and `repeats` (the
samples per problem) defined, then calls `get_metrics(results)` on its EvalResults: pass@k per
category, keyed `<category>/Pass@k=<k>`, for each k no larger than `repeats`. SandboxFusion has
such source for two datasets, whose categories are:
- EvoEval: the transformation named in the id (`EvoEval_<category>_EvoEval/<n>`);
- MHPP: the first test's `test_info["difficulty_type"]` (the row's label).
Other datasets have none (`null`); `POST /get_metrics` computes pass@k in the server.

The source is the text of the functions below (so they are linted and tested like any code):
each is self-contained, takes EvalResults as objects or dicts, and reads from its globals what
the client defines and the other functions of the text. They carry no annotations: the text
runs in the client's Python, which may be older than ours (SandboxFusion's client runs on 3.7).
It runs in the client, never here.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any


def field_of(result, name):
    """A field of an EvalResult, whether the client parsed it into an object or a dict."""
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def pass_at_k_v2(samples, n, k):
    """Mean over problems of the unbiased pass@k (Chen et al. 2021) for n samples each, of
    which a problem's correct ones are its (id, passed) pairs that passed."""
    correct: dict[object, int] = {}
    for pid, passed in samples:
        correct[pid] = correct.get(pid, 0) + bool(passed)
    scores = []
    for c in correct.values():
        miss = 1.0
        for i in range(n - c + 1, n + 1):
            miss *= 1.0 - k / i
        scores.append(1.0 if n - c < k else 1.0 - miss)
    return sum(scores) / len(scores) if scores else 0.0


def get_metrics(results):
    """pass@k per category for each k in k_targets that repeats allows (both the client's)."""
    k_targets, repeats = globals()["k_targets"], globals()["repeats"]
    out = {}
    for category, members in globals()["get_categories"](results).items():
        pairs = [(field_of(r, "id"), field_of(r, "accepted")) for r in members]
        for k in k_targets:
            if k <= repeats:
                out[f"{category}/Pass@k={k}"] = pass_at_k_v2(pairs, repeats, k)
    return out


def evoeval_categories(results):
    import re

    out: dict[str, list] = {}
    for r in results:
        found = re.search(r"EvoEval_(.*)_EvoEval", str(field_of(r, "id")))
        out.setdefault(found.group(1) if found else "unknown", []).append(r)
    return out


def mhpp_categories(results):
    out: dict[str, list] = {}
    for r in results:
        tests = field_of(r, "tests") or [{}]
        info = field_of(tests[0], "test_info") or {}
        out.setdefault(info.get("difficulty_type", "unknown"), []).append(r)
    return out


CATEGORIES: dict[str, Callable[..., Any]] = {"evoeval": evoeval_categories, "mhpp": mhpp_categories}


def source(dataset: str) -> str | None:
    """The source for a dataset (its canonical name), or None when it has none."""
    categories = CATEGORIES.get(dataset)
    if categories is None:
        return None
    named = re.sub(
        r"^def \w+\(", "def get_categories(", inspect.getsource(categories)
    )  # its name there
    parts: list[Callable[..., Any]] = [field_of, pass_at_k_v2, get_metrics]
    return "\n\n".join([*(inspect.getsource(f) for f in parts), named])
