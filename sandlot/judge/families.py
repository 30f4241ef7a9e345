"""Family name -> the assembler that judges its rows, and each family's reference answer."""

from __future__ import annotations

import json
from typing import Any

from sandlot.judge import assemble, assemble_multi, repobench
from sandlot.judge.assemble import Builder, ensure_json

FAMILIES: dict[str, Builder] = {
    "humaneval": assemble.build_humaneval,
    "humaneval_x": assemble_multi.build_humaneval_x,
    "multiple": assemble_multi.build_multiple,
    "mbpp": assemble.build_mbpp,
    "cruxeval": assemble.build_cruxeval,
    "mhpp": assemble.build_mhpp,
    "palmath": assemble.build_palmath,
    "insert": assemble.build_insert,
    "ncb": assemble.build_ncb,
    "verilog": assemble.build_verilog,
    "lcb": assemble.build_lcb,
    "stdio": assemble.build_stdio,
    "aider": assemble_multi.build_aider,
    "user": assemble.build_user,
    "repobench": repobench.build,
}


def reference(family: str, row: dict[str, Any], mode: str = "output") -> str | None:
    """The row's reference solution as a completion, where the data has one."""
    if family == "cruxeval" and "gt" in row:  # CRUXEval-X: what fills the blank to give `gt`
        before, after = row[mode].split("????", 1)
        return f"[ANSWER]{row['gt'][len(before) : len(row['gt']) - len(after)]}[/ANSWER]"
    if family == "cruxeval":
        return (
            f"[ANSWER]{row['output'] if mode == 'output' else 'f(' + row['input'] + ')'}[/ANSWER]"
        )
    if family == "repobench":
        return row["next_line"]
    if family == "mbpp":
        return row.get("code") or row.get("canonical_solution")
    if family == "aider":
        return assemble_multi.reference_completion(row)
    if family == "palmath":
        sol = ensure_json(row.get("canonical_solution"))
        return f"```python\n{sol['code']}\n```" if isinstance(sol, dict) else None
    if family == "insert":
        lang = (ensure_json(row.get("labels")) or {}).get("programming_language", "")
        sol = row.get("canonical_solution")
        return f"```{lang}\n{sol}\n```" if sol else None
    value = row.get("canonical_solution")
    return value if isinstance(value, str) else (json.dumps(value) if value else None)
