"""Test frameworks' guards: each writes the run's seal, with the framework's counts
(`passed=N failed=N skipped=N`), once the framework has reported that every test passed; a run
that ends any other way (an early exit in the code or in a test) has none.

A row names its guard (`Language.guard`); this module knows what each one adds: files to the
build (the same for every submission), files and arguments to the run. The guards' own code is in
this directory: a pytest plugin, a jest reporter, a JUnit listener, a Go TestMain, a Catch2
listener, a D unit tester.
"""

from __future__ import annotations

import re
from pathlib import Path

_HERE = Path(__file__).parent
_GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
_GO_TEST_MAIN = re.compile(r"^func\s+TestMain\s*\(", re.M)
JUNIT_SERVICE = "META-INF/services/org.junit.platform.launcher.TestExecutionListener"
# Go initializes a package's variables file by file in name order, and the catch2 row links its
# objects in name order: the guard's come first.
GO_FILE = "0sandlot_seal_test.go"
CATCH2_FILE = "0sandlot_seal.cpp"


def _text(name: str) -> bytes:
    return (_HERE / name).read_bytes()


def sealed(guard: str, code: str) -> bool:
    """Whether a run of this code is sealed: a Go test that brings its own TestMain is not (it
    cannot have two); it still gets -test.paniconexit0."""
    return not (guard == "go_test" and _GO_TEST_MAIN.search(code))


def build_files(guard: str, code: str) -> dict[str, bytes]:
    if guard == "junit":
        return {"SandlotSealListener.java": _text("SandlotSealListener.java"),
                JUNIT_SERVICE: b"SandlotSealListener\n"}  # fmt: skip
    if guard == "go_test" and sealed(guard, code):
        m = _GO_PACKAGE.search(code)
        package = m.group(1) if m else "main"
        return {GO_FILE: _text("sandlot_seal_test.go").replace(b"PACKAGE", package.encode())}
    if guard == "D":
        return {"sandlot_seal.d": _text("sandlot_seal.d")}
    if guard == "catch2":
        return {CATCH2_FILE: _text("sandlot_seal_catch2.cpp")}
    return {}


def run_files(guard: str) -> dict[str, bytes]:
    if guard == "pytest":
        return {"sandlot_pytest_guard.py": _text("pytest_guard.py")}
    if guard == "jest":
        return {".sandlot_jest_reporter.js": _text("jest_reporter.js")}
    return {}


def run_argv(guard: str, run: tuple[str, ...]) -> tuple[str, ...]:
    if guard == "pytest":
        return (*run[:-1], "-p", "sandlot_pytest_guard", run[-1])
    if guard == "jest":
        return (*run, "--reporters=default", "--reporters=./.sandlot_jest_reporter.js")
    return run
