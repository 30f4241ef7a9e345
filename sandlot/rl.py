"""verl rewards through sandlot: the scores of verl's `sandbox_fusion` reward, one request per call.

As verl's `custom_reward_function` (`path`: this file, `python -c 'import sandlot.rl as m;
print(m.__file__)'`):

    reward:
      custom_reward_function:
        path: .../sandlot/rl.py
        name: compute_score            # or compute_score_batch, with reward_manager: batch
        reward_kwargs: {sandbox_url: "http://127.0.0.1:8080"}

The server comes from the keyword `sandbox_url` (or `sandbox_fusion_url`; one URL, several
separated by commas, or a list: requests then go to the least busy), else `$SANDBOX_FUSION_URL`.

The scores are the ones verl's own reward gives the same samples (`default_compute_score` for
codecontests / apps / codeforces / taco): the same code extraction (the last ```python block,
else the first fenced one, else no code: 0), the same wrapper around call-based problems
(`fn_name`: one JSON argument per stdin line, the result printed as verl prints it), the same
comparison (stdout exact but for trailing newlines), the same limits (10 s, 1024 MiB) and the
same score (passed / cases over the first 10, or over all with `continuous=False`). What differs
is how the runs get there: the cases of a sample (or of every sample, in compute_score_batch)
go in one `POST /run_batch`, not one `/run_code` each.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

from sandlot.client import Client

CONTINUOUS_CASES = 10  # verl's continuous score looks at the first ten cases
_ENV = "SANDBOX_FUSION_URL"

# The modules verl's call-based wrapper star-imports, in its order (later names win), and then
# imports by name; a solution may use any of these names without importing them.
_STAR = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
         "statistics", "itertools", "functools", "operator", "io", "sys", "json", "builtins",
         "typing")  # fmt: skip
_PRELUDE = (
    "import traceback\n"
    + "".join(f"from {m} import *\n" for m in _STAR)
    + "".join(f"import {m}\n" for m in _STAR[:-2])
)
# After the solution: read the arguments, call, print the result as verl does. Any failure is
# written to stderr and the program still exits 0 with no output, as under verl.
_CALL = """

def __sandlot_verl_call():
    raw = sys.stdin.read()
    args = []
    if raw.strip():
        try:
            args = [json.loads(line) for line in raw.split("\\n")]
        except json.JSONDecodeError as exc:
            sys.stderr.write(f"an argument is not JSON: {{exc}}\\n")
            return None, True
    try:
        scope = globals()
        target = None
        if {name!r} in scope:
            target = scope[{name!r}]
        elif "Solution" in scope:
            target = getattr(scope["Solution"](), {name!r})
        if not target:
            sys.stderr.write("no function or method named " + {name!r} + "\\n")
            return None, True
        return target(*args), False
    except Exception:
        sys.stderr.write(traceback.format_exc())
        return None, True


if __name__ == "__main__":
    __result, __failed = __sandlot_verl_call()
    if not __failed:
        if isinstance(__result, (dict, list, tuple, bool)) or __result is None:
            print(json.dumps(__result))
        else:
            print(str(__result))
"""

# One client per server list, kept for the process's life: a trainer calls compute_score for
# every sample, and its connections are reused.
_clients: dict[tuple[str, ...], Client] = {}
_lock = threading.Lock()


def _close_clients() -> None:
    for client in _clients.values():
        client.close()
    _clients.clear()


def _forget_inherited() -> None:
    """In a forked child: the parent's connections are not ours to use, and the lock may have
    been held by a thread that does not exist here."""
    global _clients, _lock
    _clients, _lock = {}, threading.Lock()


atexit.register(_close_clients)
os.register_at_fork(after_in_child=_forget_inherited)


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **kwargs: Any,
) -> float:
    """One sample's score in [0, 1], as verl's sandbox_fusion reward computes it."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info],
                               **kwargs)[0]  # fmt: skip


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    *,
    sandbox_url: str | Sequence[str] | None = None,
    sandbox_fusion_url: str | Sequence[str] | None = None,
    memory_limit_mb: int = 1024,
    timeout: float = 10,
    continuous: bool = True,
    language: str = "python",
    **_: Any,
) -> list[float]:
    """Every sample's score, from one POST /run_batch (the form verl's batch reward manager
    calls: lists in, a list of scores out, in order)."""
    passed = [0] * len(solution_strs)
    totals = [0] * len(solution_strs)
    items: list[dict] = []
    owners: list[int] = []
    for n, (completion, truth) in enumerate(zip(solution_strs, ground_truths, strict=True)):
        for item in verl_items(completion, truth, continuous, language) or ():
            item.update(id=len(items), run_timeout=timeout, compile_timeout=timeout,
                        memory_limit_MB=memory_limit_mb)  # fmt: skip
            items.append(item)
            owners.append(n)
    if items:
        result = _client(sandbox_url or sandbox_fusion_url).run_batch(items)
        for owner, scored in zip(owners, result.results, strict=True):
            passed[owner] += sum(case.verdict == "accepted" for case in scored.cases)
            totals[owner] += len(scored.cases)
    return [p / t if t else 0.0 for p, t in zip(passed, totals, strict=True)]


