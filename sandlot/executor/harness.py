"""Programs that evaluate an `{"input": expr, "expected": expr}` test case after the user's code.

The verdict goes to a file the executor reads back, so the program's own output stays untouched.
Comparison is by value: `expected` is evaluated as an expression in the program's scope; if it is
not a valid expression it is compared with the printed form of the actual value.
"""

from __future__ import annotations

import json

RESULT_FILE = ".sandlot_case.json"

_PYTHON = """

def __sandlot_case():
    import json, math
    actual = eval({input!r}, globals())
    try:
        expected = eval({expected!r}, globals())
    except Exception:
        expected = {expected!r}
        passed = str(actual) == expected or repr(actual) == expected
    else:
        both_num = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in (actual, expected))
        passed = math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12) if both_num \\
            else actual == expected
    with open({result!r}, "w") as f:
        json.dump({{"passed": bool(passed), "actual": repr(actual)}}, f)

__sandlot_case()
"""

_JAVASCRIPT = """
;(function () {{
  const fs = require("fs"), util = require("util");
  const expectedText = {expected};
  const finish = (actual) => {{
    let expected, passed;
    try {{ expected = eval("(" + expectedText + ")"); }} catch (e) {{ expected = undefined; }}
    if (expected === undefined && expectedText.trim() !== "undefined") {{
      passed = String(actual) === expectedText;
    }} else if (typeof actual === "number" && typeof expected === "number") {{
      const scale = Math.max(1, Math.abs(expected));
      passed = actual === expected || Math.abs(actual - expected) <= 1e-9 * scale;
    }} else {{
      passed = util.isDeepStrictEqual(actual, expected);
    }}
    const shown = util.inspect(actual, {{ depth: 6 }});
    fs.writeFileSync({result}, JSON.stringify({{ passed, actual: shown }}));
  }};
  Promise.resolve(eval({input})).then(finish);
}})();
"""

HARNESSES = {"python": _PYTHON, "javascript": _JAVASCRIPT}


def program(harness: str, code: str, input_expr: str, expected: str) -> str:
    template = HARNESSES[harness]
    if harness == "javascript":
        return code + template.format(
            input=json.dumps(input_expr),
            expected=json.dumps(expected),
            result=json.dumps(RESULT_FILE),
        )
    return code + template.format(input=input_expr, expected=expected, result=RESULT_FILE)
