"""Dataset families, one row each: what a model is shown for a row, how an answer to it becomes
the program that judges it, the row's reference answer, and what else the family decides.

A dataset (datasets.py) names its family; the judge asks the family, never its name. The name is
what the wire and the docs' integrity table say. Adding a family is one row here, its prompt
builder in prompts.py and its assembler (assemble.py; which extracts the answer, puts it with the
tests, and builds the program's harness and seal as the row's `harness` says, and its
post-checks), the integrity rows of the languages it judges differently from their own (their
texts in integrity.py), plus its tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sandlot.judge import assemble, assemble_multi, prompts, repobench
from sandlot.judge.assemble import Builder, ensure_json
from sandlot.judge.integrity import (
    AIDER_CATCH2,
    AIDER_GO_TEST,
    AIDER_JEST,
    AIDER_PYTEST,
    AIDER_RUST,
    CRUXEVAL,
    INSERT_PYTHON,
    NCB_PYTEST,
    NONE,
    OUTPUT,
    REPOBENCH,
    SPLIT_MANAGED,
    SPLIT_NATIVE,
    VERILOG,
    ByLanguage,
)
from sandlot.judge.plans import JudgeConfig

if TYPE_CHECKING:
    from sandlot.judge.datasets import DatasetSpec

Row = dict[str, Any]
# (dataset, row, config) -> the prompt; a family with modes finds its mode in config.extra.
Prompter = Callable[["DatasetSpec", Row, JudgeConfig], str]


def _canonical(row: Row, mode: str) -> str | None:
    value = row.get("canonical_solution")
    return value if isinstance(value, str) else (json.dumps(value) if value else None)


class Harness(StrEnum):
    """What runs a family's tests around the answer and writes the seal. Its row says which; its
    assembler builds it (test_families.py holds every shipped row's program to the row)."""

    # The executor's Python driver: it compiles the answer on its own, runs the tests' text
    # after it (the row's, or a harness of the family's from harnesses.py) and seals at its end.
    PYTHON_DRIVER = "python-driver"
    # The answer's language's row (dialects.py): its split, script harness, guard in the tests'
    # text or driver, its test framework's hook, or nothing where it has none.
    LANGUAGE = "language"
    # The test framework's hook (sandlot's pytest plugin, JUnit's listener), whose count the
    # judge holds against the tests' text.
    FRAMEWORK = "framework"
    # Nothing in the box: the judge reads the verdict outside it (each case's output, a
    # testbench's summary line, a line compared token by token).
    OUTSIDE = "outside"


@dataclass(frozen=True, slots=True, eq=False)
class Family:
    name: str  # as the wire and the integrity table name it
    prompt: Prompter
    # (row, completion, config, the dataset's params) -> the program: the answer extracted,
    # put with the tests, with its harness, seal and post-checks (assemble.py)
    assemble: Builder
    # What runs its tests around the answer and seals; every row says it.
    harness: Harness = field(kw_only=True)
    # (row, mode) -> the row's reference solution as a completion, where the data has one
    reference: Callable[[Row, str], str | None] = _canonical
    # Each problem is asked once per mode (CRUXEval: from its output, the input, and the other
    # way), every first mode's prompt first, unless config.extra.mode names one; a prompt
    # asked for by id is asked in `default_mode`. A prompt's labels are then its mode alone.
    modes: tuple[str, ...] = ()
    default_mode: str | None = None
    # How far its verdicts can be trusted, by language, where that differs from the language's
    # own row (integrity.py); `apart`: rows that hold for the programs its assembler builds
    # apart only (sandlot/judge/split/, split_java.py, split_managed.py).
    integrity: ByLanguage = NONE
    # Why a row of a dataset file cannot be judged (checked when the file is read), or None.
    row_problem: Callable[[Row], str | None] | None = None


def _cruxeval_reference(row: Row, mode: str) -> str:
    if "gt" in row:  # CRUXEval-X: what fills the blank to give `gt`
        before, after = row[mode].split("????", 1)
        return f"[ANSWER]{row['gt'][len(before) : len(row['gt']) - len(after)]}[/ANSWER]"
    return f"[ANSWER]{row['output'] if mode == 'output' else 'f(' + row['input'] + ')'}[/ANSWER]"


def _palmath_reference(row: Row, mode: str) -> str | None:
    sol = ensure_json(row.get("canonical_solution"))
    return f"```python\n{sol['code']}\n```" if isinstance(sol, dict) else None


def _insert_reference(row: Row, mode: str) -> str | None:
    lang = (ensure_json(row.get("labels")) or {}).get("programming_language", "")
    sol = row.get("canonical_solution")
    return f"```{lang}\n{sol}\n```" if sol else None


SPLIT = SPLIT_NATIVE | SPLIT_MANAGED  # the compiled languages whose answers are built apart
# the rows below read as a table
DRIVER, LANGUAGE = Harness.PYTHON_DRIVER, Harness.LANGUAGE
FRAMEWORK, OUTSIDE = Harness.FRAMEWORK, Harness.OUTSIDE
HUMANEVAL = Family("humaneval", prompts.humaneval, assemble.build_humaneval, harness=DRIVER)
MULTIPLE = Family("multiple", prompts.humaneval, assemble_multi.build_multiple, harness=LANGUAGE,
                  integrity=ByLanguage(apart=SPLIT))  # fmt: skip
FAMILIES: dict[str, Family] = {f.name: f for f in (
    HUMANEVAL,
    Family("humaneval_x", prompts.humaneval, assemble_multi.build_humaneval_x, harness=LANGUAGE,
           integrity=ByLanguage(apart=SPLIT_NATIVE)),
    MULTIPLE,
    Family("mbpp", prompts.mbpp, assemble.build_mbpp, harness=DRIVER,
           reference=lambda row, mode: row.get("code") or row.get("canonical_solution")),
    # Python's rows by the driver, CRUXEval-X's by their languages'
    Family("cruxeval", prompts.cruxeval, assemble.build_cruxeval, harness=LANGUAGE,
           reference=_cruxeval_reference, modes=("input", "output"), default_mode="output",
           integrity=ByLanguage({"*": CRUXEVAL})),
    Family("mhpp", prompts.mhpp, assemble.build_mhpp, harness=DRIVER),
    Family("palmath", prompts.content, assemble.build_palmath, harness=DRIVER,
           reference=_palmath_reference),
    Family("insert", prompts.insert, assemble.build_insert, harness=LANGUAGE,
           reference=_insert_reference,
           integrity=ByLanguage({"python": INSERT_PYTHON}, apart=SPLIT)),
    Family("ncb", prompts.content, assemble.build_ncb, harness=FRAMEWORK,
           integrity=ByLanguage({"pytest": NCB_PYTEST})),
    Family("verilog", prompts.verilog, assemble.build_verilog, harness=OUTSIDE,
           integrity=ByLanguage({"verilog": VERILOG})),
    Family("lcb", prompts.lcb, assemble.build_lcb, harness=DRIVER),
    Family("stdio", prompts.stdio, assemble.build_stdio, harness=OUTSIDE,
           integrity=ByLanguage({"*": OUTPUT})),
    Family("aider", prompts.aider, assemble_multi.build_aider, harness=LANGUAGE,
           reference=lambda row, mode: assemble_multi.reference_completion(row),
           integrity=ByLanguage({"catch2": AIDER_CATCH2, "jest": AIDER_JEST,
                                 "pytest": AIDER_PYTEST},
                                apart={"rust": AIDER_RUST, "go_test": AIDER_GO_TEST})),
    # a row's stdin cases are read outside; a row's test runs after the answer, in python
    # under the driver, else judged on its exit
    Family("user", prompts.given, assemble.build_user, harness=LANGUAGE,
           row_problem=assemble.user_row_problem),
    Family("repobench", prompts.given, repobench.build, harness=OUTSIDE,
           reference=lambda row, mode: row["next_line"], integrity=ByLanguage({"*": REPOBENCH})),
)}  # fmt: skip


def reference(family: Family | str, row: Row, mode: str = "output") -> str | None:
    """The row's reference solution as a completion, where the data has one."""
    return (FAMILIES[family] if isinstance(family, str) else family).reference(row, mode)
