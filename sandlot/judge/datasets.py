"""Datasets: which exist, where their rows live, and finding a problem by id.

Built-in datasets are gzip JSONL files shipped in `sandlot/judge/data/`; user datasets are
`*.jsonl` / `*.jsonl.gz` files in the configured `dataset_dir` (format: `data/README.md`,
"User datasets"). Rows are read on first use and kept; listing never reads a file.
"""

from __future__ import annotations

import difflib
import gzip
import json
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandlot.errors import InvalidRequest, NotFound, UnknownLanguage
from sandlot.judge.families import FAMILIES, Family
from sandlot.judge.integrity import BIGCODEBENCH_PYTHON, LANGUAGE_ROWS, NONE, ByLanguage, Integrity
from sandlot.judge.plans import Needs
from sandlot.languages import Registry

DATA_DIR = Path(__file__).resolve().parent / "data"

Row = dict[str, Any]


class BadDataset(InvalidRequest):
    """A dataset file that cannot be read; the message names the file and the line."""

    status_code = 422


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    name: str
    family: Family  # how its rows are asked and judged (families.py)
    file: str  # a file in DATA_DIR, or an absolute path for user datasets
    language: str | None = None  # None: per row (labels) or from config.language
    id_field: str = "id"
    aliases: tuple[str, ...] = ()
    summary: str = ""
    params: dict[str, Any] = field(default_factory=dict)  # family knobs
    # its integrity rows where they differ from its family's (integrity.py)
    integrity: ByLanguage = NONE

    @property
    def path(self) -> Path:
        return Path(self.file) if Path(self.file).is_absolute() else DATA_DIR / self.file


def _spec(name: str, family: str, file: str, **kw: Any) -> DatasetSpec:
    return DatasetSpec(name=name, family=FAMILIES[family], file=file, **kw)


# MultiPL-E file suffix -> sandlot language names to try (the first the registry knows wins).
MULTIPLE_LANGUAGES: dict[str, tuple[str, ...]] = {
    "cpp": ("cpp",), "java": ("java",), "js": ("nodejs",), "rs": ("rust",), "sh": ("bash",),
    "ts": ("typescript",), "php": ("php",), "rb": ("ruby",), "r": ("R", "r"), "lua": ("lua",),
    "pl": ("perl",), "go": ("go_test",), "scala": ("scala",), "cs": ("csharp",), "d": ("D_ut",),
    "rkt": ("racket",),
}  # fmt: skip

HUMANEVAL_X = {"python": "python", "cpp": "cpp", "java": "java", "js": "nodejs", "rust": "rust",
               "go": "go_test"}  # fmt: skip
HUMANEVAL_X_WHOLE = frozenset({"python"})  # the others ship tasks 0-19

# What a dataset class's rows sent in provided_data are judged with, as its shipped tables are:
# SandboxFusion's MBXPDataset runs with 30 s and its anti-hack rule, whatever the table.
MBXP_PARAMS: dict[str, Any] = {"mbxp": True, "run_timeout": 30}
CLASS_PARAMS: dict[str, dict[str, Any]] = {"MBXPDataset": MBXP_PARAMS}

