"""Public faces: each layer's package `__init__` lists in `__all__` what other layers may
import from it, FACES pins those lists, and no module of sandlot (nor an example or script)
imports another layer's modules past its face. Imports within one layer are free; between
layers they go one way only: no two of sandlot's top-level packages and modules import each other,
even through others, nor lazily, nor for type checking alone.

A face changes on purpose: add or drop its name in FACES in the commit that needs it. A face
whose names are imported on first use (sandlot/faces.py) must offer each from the module its
table names.

The tests (this folder) and the benchmarks (bench/) may import a layer's modules: they test and
measure the rooms behind the faces, which no other layer sees.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
import itertools
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sandlot"
CALLERS = ("sandlot", "examples", "scripts")

# faces:start
# Written by the faces rewrite (kept outside the repository); edit by hand after that.
FACES: dict[str, list[str]] = {
    "api": ["create_app", "serve"],
    "cli": ["app"],
    "client": [
        "DEFAULT_URL",
        "AsyncClient",
        "AsyncSession",
        "Client",
        "RetryPolicy",
        "ServerError",
        "Servers",
        "Session",
        "Snapshot",
        "ToolSessions",
        "Unreachable",
        "feedback",
    ],
    "coder": [
        "ATTEMPTS",
        "ATTEMPT_TIMEOUT",
        "LLM_GRACE",
        "MAX_ATTEMPTS",
        "MAX_ATTEMPT_TIMEOUT",
        "MAX_LLM_GRACE",
        "MAX_REQUEST_CHARS",
        "TEST_TIMEOUT",
        "CodeResult",
        "CodeTask",
        "CoderJobs",
        "Decision",
        "TestOutcome",
        "collect_files",
        "install_aider",
        "phased_runners",
        "prepare",
        "repo_test_outcome",
        "route",
        "run_files",
        "run_task",
        "run_tests",
    ],
    "convert": [
        "code_request",
        "dataset_infos",
        "decode_base64",
        "decode_files",
        "eval_result",
        "execute_response",
        "fork_response",
        "grade_fields",
        "judge_config",
        "jupyter_response",
        "repository",
        "run_limits",
        "run_response",
        "session_info",
        "session_run_response",
        "snapshot_info",
        "test_cases",
        "test_response",
    ],
    "docgen": [],
    "executor": [
        "MODES",
        "PY_PRELUDES",
        "SEAL_FILE",
        "TIME_LIMITS",
        "CaseResult",
        "Checker",
        "CodeRequest",
        "Execution",
        "Executor",
        "Item",
        "ItemOutcome",
        "OnRun",
        "Outcome",
        "Run",
        "Seal",
        "TestCase",
        "TestRun",
        "Verdict",
        "asked_of",
        "command_status",
        "counts",
        "describe",
        "limits_for",
        "return_code",
        "shell_spec",
        "verdict_of",
    ],
    "install": [
        "LOCKERS",
        "STEPS",
        "Mirrors",
        "Setup",
        "SetupError",
        "Step",
        "check_locks",
        "install",
        "run_step",
        "select_rows",
    ],
    "jail": [
        "BOX_WORKDIR",
        "MAX_LAYERS",
        "Frozen",
        "Jail",
        "JailConfig",
        "LayerBusy",
        "Limit",
        "Limits",
        "LiveBox",
        "LiveBoxes",
        "LiveConfig",
        "Outcome",
        "Pipes",
        "RunSpec",
        "allowed_cpus",
        "build_box_init",
        "copy_layer",
        "describe_cpu_sets",
        "hidden_in_a_box",
        "mount_tmpfs",
        "parse_cpu_sets",
        "resolve_cpu_sets",
        "safe_relpath",
        "unmount_all",
    ],
    "judge": [
        "Datasets",
        "EvalResult",
        "ItemResult",
        "Judge",
        "JudgeConfig",
        "RewardItem",
        "Sample",
        "TestOutcome",
        "check_batch_size",
        "integrity_rows",
        "judge_many",
        "metric_function_source",
        "number_samples",
        "pass_at_k",
        "result_record",
        "sample_counts",
        "score_batch",
        "weakest",
    ],
    "languages": [
        "ANSWER_ALIAS",
        "CATCH2_DIR",
        "CATCH2_FLAGS",
        "CPP_FLAGS",
        "CPP_PRELUDE",
        "CPP_PRELUDE_DIR",
        "CRATES",
        "GO",
        "GO_MODULES",
        "HELLO_WORLDS",
        "JARS_DIR",
        "JAVA",
        "LANGUAGES",
        "MAVEN_JARS",
        "PACKAGES_STATUS",
        "RUBY_BOOT",
        "RUBY_DIR",
        "RUST_BIN",
        "RUST_CRATES",
        "RUST_TOOLCHAIN",
        "R_BOOT",
        "R_DIR",
        "SPLIT_DIR",
        "TS_TESTS",
        "VERSIONS_FILE",
        "Availability",
        "Language",
        "Registry",
    ],
    "mcp": ["install", "main"],
    "playground": ["StaticFile", "as_json", "static_files"],
    "reports": ["summarize", "write"],
    "repos": [
        "GradeTask",
        "Owner",
        "Repos",
        "Repository",
        "Store",
        "as_owner",
        "bundle_from_path",
        "by_kind",
        "confined",
        "run_git",
        "working_patch",
    ],
    "sessions": [
        "LANGUAGES",
        "MIN_MEMORY_MB",
        "Execution",
        "NotebookRun",
        "Paused",
        "Result",
        "Session",
        "SessionManager",
        "Snapshot",
        "bounded",
        "run_notebook",
        "worker_of",
    ],
    "usecases": [
        "Judged",
        "ResultsFile",
        "SessionRun",
        "answer_record",
        "bounded_timeout",
        "check_code_size",
        "check_ids",
        "code",
        "conversation_kernel",
        "create_session",
        "dataset_name",
        "dataset_names",
        "delete_session",
        "delete_snapshot",
        "end_session",
        "evaluate",
        "execute_in_session",
        "find_session",
        "fork_session",
        "get_session_file",
        "get_snapshot",
        "interrupt_session",
        "language_names",
        "language_of_file",
        "language_row",
        "list_sessions",
        "list_snapshots",
        "probed_languages",
        "problem_ids",
        "prompt_by_id",
        "prompts",
        "put_session_file",
        "remove_repo_env",
        "repo_envs",
        "repo_task",
        "repo_tests",
        "restart_session",
        "run",
        "run_batch",
        "run_in_session",
        "run_jupyter",
        "run_tests",
        "served_repo",
        "served_repo_tests",
        "session_language_names",
        "sessions_full",
        "snapshot_session",
        "submit",
        "use_session",
    ],
    "wire": [
        "BatchItem",
        "BatchResult",
        "CaseOut",
        "CaseVerdict",
        "CellRunResult",
        "CodeRequest",
        "CommandRunResult",
        "CommandRunStatus",
        "CompileOut",
        "DatasetInfo",
        "ErrorBody",
        "EvalResult",
        "EvalTestCase",
        "EvaluateRequest",
        "EvaluateResponse",
        "ExecuteRequest",
        "ExecuteResponse",
        "FileWritten",
        "ForkRequest",
        "ForkResponse",
        "GetMetricsFunctionRequest",
        "GetMetricsFunctionResult",
        "GetMetricsRequest",
        "GetPromptByIdRequest",
        "GetPromptsRequest",
        "GradeRequest",
        "Holds",
        "Interrupted",
        "LanguageIntegrity",
        "Prompt",
        "RepoSource",
        "RepoTestsRequest",
        "RouteRequest",
        "RouteResponse",
        "RunBatchRequest",
        "RunBatchResponse",
        "RunCodeRequest",
        "RunCodeResponse",
        "RunJupyterRequest",
        "RunJupyterResponse",
        "RunStatus",
        "SampleVerdict",
        "SessionCreate",
        "SessionInfo",
        "SetupRequest",
        "SnapshotDeleted",
        "SnapshotInfo",
        "SubmitRequest",
        "TestCaseIn",
        "TestConfig",
        "TestRequest",
        "plain_traceback",
    ],
}
# faces:end


def packages() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def layer_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return parts[1] if parts[0] == "sandlot" and len(parts) > 1 else parts[0]


def test_every_package_has_its_face_pinned():
    assert sorted(FACES) == packages()


@pytest.mark.parametrize("layer", sorted(FACES))
def test_a_face_exports_exactly_its_pinned_names(layer):
    face = importlib.import_module(f"sandlot.{layer}")
    assert list(getattr(face, "__all__", [])) == FACES[layer]
    for name in FACES[layer]:
        value = getattr(face, name)  # a lazy face loads it now
        assert not isinstance(value, types.ModuleType), f"sandlot.{layer}.{name} is a module"


@pytest.mark.parametrize("layer", sorted(FACES))
def test_a_lazy_face_offers_each_name_from_its_module(layer):
    tree = ast.parse((PACKAGE / layer / "__init__.py").read_text())
    table: dict[str, str] = {}
    declared: dict[str, str] = {}  # what its TYPE_CHECKING block says
    for node in tree.body:
        call = node.value if isinstance(node, ast.Assign) else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "lazy":
            table = ast.literal_eval(call.args[1])
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                declared |= {a.asname or a.name: imp.module for a in imp.names}
    if table:  # a face of sandlot/faces.py; another lazy face is held to its TYPE_CHECKING block
        assert table == declared
    face = importlib.import_module(f"sandlot.{layer}")
    for name, module in declared.items():
        assert name in face.__all__
        assert getattr(face, name) is getattr(importlib.import_module(module), name)


def crossings() -> list[str]:
    """Every import of a layer's module, or of a name its face does not export, from another
    layer: `path:line: what`."""
    out = []
    layers = set(packages())
    for folder in CALLERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            me = layer_of(path)
            for node in ast.walk(ast.parse(path.read_text())):
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.Import):
                    for a in node.names:
                        parts = a.name.split(".")
                        if parts[0] == "sandlot" and len(parts) > 2 and parts[1] != me:
                            out.append(f"{where}: import {a.name}")
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                parts = node.module.split(".")
                if parts[0] != "sandlot" or len(parts) < 2 or parts[1] not in layers:
                    continue
                if parts[1] == me:
                    continue
                if len(parts) > 2:
                    out.append(f"{where}: from {node.module} import ...")
                    continue
                for a in node.names:
                    if a.name not in FACES[parts[1]]:
                        out.append(f"{where}: {a.name} is not in sandlot.{parts[1]}'s face")
    return out


def test_no_layer_imports_past_another_layers_face():
    assert crossings() == []


def test_no_layer_imports_another_layers_private_names():
    private = []
    for folder in CALLERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            me = layer_of(path)
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    parts = node.module.split(".")
                    if parts[0] == "sandlot" and len(parts) > 1 and parts[1] != me:
                        private += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name}"
                                    for a in node.names if a.name.startswith("_")]  # fmt: skip
    assert private == []


# The faces that receive requests (routes, commands, the MCP tools, the Ray actor) ask the
# Service's use cases (sandlot/usecases/) and never take its parts to use them themselves.
REQUEST_FACES = ("sandlot/api", "sandlot/cli", "sandlot/mcp", "sandlot/cluster.py")
REACH_THROUGH = re.compile(
    r"service\.(judge|repos|coder|registry|jail|executor|sessions)\.|service\.require_[a-z_]+\(\)"
)


def reach_throughs(paths: list[Path]) -> list[str]:
    return [
        f"{path.name}:{n}: {line.strip()}"
        for path in paths
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if REACH_THROUGH.search(line)
    ]


def test_no_request_face_reaches_through_the_service():
    paths = []
    for name in REQUEST_FACES:
        where = ROOT / name
        paths += sorted(where.rglob("*.py")) if where.is_dir() else [where]
    assert paths and reach_throughs(paths) == []


def test_a_reach_through_is_caught(tmp_path):
    # The control: what the faces did before their use cases, one line per kind of reach, and
    # a setting, which a face may read.
    lines = ["service.registry.names", "service.require_executor()", "service.judge.datasets"]
    face = tmp_path / "face.py"
    face.write_text("\n".join([*lines, "service.config.run_timeout"]) + "\n")
    assert [r.split(": ", 1)[1] for r in reach_throughs([face])] == lines


def layer_imports(package: Path) -> dict[str, dict[str, str]]:
    """Which of `package`'s top-level packages and modules each one imports, anywhere in its
    files (in a function, under TYPE_CHECKING): layer -> {layer it imports: the first place}."""
    name = package.name
    graph: dict[str, dict[str, str]] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        me = parts[0]
        graph.setdefault(me, {})
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module == name:
                targets = [f"{name}.{a.name}" for a in node.names]  # from sandlot import usecases
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                targets = [node.module]
            else:
                continue
            for target in targets:
                top = target.split(".")
                if top[0] == name and len(top) > 1 and top[1] != me:
                    where = f"{path.relative_to(package.parent)}:{node.lineno}"
                    graph[me].setdefault(top[1], where)
    return graph


def layer_cycle(package: Path) -> list[str]:
    """One cycle of imports between `package`'s layers, each step with where it is; [] if none."""
    graph = layer_imports(package)
    try:
        graphlib.TopologicalSorter({k: set(v) for k, v in graph.items()}).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]  # [a, b, ..., a]: each imported by the one after it
        return [f"{b} imports {a} ({graph[b][a]})" for a, b in itertools.pairwise(cycle)]
    return []


def test_no_two_layers_import_each_other():
    assert layer_cycle(PACKAGE) == []


def test_a_cycle_between_layers_is_caught(tmp_path):
    # The control: `low` imports `high` lazily inside a function, as api and mcp once did; the
    # same package without that import has no cycle.
    pkg = tmp_path / "pkg"
    for layer in ("high", "low", "mid"):
        (pkg / layer).mkdir(parents=True)
        (pkg / layer / "__init__.py").write_text("")
    (pkg / "high" / "face.py").write_text("from pkg.mid import thing\n")
    (pkg / "mid" / "thing.py").write_text("from pkg import low\n")
    assert layer_cycle(pkg) == []
    (pkg / "low" / "late.py").write_text("def f():\n    from pkg.high import face\n")
    assert sorted(layer_cycle(pkg)) == [
        "high imports mid (pkg/high/face.py:1)",
        "low imports high (pkg/low/late.py:2)",
        "mid imports low (pkg/mid/thing.py:1)",
    ]
