"""Test drivers appended to a solution, as program text. They run in the jail, never here."""

from __future__ import annotations

# PAL-math: `solution()` against the ground truth in answer.json, numbers compared with tolerance.
PALMATH = """
def __sandlot_palmath():
    import json, math
    gt = json.load(open("answer.json"))["gt"]
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

# LiveCodeBench functional (LeetCode-style) problems: every case in one process.
LCB_FUNCTION = """
def __sandlot_lcb():
    import json
    spec = json.load(open("cases.json"))
    name = spec["fn_name"]
    g = globals()
    target = getattr(g["Solution"](), name) if "Solution" in g else g[name]
    for n, (inp, out) in enumerate(zip(spec["inputs"], spec["outputs"])):
        args = [json.loads(line) for line in inp.split("\\n") if line.strip()]
        expected = json.loads(out)
        got = target(*args)
        if isinstance(got, tuple):
            got = list(got)
        assert got == expected, f"case {n}: expected {expected!r}, got {got!r}"

__sandlot_lcb()
"""

# JavaScript test files of HumanEval-X use console.assert, which only logs: make it fail the run.
JS_STRICT_ASSERT = (
    "console.assert = (cond, ...msg) => { if (!cond) { "
    "throw new Error('Assertion failed' + (msg.length ? ': ' + msg.join(' ') : '')); } };\n"
)