def verl_items(
    completion: str, ground_truth: Any, continuous: bool = True, language: str = "python"
) -> list[dict[str, Any]] | None:
    """The /run_batch items whose cases give a sample verl's score, or None when verl scores
    it 0 without running anything (no code block; test cases that are not JSON, lack a side or
    whose counts differ)."""
    code = verl_code(completion)
    tests = ground_truth
    if code is None:
        return None
    if not isinstance(tests, dict):
        try:
            tests = json.loads(tests)
        except (TypeError, ValueError):
            return None
    if not isinstance(tests, dict):
        return None
    asserts = tests.get("assert_case")
    if isinstance(asserts, list):
        inputs = tests.get("inputs", ["" for _ in asserts])
        outputs = tests.get("outputs", [None for _ in asserts])
    elif "inputs" in tests and "outputs" in tests:
        inputs, outputs = tests["inputs"], tests["outputs"]
        asserts = [""] * len(inputs)
    else:
        return None
    if not inputs or len(inputs) != len(outputs) or len(asserts) != len(inputs):
        return None
    count = min(len(inputs), CONTINUOUS_CASES) if continuous else len(inputs)
    wrap = tests.get("fn_name") and language == "python"
    by_program: dict[str, list[dict[str, str]]] = {}
    runs_only = []  # verl passes a case with no expected output when its run succeeds
    for stdin, expected, statement in list(zip(inputs, outputs, asserts, strict=True))[:count]:
        program = f"{code}\n\n{statement}"
        if wrap:
            program = _PRELUDE + program + _CALL.format(name=str(tests["fn_name"]))
        if expected is None:
            runs_only.append(program)
        else:
            case = {"stdin": "" if stdin is None else str(stdin), "expected_stdout": str(expected)}
            by_program.setdefault(program, []).append(case)
    items = [{"code": program, "language": language, "checker": "verl", "test_cases": cases}
             for program, cases in by_program.items()]  # fmt: skip
    if runs_only:  # each program whole, as an assert of an empty base
        items.append({"code": "", "language": language, "asserts": runs_only})
    return items


def verl_code(completion: str) -> str | None:
    """The code verl's sandbox_fusion reward takes from a completion, or None for none."""
    if "```python" in completion:
        return completion.split("```python")[-1].split("```")[0]
    if "```" not in completion:
        return None
    solution = completion.split("```")[1]
    if "\n" in solution:
        first, rest = solution.split("\n", 1)
        if first.strip().isalpha():  # a language tag
            solution = rest
    return solution


def _client(url: str | Sequence[str] | None) -> Client:
    urls = _urls(url or os.environ.get(_ENV) or "")
    if not urls:
        raise ValueError(f"no sandbox server: pass sandbox_url or set ${_ENV}")
    with _lock:
        if urls not in _clients:
            _clients[urls] = Client(list(urls))
        return _clients[urls]


def _urls(value: str | Sequence[str]) -> tuple[str, ...]:
    parts = value.split(",") if isinstance(value, str) else list(value)
    out = []
    for part in parts:
        url = part.strip().rstrip("/")
        for suffix in ("/run_code", "/run_batch"):
            url = url.removesuffix(suffix)
        if url:
            out.append(url)
    return tuple(out)
