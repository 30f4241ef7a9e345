"""Replays every SandboxFusion sample row that carries SandboxFusion's own reference verdict and
reports agreement per table, so that the next drift from SandboxFusion shows by itself.

A row's reference verdict is what SandboxFusion's test suite expects of the row's reference
answer (its samples' README): accepted, except the negative controls (id >= 10000 in the v2
tables) and the `exit(0)` placeholders its anti-hack rule rejects in MBXP's python and cpp.
Rows where sandlot disagrees on purpose are listed in DEVIATIONS with the reason; any other
disagreement, or a listed one that went away, fails the test with the per-table report.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.assemble import labels
from sandlot.judge.datasets import row_id
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
# (table, config.extra.mode or None, ids to replay or None for all)
TABLES = [
    ("humaneval_python", None, None), ("mbpp", None, range(11, 31)),
    ("aider_benchmark_v1", None, None), ("evoeval", None, None), ("bigcodebench", None, None),
    ("palmath", None, None), ("ncb_python_en", None, None), ("ncb_python_zh", None, None),
    ("ncb_java_en", None, None), ("ncb_java_zh", None, None), ("verilogeval_human", None, None),
    ("verilogeval_machine", None, None), ("mbxp_v1_en", None, None), ("mbxp_v2_en", None, None),
    ("humanevalds_v1_en", None, None), ("humanevalds_v2_en", None, None),
    ("repobench_c_python", None, None), ("repobench_c_java", None, None),
    *((t, m, ids) for t, ids in (("cruxeval", [f"sample_{i}" for i in range(20)]),
                                 ("cruxeval_x", None)) for m in ("output", "input")),
]  # fmt: skip
# Where sandlot's verdict differs from SandboxFusion's on purpose or by what this machine lacks.
EXITS_EARLY = "a placeholder that exits 0 before the tests: the run has no seal"
NO_JULIA_SWIFT = "julia and swift have no Debian 12 package: not installed here"
DEVIATIONS = {
    **{("humanevalds_v1_en", i): EXITS_EARLY
       for i in (161, 162, 628, 629, 788, 789, 949, 950, 1109, 1110, 1434, 1435, 1595, 1596, 1756,
                 1757, 1912, 1913, 2072, 2073)},
    **{("mbxp_v1_en", i): EXITS_EARLY
       for i in (1772, 1773, 2230, 2231, 3148, 3149, 3606, 3607, 4064, 4065)},
    ("mbxp_v2_en", 0): EXITS_EARLY + " (C#'s Environment.Exit(0))",
    **{("mbxp_v1_en", i): EXITS_EARLY + " (Scala's sys.exit() in `object Main extends App`)"
       for i in (4522, 4523)},
    ("humanevalds_v1_en", 470): NO_JULIA_SWIFT, ("humanevalds_v1_en", 471): NO_JULIA_SWIFT,
    ("humanevalds_v2_en", 4): NO_JULIA_SWIFT,
    **{(f"cruxeval_x/{m}", i): NO_JULIA_SWIFT for m in ("output", "input")
       for i in ("julia_0", "swift_0")},
    **{("bigcodebench", f"BigCodeBench/{i}"): "its tests fetch URLs: the box has no network"
       for i in (101, 1005, 1006, 1012)},
    ("verilogeval_human", 144): "Icarus Verilog 11 (Debian 12) cannot elaborate its casts",
    ("verilogeval_human", 150): "Icarus Verilog 11 (Debian 12) cannot elaborate its casts",
}  # fmt: skip


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=1800) as c:
        yield c


def inconclusive(result: dict) -> bool:
    """A run that hit a time limit (compiling or running) says nothing about agreement: on a
    busy machine a JVM compile or BigCodeBench's 10! permutations can outlast the limit."""
    bare_compile_error = result["verdict"] == "compile_error" and result["reason"] in (
        "compile_error", None)  # fmt: skip
    return result["verdict"] == "time_limit_exceeded" or bare_compile_error


def sandboxfusion_verdict(table: str, row: dict) -> bool:
    pid = row.get("id")
    if table.endswith("_v2_en") and isinstance(pid, int) and pid >= 10000:
        return False  # deliberate negative controls
    lang = labels(row).get("execution_language")
    solution = str(row.get("canonical_solution") or "")
    return not (table.startswith(("mbxp", "humanevalds")) and lang in ("python", "cpp")
                and "exit(0)" in solution)  # fmt: skip


@pytest.mark.parametrize(("table", "mode", "ids"), TABLES,
                         ids=[f"{t}/{m}" if m else t for t, m, _ in TABLES])  # fmt: skip
def test_agreement_with_sandboxfusion(
    api: httpx.Client, table: str, mode: str | None, ids: Any
) -> None:
    spec = DATASETS.spec(table)
    rows = [r for r in DATASETS.get(table).rows if ids is None or row_id(r, spec) in ids]
    samples = [{"id": row_id(r, spec), "completion": reference(spec.family, r, mode or "")}
               for r in rows]  # fmt: skip
    body = {"dataset": table, "samples": samples, "k": [1],
            "config": {"extra": {"mode": mode}} if mode else {}}  # fmt: skip
    r = api.post("/evaluate", json=body)
    assert r.status_code == 200, r.text[:1000]
    got = {str(x["id"]): x for x in r.json()["results"]}
    name = f"{table}/{mode}" if mode else table
    unexplained, gone, agree, unsure = [], [], 0, []
    for row in rows:
        pid = row_id(row, spec)
        mine = got[str(pid)]
        same = mine["accepted"] == sandboxfusion_verdict(table, row)
        if not same and inconclusive(mine):
            unsure.append(pid)
            continue
        agree += same
        listed = (name, pid) in DEVIATIONS
        if not same and not listed:
            unexplained.append(f"  {pid}: {mine['verdict']}: {(mine['reason'] or '')[-300:]!r}")
        if same and listed:
            gone.append(pid)
    line = f"{name}: {agree}/{len(rows)} agree with SandboxFusion's reference verdicts"
    if unsure:
        line += f" ({len(unsure)} hit a time limit here: {unsure})"
    print(f"\n{line}")
    if unexplained or gone:
        pytest.fail(f"{line}\nunexplained disagreements:\n" + "\n".join(unexplained)
                    + f"\nlisted deviations that now agree: {gone}", pytrace=False)  # fmt: skip
