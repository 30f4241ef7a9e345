"""What sandlot knows of each toolchain's repositories: one row per ecosystem.

A row names the files that decide its environment (manifests and lockfiles: they key the cache),
how to set one up and test it when the request does not say, and where its tests live (what a
candidate patch may not change unless the request allows it). A repository is of every
ecosystem whose marker file is at its root; a polyglot one sets each up in turn.

Everything a setup installs goes under the repository's root (`.venv`, `node_modules`, and the
module and crate caches below `.sandlot/`), since that tree, less its tracked files, is the
environment that is cached and mounted under later runs.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import PurePosixPath

REPO = "/repo"  # where a repository is in its boxes
CACHE = f"{REPO}/.sandlot"  # module caches a setup fills, kept with the environment
TMP = f"{CACHE}/tmp"  # a box's TMPDIR: its /tmp is small; emptied when the box's script ends
REPORT_DIR = "/sandbox/report"  # where a test run leaves machine-readable reports


@dataclass(frozen=True, slots=True)
class Ecosystem:
    name: str
    markers: tuple[str, ...]  # any of these at the root: the repository is of this ecosystem
    manifests: tuple[str, ...]  # file names (anywhere in the tree) that key the environment
    setup: str  # the default setup command
    test: str  # the default test command (writes a report into $SANDLOT_REPORT_DIR)
    test_globs: tuple[str, ...]  # paths that are tests
    env: tuple[tuple[str, str], ...] = ()  # for setup and test runs alike
    path: tuple[str, ...] = ()  # put first on PATH


PYTHON = Ecosystem(
    name="python",
    markers=("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"),
    manifests=(
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements*.txt",
        "Pipfile",
        "Pipfile.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "tox.ini",
    ),
    # A venv inside the repository, the project installed editable with its test extra when
    # it has one (pip says so and goes on without it otherwise), and pytest in any case.
    setup=(
        "python3 -m venv .venv && . .venv/bin/activate && "
        "if [ -f requirements.txt ]; then pip install -r requirements.txt; fi && "
        "if [ -f pyproject.toml ] || [ -f setup.py ]; then pip install -e '.[test]' || "
        "pip install -e .; fi && pip install pytest"
    ),
    test="python -m pytest -q",
    test_globs=(
        "test_*.py",
        "*_test.py",
        "tests/*",
        "test/*",
        "testing/*",
        "conftest.py",
        "*/tests/*",
        "*/test/*",
        "*/testing/*",
    ),
    env=(
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
        ("PIP_NO_INPUT", "1"),
        ("PIP_CACHE_DIR", "/tmp/pip-cache"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ),
    path=(f"{REPO}/.venv/bin",),
)
NODE = Ecosystem(
    name="node",
    markers=("package.json",),
    manifests=(
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        ".npmrc",
    ),
    setup="if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then npm ci; "
    "else npm install; fi",
    test="npm test",
    test_globs=(
        "*.test.*",
        "*.spec.*",
        "__tests__/*",
        "*/__tests__/*",
        "test/*",
        "tests/*",
        "*/test/*",
        "*/tests/*",
    ),
    env=(
        ("npm_config_cache", "/tmp/npm-cache"),
        ("npm_config_update_notifier", "false"),
        ("npm_config_fund", "false"),
        ("npm_config_audit", "false"),
    ),
    path=(f"{REPO}/node_modules/.bin",),
)
GO = Ecosystem(
    name="go",
    markers=("go.mod",),
    manifests=("go.mod", "go.sum", "go.work", "go.work.sum"),
    # The modules, then the packages and their tests built once (not run): the build cache is
    # kept with the environment, so a test run compiles only what a patch changed.
    setup="go mod download && { go test -count=1 -run '^$' ./... > /dev/null 2>&1 || true; }",
    test="go test -json ./... > $SANDLOT_REPORT_DIR/go-test.json",
    test_globs=("*_test.go", "testdata/*", "*/testdata/*"),
    env=(
        ("GOMODCACHE", f"{CACHE}/go/mod"),
        ("GOCACHE", f"{CACHE}/go/cache"),
        ("GOFLAGS", "-mod=mod -buildvcs=false"),
        ("GOPROXY", "https://proxy.golang.org"),
        ("GOTOOLCHAIN", "local"),
    ),
)
RUST = Ecosystem(
    name="rust",
    markers=("Cargo.toml",),
    manifests=("Cargo.toml", "Cargo.lock", "rust-toolchain", "rust-toolchain.toml"),
    setup="cargo fetch",
    test="cargo test --offline 2>&1 | tee $SANDLOT_REPORT_DIR/cargo-test.txt",
    test_globs=("tests/*", "*/tests/*", "benches/*"),
    env=(("CARGO_HOME", f"{CACHE}/cargo"), ("CARGO_TARGET_DIR", "/tmp/cargo-target")),
)
JAVA = Ecosystem(
    name="java",
    markers=("pom.xml",),
    manifests=("pom.xml",),
    setup=f"mvn -B -q -Dmaven.repo.local={CACHE}/m2 dependency:go-offline",
    test=f"mvn -B -o -Dmaven.repo.local={CACHE}/m2 test; "
    "cp target/surefire-reports/*.xml $SANDLOT_REPORT_DIR/ 2>/dev/null; true",
    test_globs=("src/test/*", "*/src/test/*"),
)
ECOSYSTEMS: tuple[Ecosystem, ...] = (PYTHON, NODE, GO, RUST, JAVA)


def detect(root_names: set[str]) -> tuple[Ecosystem, ...]:
    """The ecosystems of a repository whose root holds `root_names`."""
    return tuple(e for e in ECOSYSTEMS if any(m in root_names for m in e.markers))


def is_manifest(path: str, ecosystems: tuple[Ecosystem, ...] = ECOSYSTEMS) -> bool:
    parts = PurePosixPath(path).parts
    if "node_modules" in parts or ".sandlot" in parts:
        return False
    name = parts[-1] if parts else ""
    return any(fnmatch.fnmatchcase(name, m) for e in ecosystems for m in e.manifests)


def is_test_path(path: str, globs: tuple[str, ...]) -> bool:
    """Whether `path` (repository-relative) is a test file by any of `globs` (fnmatch, where *
    also matches /)."""
    name = PurePosixPath(path).name
    return any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(name, g) for g in globs)


def default_setup(ecosystems: tuple[Ecosystem, ...]) -> str:
    return " && ".join(f"( {e.setup} )" for e in ecosystems)


def default_test(ecosystems: tuple[Ecosystem, ...]) -> str | None:
    return ecosystems[0].test if ecosystems else None
