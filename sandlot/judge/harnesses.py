"""Test drivers appended to a solution, as program text. They run in the jail, never here.

What they test against is in their text, which a sealed program's driver holds in memory only
(sandlot/executor/guards): never in a work dir file the answer could read.
"""

from __future__ import annotations

import json
from typing import Any

# PAL-math: `solution()` against the ground truth, numbers compared with tolerance.
_PALMATH = """
def __sandlot_palmath():
    import math
    gt = GROUND_TRUTH
    got = solution()

    def number(value):
        try:
            return float(str(value).replace(",", "").strip().rstrip("."))
        except (TypeError, ValueError):
            return None

    a, b = number(got), number(gt)
    if a is not None and b is not None:
        ok = math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)
    else:
        ok = str(got).strip() == str(gt).strip()
    assert ok, f"expected {gt!r}, got {got!r}"

__sandlot_palmath()
"""

# LiveCodeBench, both kinds of problem, in one process, as SandboxFusion runs LCB's own harness:
# the answer (code.py) is compiled once under LCB's prelude of imports, then each case runs in
# turn, functional ones by calling the method, stdin ones by running the module with stdin and
# stdout redirected (a SystemExit ends that case's program, as a real exit would). At the first
# failure it prints LCB's metadata (error_code -1 compile, -2 "Wrong Answer", -3 "Time Limit
# Exceeded", -4 "Runtime Error", with the clipped input, expected and actual output) and exits
# -1; SandboxFusion's users read that text in exec_info's stdout. Outputs compare as LCB's do in
# short: equal values; for stdin, the non-blank stripped lines, else numbers within 1e-5.
LCB_PRELUDE_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy",
                       "math", "random", "statistics", "itertools", "functools", "operator",
                       "io", "sys", "json")  # fmt: skip
_LCB = """
import io, json, math, signal, sys

MODULES = @MODULES@
PRELUDE = "".join(f"from {m} import *\\n" for m in MODULES + ("builtins", "typing"))
PRELUDE += "".join(f"import {m}\\n" for m in MODULES) + "sys.setrecursionlimit(6*10**5)\\n"


class CaseTimeout(Exception):
    pass


def alarm(signum, frame):
    raise CaseTimeout()


def clip(text, length=300):
    if len(text) <= length:
        return text
    return text[: length // 2] + "...(truncated) ..." + text[-length // 2 :]


def fail(meta):
    print(meta)
    sys.stdout.flush()
    sys.exit(-1)


def same_lines(got, expected):
    a = [x.strip() for x in got.splitlines() if x.strip()]
    b = [x.strip() for x in expected.split("\\n") if x.strip()]
    if a == b:
        return True
    try:
        x = [float(t) for line in a for t in line.split()]
        y = [float(t) for line in b for t in line.split()]
    except ValueError:
        return False
    return len(x) == len(y) and all(math.isclose(u, v, rel_tol=1e-5, abs_tol=1e-8)
                                    for u, v in zip(x, y))


def main():
    spec = json.loads(CASES)
    source = open("code.py").read()
    limit = int(spec["timeout"])
    name = spec.get("fn_name")
    signal.signal(signal.SIGALRM, alarm)
    try:
        program = compile(PRELUDE + source, "code.py", "exec")
    except (SyntaxError, ValueError) as e:
        fail({"error": repr(e), "error_code": -1, "error_message": "Compilation Error"})
    if name:
        scope = {"__name__": "code"}
        try:
            signal.alarm(limit)
            exec(program, scope)
            signal.alarm(0)
            if "class Solution" in source:
                target = getattr(scope["Solution"](), name)
            else:
                target = scope[name]
        except BaseException as e:
            signal.alarm(0)
            fail({"error": repr(e), "error_code": -1, "error_message": "Compilation Error"})
    for raw_in, raw_out in zip(spec["inputs"], spec["outputs"]):
        shown = {"inputs": clip(raw_in), "expected": clip(raw_out, 200)}
        real_out = sys.stdout
        try:
            signal.alarm(limit)
            if name:
                args = [json.loads(line) for line in raw_in.split("\\n")]
                got = target(*args)
                signal.alarm(0)
                expected = json.loads(raw_out)
                actual = json.dumps(got)
                ok = (list(got) if isinstance(got, tuple) else got) == expected
            else:
                sys.stdin = io.TextIOWrapper(io.BytesIO(raw_in.encode()), encoding="utf-8")
                sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
                try:
                    exec(program, {"__name__": "__main__"})
                except SystemExit:
                    pass
                signal.alarm(0)
                sys.stdout.flush()
                actual = sys.stdout.buffer.getvalue().decode(errors="replace")
                ok = same_lines(actual, raw_out)
        except CaseTimeout as e:
            sys.stdout = real_out
            fail({"error": repr(e), "error_code": -3, "error_message": "Time Limit Exceeded",
                  **shown})
        except Exception as e:
            signal.alarm(0)
            sys.stdout = real_out
            fail({"error": repr(e), "error_code": -4, "error_message": "Runtime Error", **shown})
        finally:
            sys.stdout = real_out
        if not ok:
            fail({"output": clip(actual, 200), **shown, "error_code": -2,
                  "error_message": "Wrong Answer"})


main()
""".replace("@MODULES@", repr(LCB_PRELUDE_MODULES))

# JavaScript test files of HumanEval-X use console.assert, which only logs: make it fail the run.
JS_STRICT_ASSERT = (
    "console.assert = (cond, ...msg) => { if (!cond) { "
    "throw new Error('Assertion failed' + (msg.length ? ': ' + msg.join(' ') : '')); } };\n"
)


def palmath(truth: Any) -> str:
    return _PALMATH.replace("GROUND_TRUTH", repr(truth))


def lcb(spec: dict[str, Any]) -> str:
    """The LiveCodeBench harness with its cases (`fn_name`, `inputs`, `outputs`, `timeout`)."""
    return _LCB.replace("json.loads(CASES)", f"json.loads({json.dumps(spec)!r})", 1)


# Call-based problems (APPS/TACO `fn_name`, LeetCode's `class Solution`): one call per run, its
# arguments on stdin (one JSON value per line), its return value written as JSON to a file that
# the judge compares by value with the expected one, which never enters the box.
CALL_RESULT = ".sandlot_call.json"
CALL = """

def __sandlot_call():
    import json, sys
    name = {fn_name!r}
    scope = globals()
    if name in scope:
        target = scope[name]
    elif "Solution" in scope:
        target = getattr(scope["Solution"](), name)
    else:
        raise NameError(f"no function or Solution method named {{name!r}}")
    args = [json.loads(line) for line in sys.stdin.read().split("\\n") if line.strip()]
    result = target(*args)
    with open({result!r}, "w") as out:
        json.dump(result, out, default=repr)

__sandlot_call()
"""