BUILTIN: tuple[DatasetSpec, ...] = (
    _spec("humaneval_python", "humaneval", "humaneval.jsonl.gz", language="python",
          id_field="task_id", aliases=("humaneval", "openai_humaneval"),
          summary="OpenAI HumanEval, 164 Python problems (MIT)"),
    _spec("mbpp", "mbpp", "mbpp.jsonl.gz", language="python", id_field="task_id",
          aliases=("mbpp_full",),
          summary="Google MBPP, all 974 tasks (CC-BY-4.0); setup code first, as SandboxFusion"),
    _spec("mbpp_sanitized", "mbpp", "mbpp_sanitized.jsonl.gz", language="python",
          id_field="task_id", params={"sanitized": True},
          summary="MBPP sanitized, 427 hand-checked tasks (CC-BY-4.0)"),
    _spec("cruxeval", "cruxeval", "cruxeval.jsonl.gz", language="python",
          summary="CRUXEval, 800 functions; extra.mode = output (default) or input (MIT)"),
    *(
        _spec(f"humaneval_x_{ext}", "humaneval_x", f"humaneval_x_{ext}.jsonl.gz", language=lang,
              id_field="task_id",
              summary=f"HumanEval-X {ext}" + ("" if ext in HUMANEVAL_X_WHOLE else ", tasks 0-19"))
        for ext, lang in HUMANEVAL_X.items()
    ),
    *(
        _spec(f"{prefix}{ext}", "multiple",
              f"multiple_{kind}_{ext}.jsonl.gz", id_field="name", language=langs[0],
              params={"candidates": langs},
              summary=f"MultiPL-E {kind} in {ext} (prompts and tests; no reference solutions)")
        for ext, langs in MULTIPLE_LANGUAGES.items()
        for kind, prefix in (("humaneval", "multiple_"), ("mbpp", "multiple_mbpp_"))
    ),
    _spec("aider_benchmark_v1", "insert", "sf_aider_benchmark_v1.jsonl.gz", language="python",
          aliases=("aider_benchmark",), params={"run_timeout": 60},
          summary="SandboxFusion's aider_benchmark table (5 Exercism python exercises)"),
    _spec("aider_polyglot_python", "insert", "aider_polyglot_python_sf.jsonl.gz",
          language="python", params={"run_timeout": 60},
          summary="the aider polyglot python exercises in SandboxFusion's row format"),
    # Exercism's tests may assert two cores (Go) or start a thousand threads (Java's).
    _spec("aider_polyglot", "aider", "aider_polyglot.jsonl.gz", id_field="id",
          params={"needs": Needs(any_cpu=True, pids=2048)},
          summary="26 aider polyglot exercises (python, go, rust, javascript, java, cpp)"),
    _spec("code_contests", "stdio", "sf_code_contests.jsonl.gz",
          summary="CodeContests stdin/stdout problems (SandboxFusion sample, 20 rows)"),
    _spec("live_code_bench_v1", "lcb", "sf_live_code_bench_v1.jsonl.gz", language="python",
          summary="LiveCodeBench (SandboxFusion sample, 3 rows)"),
    _spec("mhpp", "mhpp", "sf_mhpp.jsonl.gz", language="python",
          summary="MHPP (SandboxFusion sample, 20 rows)"),
    _spec("evoeval", "humaneval", "sf_evoeval.jsonl.gz", language="python",
          summary="EvoEval (SandboxFusion sample, 11 rows)"),
    _spec("shadow_humaneval_python", "humaneval", "sf_shadow_humaneval_python.jsonl.gz",
          language="python", summary="shadow HumanEval (SandboxFusion sample, 20 rows)"),
    _spec("bigcodebench", "humaneval", "sf_bigcodebench.jsonl.gz", language="python",
          params={"run_timeout": 60, "unittest": True},
          integrity=ByLanguage({"python": BIGCODEBENCH_PYTHON}),
          summary="BigCodeBench (SandboxFusion sample, 20 rows; pandas, matplotlib, requests...)"),
    _spec("cruxeval_x", "cruxeval", "sf_cruxeval_x.jsonl.gz",
          summary="CRUXEval-X (SandboxFusion sample, 19 rows, one per language; extra.mode)"),
    *(
        _spec(f"repobench_c_{lang}", "repobench", f"sf_repobench_c_{lang}.jsonl.gz",
              language=lang, summary=f"RepoBench-C {lang} next-line completion (SandboxFusion "
              "sample, 20 rows)")
        for lang in ("python", "java")
    ),
    _spec("palmath", "palmath", "sf_palmath.jsonl.gz", language="python",
          summary="PAL math (SandboxFusion sample, 20 rows)"),
    *(
        _spec(f"verilogeval_{kind}", "verilog", f"sf_verilogeval_{kind}.jsonl.gz",
              language="verilog", summary=f"VerilogEval {kind} (SandboxFusion's table)")
        for kind in ("human", "machine")
    ),
    *(
        _spec(f"ncb_java_{loc}", "ncb", f"sf_ncb_java_{loc}.jsonl.gz", language="junit",
              summary=f"NaturalCodeBench java ({loc}; SandboxFusion sample, 20 rows)")
        for loc in ("en", "zh")
    ),
    *(
        _spec(f"ncb_python_{loc}", "ncb", f"sf_ncb_python_{loc}.jsonl.gz", language="pytest",
              summary=f"NaturalCodeBench python ({loc}; SandboxFusion sample, 20 rows)")
        for loc in ("en", "zh")
    ),
    *(
        _spec(name, "insert", f"sf_{name}.jsonl.gz", params=MBXP_PARAMS,
              summary=f"{name} (SandboxFusion sample; multi-language, full programs)")
        for name in ("mbxp_v1_en", "mbxp_v2_en", "humanevalds_v1_en", "humanevalds_v2_en",
                     "oodtest_v1_zh")
    ),
)  # fmt: skip

