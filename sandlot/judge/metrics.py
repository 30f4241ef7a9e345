"""pass@k with the unbiased estimator (Chen et al. 2021): 1 - C(n-c, k) / C(n, k) per problem."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) is correct."""
    if n - c < k:
        return 1.0
    # The product form avoids huge binomials: C(n-c, k)/C(n, k) = prod (1 - k/i), i = n-c+1..n.
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def counts(records: Iterable[tuple[object, bool]]) -> dict[str, tuple[int, int]]:
    """(problem id, accepted) pairs -> {id: (samples, accepted)}."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pid, accepted in records:
        entry = out[str(pid)]
        entry[0] += 1
        entry[1] += int(bool(accepted))
    return {k: (v[0], v[1]) for k, v in out.items()}


def summarize(records: Iterable[tuple[object, bool]], ks: Iterable[int]) -> dict[str, float]:
    """Mean pass@k over problems, for each k no larger than every problem's sample count."""
    per = counts(records)
    if not per:
        return {}
    fewest = min(n for n, _ in per.values())
    out = {}
    for k in sorted(set(ks)):
        if 1 <= k <= fewest:
            out[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in per.values()) / len(per)
    return out
