"""Test drivers appended to a solution, as program text. They run in the jail, never here.

What they test against is in their text, which a sealed program's driver holds in memory only
(sandlot/executor/guards): never in a work dir file the answer could read.
"""

from __future__ import annotations

import json
from typing import Any

# Both harnesses below own the run: they take every function they use (json's, math's, the
# built-ins) before the answer exists, then load the answer (`code.py`) into a scope of its own
# and call it. What the answer patches afterwards (`math.isclose`, `json.dumps`, `builtins.float`,
# `sys.exit`, the `__main__` module) is not what they hold, and what it returns is compared as
# plain data (JSON, or text), never by a method of its making.

# PAL-math: `solution()` against the ground truth, numbers compared with tolerance.
_PALMATH = """
def __sandlot_palmath():
    import math

    isclose, float_, str_, open_, compile_, exec_ = (math.isclose, float, str, open, compile,
                                                     exec)
    value_error, type_error = ValueError, TypeError
    gt = GROUND_TRUTH
    with open_("code.py") as f:
        source = f.read()
    scope = {"__name__": "__main__"}
    exec_(compile_(source, "code.py", "exec"), scope)
    got = str_(scope["solution"]())

    def number(text):
        try:
            return float_(text.replace(",", "").strip().rstrip("."))
        except (type_error, value_error):
            return None

    a, b = number(got), number(str_(gt))
    if a is not None and b is not None:
        ok = isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)
    else:
        ok = got.strip() == str_(gt).strip()
    if not ok:
        raise AssertionError(f"expected {gt!r}, got {got!r}")

__sandlot_palmath()
"""

# LiveCodeBench, both kinds of problem, in one process, as SandboxFusion runs LCB's own harness:
# the answer (code.py) is compiled once under LCB's prelude of imports, then each case runs in
# turn, functional ones by calling the method, stdin ones by running the module with stdin and
# stdout redirected (a SystemExit ends that case's program, as a real exit would). At the first
# failure it prints LCB's metadata (error_code -1 compile, -2 "Wrong Answer", -3 "Time Limit
# Exceeded", -4 "Runtime Error", with the clipped input, expected and actual output) and exits
# -1; SandboxFusion's users read that text in exec_info's stdout. Outputs compare as LCB's do in
# short: equal values (as JSON); for stdin, the non-blank stripped lines, else numbers within
# 1e-5.
LCB_PRELUDE_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy",
                       "math", "random", "statistics", "itertools", "functools", "operator",
                       "io", "sys", "json")  # fmt: skip
_LCB = """
def __sandlot_lcb():
    import io, json, math, os, signal, sys

    loads, dumps, isclose, write = json.loads, json.dumps, math.isclose, os.write
    alarm_at, set_signal = signal.alarm, signal.signal
    wrapper, buffer = io.TextIOWrapper, io.BytesIO
    sys_exit, case_error, any_error = SystemExit, Exception, BaseException
    value_error, float_, str_, repr_, int_, len_ = ValueError, float, str, repr, int, len
    zip_, all_, open_, compile_, exec_, getattr_ = zip, all, open, compile, exec, getattr

    modules = @MODULES@
    prelude = "".join(f"from {m} import *\\n" for m in modules + ("builtins", "typing"))
    prelude += "".join(f"import {m}\\n" for m in modules) + "sys.setrecursionlimit(6*10**5)\\n"

    class CaseTimeout(Exception):
        pass

    def alarm(signum, frame):
        raise CaseTimeout()

    def clip(text, length=300):
        if len_(text) <= length:
            return text
        return text[: length // 2] + "...(truncated) ..." + text[-length // 2 :]

    def fail(meta):
        write(1, (str_(meta) + "\\n").encode())
        raise sys_exit(-1)

    def same_lines(got, expected):
        a = [x.strip() for x in got.splitlines() if x.strip()]
        b = [x.strip() for x in expected.split("\\n") if x.strip()]
        if a == b:
            return True
        try:
            x = [float_(t) for line in a for t in line.split()]
            y = [float_(t) for line in b for t in line.split()]
        except value_error:
            return False
        return len_(x) == len_(y) and all_(isclose(u, v, rel_tol=1e-5, abs_tol=1e-8)
                                           for u, v in zip_(x, y))

    spec = loads(CASES)
    with open_("code.py") as f:
        source = f.read()
    limit = int_(spec["timeout"])
    name = spec.get("fn_name")
    set_signal(signal.SIGALRM, alarm)
    try:
        program = compile_(prelude + source, "code.py", "exec")
    except (SyntaxError, value_error) as e:
        fail({"error": repr_(e), "error_code": -1, "error_message": "Compilation Error"})
    if name:
        scope = {"__name__": "code"}
        try:
            alarm_at(limit)
            exec_(program, scope)
            alarm_at(0)
            if "class Solution" in source:
                target = getattr_(scope["Solution"](), name)
            else:
                target = scope[name]
        except any_error as e:
            alarm_at(0)
            fail({"error": repr_(e), "error_code": -1, "error_message": "Compilation Error"})
    real_in, real_out = sys.stdin, sys.stdout
    for raw_in, raw_out in zip_(spec["inputs"], spec["outputs"]):
        shown = {"inputs": clip(raw_in), "expected": clip(raw_out, 200)}
        try:
            alarm_at(limit)
            if name:
                args = [loads(line) for line in raw_in.split("\\n")]
                got = target(*args)
                alarm_at(0)
                # as JSON and back: plain data, compared by no method of the answer's
                actual = dumps(got)
                ok = loads(actual) == loads(raw_out)
            else:
                sys.stdin = wrapper(buffer(raw_in.encode()), encoding="utf-8")
                out = sys.stdout = wrapper(buffer(), encoding="utf-8")
                try:
                    exec_(program, {"__name__": "__main__"})
                except sys_exit:
                    pass
                alarm_at(0)
                out.flush()
                actual = out.buffer.getvalue().decode(errors="replace")
                ok = same_lines(actual, raw_out)
        except CaseTimeout as e:
            sys.stdout = real_out
            fail({"error": repr_(e), "error_code": -3, "error_message": "Time Limit Exceeded",
                  **shown})
        except case_error as e:
            alarm_at(0)
            sys.stdout = real_out
            fail({"error": repr_(e), "error_code": -4, "error_message": "Runtime Error", **shown})
        finally:
            sys.stdin, sys.stdout = real_in, real_out
        if not ok:
            fail({"output": clip(actual, 200), **shown, "error_code": -2,
                  "error_message": "Wrong Answer"})

__sandlot_lcb()
""".replace("@MODULES@", repr(LCB_PRELUDE_MODULES))


def palmath(truth: Any) -> str:
    return _PALMATH.replace("GROUND_TRUTH", repr(truth))


def lcb(spec: dict[str, Any]) -> str:
    """The LiveCodeBench harness with its cases (`fn_name`, `inputs`, `outputs`, `timeout`)."""
    return _LCB.replace("loads(CASES)", f"loads({json.dumps(spec)!r})", 1)


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