# SandboxFusion's dataset class names (config.dataset_type) -> our family.
CLASS_FAMILIES: dict[str, Family] = {cls: FAMILIES[family] for cls, family in {
    "HumanEvalDataset": "humaneval", "EvoEvalDataset": "humaneval",
    "HumanEvalDeprecatedDataset": "humaneval", "MBPPDataset": "mbpp",
    "CruxEvalDataset": "cruxeval", "CommonOJDataset": "stdio", "MultiPLEDataset": "multiple",
    "AiderBenchmarkDataset": "insert", "MBXPDataset": "insert", "AutoEvalDataset": "insert",
    # AutoEval's class aliases, which SandboxFusion's own jest test sends as dataset_type
    "AutoEvalV4Dataset": "insert", "AutoEvalV5Dataset": "insert", "AutoEvalV6Dataset": "insert",
    "MHPPDataset": "mhpp", "NaturalCodeBenchDataset": "ncb", "PalMathDataset": "palmath",
    "LiveCodeBenchDataset": "lcb", "VerilogDataset": "verilog", "RepobenchCDataset": "repobench",
}.items()}  # fmt: skip


def integrity_rows() -> Iterator[tuple[str, str, Integrity]]:
    """Every integrity row as (family or dataset, language, class), "*" for any: the languages'
    own, then each family's and each shipped dataset's, where they differ."""
    yield from (("*", language, row) for language, row in LANGUAGE_ROWS.items())
    for family in FAMILIES.values():
        yield from ((family.name, language, row) for language, row in family.integrity.items())
    for spec in BUILTIN:
        yield from ((spec.name, language, row) for language, row in spec.integrity.items())


def row_id(row: Row, spec: DatasetSpec) -> str | int:
    for key in (spec.id_field, "id", "task_id", "name"):
        if key in row and row[key] is not None:
            return row[key]
    if "exercise" in row:  # aider polyglot rows: "<language>/<exercise>"
        return f"{row.get('language')}/{row['exercise']}"
    raise KeyError("id")


