"""Dataset families are typed rows (judge/families.py) and languages are dialect rows: the judge
asks the row, never compares a family's or a language's name in code."""

from __future__ import annotations

import ast
import itertools
import json
import re
from pathlib import Path

import pytest

from sandlot.judge import Datasets
from sandlot.judge.checkers import Checker
from sandlot.judge.datasets import BUILTIN, CLASS_FAMILIES, DatasetSpec
from sandlot.judge.dialects import dialect
from sandlot.judge.engine import Judge
from sandlot.judge.families import FAMILIES, Family, Harness, reference
from sandlot.judge.plans import JudgeConfig, Program, StdioJob
from sandlot.languages import LANGUAGES, Registry

REGISTRY = Registry(LANGUAGES, "/opt/sandlot")
JUDGE_DIR = Path(__file__).resolve().parents[2] / "sandlot" / "judge"
# What a family's or a language's name is called in the judge's code, and the names themselves.
_NAMED = re.compile(r"^(family|language|lang)$|_(family|language|lang)$")
NAMES = frozenset({*FAMILIES, *(n for row in LANGUAGES for n in (row.name, *row.aliases))})


def _name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _literals(node: ast.expr) -> list[str] | None:
    """The strings of a string, or of a tuple, list or set of strings, written in the code."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        each = [_literals(e) for e in node.elts]
        return None if None in each else [v for one in each for v in one or ()]
    return None


def name_branches(source: str) -> list[str]:
    """Each comparison of a family or language (`family == "x"`, `language in ("a", "b")`,
    `spec.family != "y"`, a `match` on one) with names written in the code, and each comparison
    with a family's or language's name (`resolved == "python"`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for a, b in itertools.pairwise(sides):
                for named, other in ((a, b), (b, a)):
                    name, written = _name_of(named), _literals(other)
                    if written is not None and (
                        (name and _NAMED.search(name)) or any(w in NAMES for w in written)
                    ):
                        found.append(f"{node.lineno}: {ast.unparse(node)}")
                        break
        elif isinstance(node, ast.Match):
            name = _name_of(node.subject)
            if name and _NAMED.search(name):
                found.append(f"{node.lineno}: match {ast.unparse(node.subject)}")
    return found


def test_the_judge_branches_on_no_family_or_language_name() -> None:
    found = [f"{path.relative_to(JUDGE_DIR)}:{hit}"
             for path in sorted(JUDGE_DIR.rglob("*.py"))
             for hit in name_branches(path.read_text(encoding="utf-8"))]  # fmt: skip
    assert found == [], "put it in the family's row (families.py) or the language's (dialects.py)"


@pytest.mark.parametrize(
    "source",
    [
        'if family == "cruxeval":\n    pass',
        'x = 1 if spec.family != "stdio" else 2',
        'if language in ("python", "py"):\n    pass',
        'ok = "bash" == lang',
        'if row_language not in {"java"}:\n    pass',
        "match spec.family:\n    case 'user':\n        pass",
        'if resolved == "python":\n    pass',
        'if p.get("language") == "junit":\n    pass',
    ],
)
def test_a_name_branch_is_found(source: str) -> None:
    assert name_branches(source)


@pytest.mark.parametrize(
    "source",
    [
        "same = [b for b in blocks if b.language == language]",  # two values, no name written
        "if language in WHOLE_BARE_LANGUAGES:\n    pass",  # a table
        '# if family == "cruxeval": a comment\nx = "family == \'user\'"',  # text, not code
        'if mode == "input":\n    pass',
    ],
)
def test_a_table_lookup_or_a_comment_is_no_name_branch(source: str) -> None:
    assert name_branches(source) == []


def test_every_dataset_and_dataset_class_has_a_registered_family() -> None:
    registered = set(map(id, FAMILIES.values()))
    assert all(name == family.name for name, family in FAMILIES.items())
    for spec in BUILTIN:
        assert isinstance(spec.family, Family) and id(spec.family) in registered, spec.name
    assert all(id(family) in registered for family in CLASS_FAMILIES.values())


def test_the_wire_names_the_family() -> None:
    """GET /v1/datasets says the family's name, as before it was an object."""
    from sandlot.convert import dataset_infos

    judge = Judge(Datasets(REGISTRY), executor=lambda: None)  # type: ignore[arg-type,return-value]
    infos = {i.name: i for i in dataset_infos(judge)}
    assert infos["humaneval_python"].family == "humaneval"
    assert infos["code_contests"].family == "stdio"
    assert infos["cruxeval"].family == "cruxeval"


@pytest.mark.parametrize("named", ["python", "py", "python3"])
def test_a_user_row_in_python_or_its_alias_is_a_python_program(tmp_path: Path, named: str) -> None:
    row = {"id": 1, "prompt": "def f():\n", "test": "assert f() == 1", "language": named}
    (tmp_path / "mine.jsonl").write_text(json.dumps(row) + "\n")
    datasets = Datasets(REGISTRY, str(tmp_path))
    judge = Judge(datasets, executor=lambda: None)  # type: ignore[arg-type,return-value]
    spec, row = judge.problem("mine", 1, JudgeConfig())
    assert row["language"] == named
    job = judge.assemble(spec, row, "```python\ndef f():\n    return 1\n```", JudgeConfig()).job
    assert isinstance(job, Program) and job.language == "python" and job.seal  # the driver's
    bash = {**row, "language": "bash"}
    control = judge.assemble(spec, bash, "```bash\necho 1\n```", JudgeConfig())
    assert control.job is not None and control.job.language == "bash"


JUDGE = Judge(Datasets(REGISTRY), executor=lambda: None)  # type: ignore[arg-type,return-value]


def _fits(harness: Harness, job: Program | StdioJob, spec: DatasetSpec) -> bool:
    """Whether an assembled job is run and sealed the way its family's row says."""
    outside = isinstance(job, StdioJob) or not JUDGE.integrity(spec, job).by_seal
    if harness is Harness.OUTSIDE:
        return outside
    if outside:  # a user row's stdin cases: read outside, whatever the language
        return harness is Harness.LANGUAGE
    language = JUDGE.resolve_language(job.language)
    if harness is Harness.PYTHON_DRIVER:
        return dialect(language).python_driver and job.seal and job.tests_at is not None
    if harness is Harness.FRAMEWORK:
        return REGISTRY.get(language).guard is not None
    return True  # Harness.LANGUAGE: its language's row decides


@pytest.mark.parametrize("name", sorted(Datasets(REGISTRY).names()))
def test_every_shipped_row_is_run_and_sealed_as_its_family_row_says(name: str) -> None:
    spec = JUDGE.datasets.spec(name)
    family = spec.family
    for row in JUDGE.datasets.get(name).rows:
        for mode in family.modes or ("",):
            # stdin problems of any language are judged here in Python
            cfg = JudgeConfig(language="python" if family is FAMILIES["stdio"] else None,
                              extra={"mode": mode} if mode else {})  # fmt: skip
            completion = reference(family, row, mode or "output") or ""
            job = JUDGE.assemble(spec, row, completion, cfg).job
            if job is not None:
                assert _fits(family.harness, job, spec), (name, row.get(spec.id_field), job)


@pytest.mark.parametrize(
    ("harness", "job", "fits"),
    [
        (Harness.PYTHON_DRIVER, Program("python", "pass\n", "pass\n", seal=True, tests_at=0), True),
        (Harness.PYTHON_DRIVER, Program("python", "pass\n", "pass\n"), False),  # unsealed
        (Harness.PYTHON_DRIVER, Program("bash", "true\n", "true\n", seal=True, tests_at=0), False),
        (Harness.FRAMEWORK, Program("pytest", "", ""), True),
        (Harness.FRAMEWORK, Program("cpp", "", ""), False),
        (Harness.OUTSIDE, Program("python", "pass\n", "pass\n", seal=True, tests_at=0), False),
        (Harness.OUTSIDE, StdioJob("python", "pass\n", [], Checker.parse("whitespace")), True),
        (Harness.PYTHON_DRIVER, StdioJob("python", "", [], Checker.parse("whitespace")), False),
    ],
)
def test_a_job_that_does_not_fit_its_harness_is_found(
    harness: Harness, job: Program | StdioJob, fits: bool
) -> None:
    assert _fits(harness, job, Datasets(REGISTRY).spec("humaneval_python")) is fits
