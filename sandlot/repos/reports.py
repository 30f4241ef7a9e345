"""Per-test verdicts from the machine-readable reports test runners write.

One parser per format, each turning a report into (test id, status) pairs; `parse_all` reads
every report a run left and its stdout, whatever the runner. Statuses: passed, failed, error,
skipped. A test id is what a task's FAIL_TO_PASS and PASS_TO_PASS lists name:

- pytest (junit XML, which sandlot asks for): `path/to/test_x.py::Class::test_name[param]`,
  as pytest itself prints it;
- jest and vitest (their JSON): `path/to/x.test.js > describe > test title` (relative to the
  repository), also found by the test's full name alone;
- `go test -json`: `import/path::TestName/subtest`, also by `TestName/subtest` alone;
- cargo test's output: `module::path::test_name`;
- any other JUnit XML (Maven surefire, tap-xunit, mocha's xunit reporter, ...):
  `classname::name` (the suite's name when a case has no class), also `classname.name`; and
  each suite by its name alone, with the worst verdict of its cases.

Reports are written by the code under test: every parser takes hostile input (XML without
entities or DTDs is all ElementTree reads; sizes are capped by the jail's fetch budget).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import PurePosixPath

STATUSES = ("passed", "failed", "error", "skipped")
# A later verdict for one id only makes it worse (a test run twice, a parametrised duplicate).
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
REPO_PREFIXES = ("/repo/", "/repo")


@dataclass(slots=True)
class Verdicts:
    tests: dict[str, str] = field(default_factory=dict)  # canonical id -> status
    aliases: dict[str, str] = field(default_factory=dict)  # another name -> canonical id
    formats: set[str] = field(default_factory=set)

    def add(self, test_id: str, status: str, *aliases: str) -> None:
        old = self.tests.get(test_id)
        if old is None or _RANK[status] > _RANK[old]:
            self.tests[test_id] = status
        for alias in aliases:
            if alias and alias != test_id:
                self.aliases.setdefault(alias, test_id)

    def status(self, test_id: str) -> str:
        """The status of a test named by its id or an alias; "missing" if no report has it."""
        if test_id in self.tests:
            return self.tests[test_id]
        canonical = self.aliases.get(test_id)
        return self.tests[canonical] if canonical else "missing"


def _relative(path: str) -> str:
    for prefix in REPO_PREFIXES:
        if path.startswith(prefix):
            return path[len(prefix) :].lstrip("/")
    return path


# -- JUnit XML (pytest's and everyone else's) ---------------------------------------------------


def junit(text: bytes, out: Verdicts) -> bool:
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return False
    if root.tag not in ("testsuites", "testsuite"):
        return False
    pytest = any(s.get("name") == "pytest" for s in root.iter("testsuite"))
    out.formats.add("pytest-junit" if pytest else "junit")
    for suite in root.iter("testsuite"):
        _junit_suite(suite, pytest, out)
    return True


def _junit_suite(suite: ET.Element, pytest: bool, out: Verdicts) -> None:
    """The suite's cases, and (beyond pytest's) the suite itself by its name: the worst of its
    cases (a tape test, a test class)."""
    worst = None
    for case in suite.findall("testcase"):
        classname = case.get("classname") or ("" if pytest else suite.get("name") or "")
        name = case.get("name") or ""
        status = "passed"
        for child in case:
            if child.tag == "failure":
                status = "failed"
            elif child.tag == "error":
                status = "error"
            elif child.tag == "skipped" and status == "passed":
                status = "skipped"
        if pytest:
            out.add(_pytest_id(classname, name, case.get("file")), status,
                    f"{classname}.{name}" if classname else name)  # fmt: skip
        else:
            canonical = f"{classname}::{name}" if classname else name
            out.add(canonical, status, f"{classname}.{name}" if classname else name)
        if worst is None or _RANK[status] > _RANK[worst]:
            worst = status
    if not pytest and worst is not None and suite.get("name"):
        out.add(str(suite.get("name")), worst)


def _pytest_id(classname: str, name: str, file: str | None) -> str:
    """pytest's node id from junit's classname (module path with dots, then classes) and the
    file (junit_family=xunit1 gives it)."""
    if not file:
        return f"{classname}::{name}" if classname else name
    file = _relative(file)
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    rest = classname[len(module) :].lstrip(".") if classname.startswith(module) else ""
    return "::".join([file, *(rest.split(".") if rest else []), name])


# -- jest and vitest JSON -------------------------------------------------------------------------

_JEST = {"passed": "passed", "failed": "failed", "pending": "skipped", "skipped": "skipped",
         "todo": "skipped", "disabled": "skipped"}  # fmt: skip


def jest(text: bytes, out: Verdicts) -> bool:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(data, dict) or not isinstance(data.get("testResults"), list):
        return False
    out.formats.add("jest")
    for suite in data["testResults"]:
        if not isinstance(suite, dict):
            continue
        file = _relative(str(suite.get("name") or suite.get("testFilePath") or ""))
        cases = suite.get("assertionResults") or []
        for case in cases if isinstance(cases, list) else ():
            if not isinstance(case, dict):
                continue
            titles = [str(t) for t in case.get("ancestorTitles") or [] if t]
            title = str(case.get("title") or "")
            status = _JEST.get(str(case.get("status")), "failed")
            full = str(case.get("fullName") or " ".join([*titles, title]))
            out.add(" > ".join([file, *titles, title]), status, full)
        if not cases and suite.get("status") == "failed":  # the file did not even load
            out.add(file, "error")
    return True


# -- go test -json --------------------------------------------------------------------------------

_GO = {"pass": "passed", "fail": "failed", "skip": "skipped"}


def go_json(text: bytes, out: Verdicts) -> bool:
    found = False
    for line in text.splitlines():
        if not line.startswith(b"{"):
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(event, dict) or "Action" not in event:
            continue
        found = True
        test, action = event.get("Test"), event.get("Action")
        if isinstance(test, str) and action in _GO:
            out.add(f"{event.get('Package', '')}::{test}", _GO[str(action)], test)
    if found:
        out.formats.add("go-json")
    return found


# -- cargo test's output --------------------------------------------------------------------------

_CARGO = re.compile(rb"^test (\S+?)(?: - should panic)? \.\.\. (ok|FAILED|ignored)\b", re.M)
_CARGO_STATUS = {b"ok": "passed", b"FAILED": "failed", b"ignored": "skipped"}


def cargo(text: bytes, out: Verdicts) -> bool:
    matches = _CARGO.findall(text)
    for name, status in matches:
        out.add(name.decode(errors="replace"), _CARGO_STATUS[status])
    if matches:
        out.formats.add("cargo")
    return bool(matches)


PARSERS = (junit, jest, go_json, cargo)


def parse_all(reports: dict[str, bytes], stdout: bytes) -> Verdicts:
    """Every report file (by name: .xml as JUnit, .json as jest/vitest or go's events, else
    text) and then the run's stdout (go's events, cargo's lines), into one set of verdicts."""
    out = Verdicts()
    for name, data in sorted(reports.items()):
        suffix = PurePosixPath(name).suffix
        order = {".xml": (junit,), ".json": (jest, go_json)}.get(suffix, (go_json, cargo))
        for parser in order:
            if parser(data, out):
                break
    if not out.tests:
        for parser in (go_json, cargo):
            if parser(stdout, out):
                break
    return out