def read_jsonl(path: Path) -> list[Row]:
    """Rows of a (gzip) JSONL file; BadDataset names the file and line of the first problem."""
    opener = gzip.open if path.suffix == ".gz" else open
    rows: list[Row] = []
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise BadDataset(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise BadDataset(f"{path}, line {lineno}: a row must be a JSON object")
                row["__line__"] = lineno
                rows.append(row)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BadDataset(f"{path}: cannot read it ({exc})") from None
    return rows


class Dataset:
    """One dataset's rows, indexed by id (as text)."""

    def __init__(self, spec: DatasetSpec, rows: list[Row]) -> None:
        self.spec = spec
        self.rows = rows
        self.index: dict[str, Row] = {}
        for row in rows:
            try:
                key = str(row_id(row, spec))
            except KeyError:
                raise BadDataset(
                    f"{spec.path}, line {row.get('__line__', '?')}: the row has no "
                    f"'{spec.id_field}' field"
                ) from None
            if key in self.index and "__line__" in row:
                raise BadDataset(f"{spec.path}, line {row['__line__']}: duplicate id {key!r}")
            self.index[key] = row

    def ids(self) -> list[str | int]:
        return [row_id(r, self.spec) for r in self.rows]

    def get(self, problem_id: str | int) -> Row:
        key = str(problem_id)
        row = self.index.get(key)
        if row is None and key.isdigit():
            # "HumanEval/0" may be asked for as 0: match a trailing "/<n>" or "_<n>".
            hits = [r for k, r in self.index.items() if k.rsplit("/", 1)[-1] == key
                    or k.rsplit("_", 1)[-1] == key]  # fmt: skip
            row = hits[0] if len(hits) == 1 else None
        if row is None:
            shown = ", ".join(str(i) for i in self.ids()[:5])
            raise NotFound(
                f"dataset {self.spec.name!r} has no problem {problem_id!r}; it has "
                f"{len(self.rows)} problems, ids like {shown} (POST /list_ids lists them)"
            )
        return row


class Datasets:
    """Every dataset this server serves: the built-in ones its languages can judge, plus users'."""

    def __init__(self, registry: Registry, dataset_dir: str | None = None) -> None:
        self.registry = registry
        self.dataset_dir = dataset_dir
        self._lock = threading.Lock()
        self._loaded: dict[str, Dataset] = {}
        self.specs: dict[str, DatasetSpec] = {}
        self.aliases: dict[str, str] = {}
        for spec in BUILTIN:
            resolved = self._resolve_language(spec)
            if resolved is not None:
                self._add(resolved)
        if dataset_dir:
            for spec in user_specs(Path(dataset_dir)):
                self._add(spec)

    def _add(self, spec: DatasetSpec) -> None:
        self.specs[spec.name] = spec
        for alias in spec.aliases:
            self.aliases[alias] = spec.name

    def _resolve_language(self, spec: DatasetSpec) -> DatasetSpec | None:
        """The spec with a language name the registry knows, or None when none fits."""
        candidates = spec.params.get("candidates") or ((spec.language,) if spec.language else ())
        for name in candidates:
            try:
                row = self.registry.get(name)
            except UnknownLanguage:
                continue
            return DatasetSpec(**{**_fields(spec), "language": row.name})
        return None if candidates else spec

    def names(self) -> list[str]:
        return list(self.specs)

    def spec(self, name: str) -> DatasetSpec:
        key = self.aliases.get(name, name)
        spec = self.specs.get(key)
        if spec is None:
            raise NotFound(self._unknown(name))
        return spec

    def _unknown(self, name: str) -> str:
        """Why `name` is no dataset: the names it is closest to, else every name there is."""
        close = difflib.get_close_matches(name, [*self.specs, *self.aliases], n=3, cutoff=0.6)
        if close:
            return (f"unknown dataset {name!r}; did you mean {' or '.join(map(repr, close))}? "
                    f"(GET /list_datasets lists all {len(self.specs)})")  # fmt: skip
        return f"unknown dataset {name!r}; this server has: {', '.join(self.names())}"

    def get(self, name: str) -> Dataset:
        spec = self.spec(name)
        with self._lock:
            ds = self._loaded.get(spec.name)
            if ds is None:
                rows = read_jsonl(spec.path)
                _check_rows(spec, rows)
                ds = self._loaded[spec.name] = Dataset(spec, rows)
        return ds


def _check_rows(spec: DatasetSpec, rows: list[Row]) -> None:
    """A family that checks its rows (user datasets) refuses a file with one it cannot judge."""
    problem = spec.family.row_problem
    if problem is None:
        return
    for row in rows:
        why = problem(row)
        if why is not None:
            raise BadDataset(f"{spec.path}, line {row.get('__line__', '?')}: {why}")


def _fields(spec: DatasetSpec) -> dict[str, Any]:
    return {k: getattr(spec, k) for k in DatasetSpec.__dataclass_fields__}


# -- user datasets ---------------------------------------------------------------------------


def user_specs(folder: Path) -> Iterable[DatasetSpec]:
    if not folder.is_dir():
        raise BadDataset(f"dataset_dir {folder} is not a directory")
    for path in sorted([*folder.glob("*.jsonl"), *folder.glob("*.jsonl.gz")]):
        name = path.name.removesuffix(".gz").removesuffix(".jsonl")
        yield DatasetSpec(
            name=name, family=FAMILIES["user"], file=str(path), summary=f"user: {path}"
        )
