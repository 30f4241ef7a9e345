"""RL-style samples over the shipped CodeContests and LiveCodeBench rows: (completion, tests)
pairs with correct and wrong solutions, as a trainer would score them. Used by the RL tests and
by bench/rl.py. The solutions are written here; the rows bring only statements and tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "sandlot" / "judge" / "data"


def _rows(name: str) -> dict[int, dict[str, Any]]:
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt") as f:
        return {row["id"]: row for row in map(json.loads, f)}


def fence(code: str, tag: str = "python") -> str:
    return f"Here is my solution.\n```{tag}\n{code.strip()}\n```\n"


# CodeContests id -> (a correct solution, wrong ones)
CODE_CONTESTS = {
    3: (  # Codehorses T-shirts: the sizes of one list not matched in the other
        "import sys\nfrom collections import Counter\nd = sys.stdin.read().split()\nn = int(d[0])\n"
        "a, b = Counter(d[1:1 + n]), Counter(d[1 + n:1 + 2 * n])\nprint(n - sum((a & b).values()))",
        ["import sys\nd = sys.stdin.read().split()\nprint(len(set(d[1:])) - 1)", "print(0)"],
    ),
    14: (  # Kill 'Em All: distinct positions from the largest, while still right of the traps
        "import sys\ndata = sys.stdin.buffer.read().split()\nq = int(data[0]); p = 1; out = []\n"
        "for _ in range(q):\n    n, r = int(data[p]), int(data[p + 1]); p += 2\n"
        "    xs = sorted(set(map(int, data[p:p + n])), reverse=True); p += n\n    k = 0\n"
        "    for x in xs:\n        if x - k * r > 0:\n            k += 1\n        else:\n"
        "            break\n    out.append(k)\nprint('\\n'.join(map(str, out)))",
        [
            "import sys\ndata = sys.stdin.buffer.read().split()\nprint(data[1].decode())",
            "import sys\nsys.stdin.read()\nraise SystemExit(3)",
        ],
    ),
    17: (  # Correct Solution?: the smallest number from the digits, no leading zero
        "n = input().strip(); m = input().strip()\nd = sorted(n)\nif d[0] == '0' and len(d) > 1:\n"
        "    i = next(i for i, c in enumerate(d) if c != '0')\n    d[0], d[i] = d[i], d[0]\n"
        "print('OK' if ''.join(d) == m else 'WRONG_ANSWER')",
        [
            "n = input(); m = input()\nprint('OK' if sorted(n) == sorted(m) else 'WRONG_ANSWER')",
            "print('OK'",
        ],
    ),
}

# LiveCodeBench id -> (a correct solution, wrong ones); id 10 is call-based (class Solution)
LIVE_CODE_BENCH = {
    1: (
        "t = int(input())\nfor _ in range(t):\n    s = input().strip()\n"
        "    print('YES' if sum(a != b for a, b in zip(s, 'abc')) <= 2 else 'NO')",
        ["t = int(input())\nfor _ in range(t):\n    input()\n    print('YES')"],
    ),
    10: (
        "class Solution:\n    def countSeniors(self, details: List[str]) -> int:\n"
        "        return sum(int(d[11:13]) > 60 for d in details)",
        [
            "class Solution:\n    def countSeniors(self, details: List[str]) -> int:\n"
            "        return sum(int(d[11:13]) >= 60 for d in details)",
            "class Solution:\n    def countSeniors(self, details):\n        return details[99]",
        ],
    ),
    191: (
        "n = int(input()); s = input().strip()\nt, a = s.count('T'), s.count('A')\n"
        "print('T' if t > a else 'A' if a > t else ('A' if s[-1] == 'T' else 'T'))",
        ["s = [input(), input()][1]\nprint('T' if s.count('T') >= s.count('A') else 'A')"],
    ),
}


def code_contests_tests(problem: int) -> dict[str, list[str]]:
    cases = json.loads(_rows("sf_code_contests")[problem]["test"])
    return {"inputs": [c["input"]["stdin"] for c in cases],
            "outputs": [c["output"]["stdout"] for c in cases]}  # fmt: skip


def live_code_bench_tests(problem: int) -> dict[str, Any]:
    return dict(_rows("sf_live_code_bench_v1")[problem]["test"])


def samples(cases_per_problem: int | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """(data_source, completion, ground_truth) for every solution above, correct and wrong."""
    out = []
    for table, tests_of, source in ((CODE_CONTESTS, code_contests_tests, "codecontests"),
                                    (LIVE_CODE_BENCH, live_code_bench_tests, "taco")):  # fmt: skip
        for problem, (right, wrongs) in table.items():
            tests = tests_of(problem)
            if cases_per_problem is not None:
                tests = {**tests, "inputs": tests["inputs"][:cases_per_problem],
                         "outputs": tests["outputs"][:cases_per_problem]}  # fmt: skip
            for code in (right, *wrongs):
                out.append((source, fence(code), tests))
    return out
