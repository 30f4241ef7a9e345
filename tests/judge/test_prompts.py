"""Prompts are SandboxFusion's, byte for byte, for every shipped row it has a prompt for.

`sandboxfusion_prompts.json.gz` holds, per SandboxFusion table and config variant, the first 8
hex digits of the sha256 of each prompt that SandboxFusion's own prompt builders (commit 469de08)
give for its sample rows (the same rows sandlot ships), with the ids in order. It was made by
running those builders on the sample files outside this repository; nothing of their code is
here. A mismatch names the table, the variant and the first ids whose prompt differs.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sandlot.judge import Datasets
from sandlot.judge.engine import Judge
from sandlot.judge.plans import JudgeConfig
from sandlot.languages import LANGUAGES, Registry

EXPECTED: dict[str, Any] = json.loads(
    gzip.decompress((Path(__file__).parent / "sandboxfusion_prompts.json.gz").read_bytes())
)
JUDGE = Judge(Datasets(Registry(LANGUAGES, "/opt/sandlot")), executor=lambda: None)  # type: ignore[arg-type, return-value]
# SandboxFusion tables sandlot does not serve, and why.
NOT_SERVED = {
    **{f"multiple_{kind}{ext}": "no Julia or Swift toolchain is installable here (Debian 12)"
       for kind in ("", "mbpp_") for ext in ("jl", "swift")},
}  # fmt: skip
CASES = [(t, v) for t, entry in sorted(EXPECTED.items()) if t not in NOT_SERVED
         for v in sorted(entry["variants"])]  # fmt: skip


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def config(raw: dict[str, Any]) -> JudgeConfig:
    return JudgeConfig(**{**raw, "extra": dict(raw.get("extra") or {})})


@pytest.mark.parametrize(("table", "variant"), CASES)
def test_prompt_is_sandboxfusions(table: str, variant: str) -> None:
    entry = EXPECTED[table]
    want = entry["variants"][variant]
    cfg = config(want["config"])
    ours = {str(p["id"]): p["prompt"] for p in JUDGE.prompts(table, cfg)}
    hashes = [want["sha256_8"][i : i + 8] for i in range(0, len(want["sha256_8"]), 8)]
    wrong = [pid for pid, h in zip(entry["ids"], hashes, strict=True)
             if str(pid) not in ours or digest(ours[str(pid)]) != h]  # fmt: skip
    assert wrong == [], f"{len(wrong)} of {len(hashes)} prompts differ, first: {wrong[:5]}"


def test_cruxeval_without_a_mode_lists_every_input_prompt_first() -> None:
    prompts = JUDGE.prompts("cruxeval", JudgeConfig(), limit=3)
    assert [p["labels"] for p in prompts] == [{"mode": "input"}] * 3 + [{"mode": "output"}] * 3
    assert [p["id"] for p in prompts[:3]] == [p["id"] for p in prompts[3:]]


def test_every_shipped_sandboxfusion_table_is_checked() -> None:
    # a table sandlot ships from SandboxFusion's samples has its prompts compared above
    shipped = {name for name, spec in JUDGE.datasets.specs.items()
               if spec.file.startswith("sf_") or name.startswith("multiple_")}  # fmt: skip
    # SandboxFusion registers these tables with a class that cannot read their rows (KeyError)
    assert shipped - set(EXPECTED) == {"shadow_humaneval_python", "bigcodebench"}
    assert set(EXPECTED) - set(JUDGE.datasets.specs) == set(NOT_SERVED)
