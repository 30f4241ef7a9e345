"""Reports test runners leave in the work dir, read into `EvalResult.extra` as SandboxFusion does.

jest (the `jest` row) writes its aggregated results to `jest-report.json`; SandboxFusion's
AutoEval returns them as `extra.jest_cases`, one entry per test. The report comes from the box
(the tests' own process can rewrite it), so it is parsed defensively and never decides a verdict:
the run's exit status does.
"""

from __future__ import annotations

import json
from typing import Any

JEST_REPORT = "jest-report.json"
MAX_CASES = 10_000  # a report listing more tests is cut here
# The report each runner (a language row's name) leaves, which the judge fetches.
REPORTS = {"jest": JEST_REPORT}


def fetch_for(language: str) -> tuple[str, ...]:
    return (REPORTS[language],) if language in REPORTS else ()


def jest_cases(report: bytes) -> list[dict[str, Any]] | None:
    """One entry per test of a jest report (passed, full_name, file, suite, test,
    failure_messages), or None when the report is not one."""
    try:
        data = json.loads(report)
    except (ValueError, RecursionError):
        return None
    suites = data.get("testResults") if isinstance(data, dict) else None
    if not isinstance(suites, list):
        return None
    cases: list[dict[str, Any]] = []
    for suite in suites:
        if not isinstance(suite, dict) or not isinstance(suite.get("testResults"), list):
            continue
        for case in suite["testResults"]:
            if not isinstance(case, dict) or len(cases) >= MAX_CASES:
                continue
            titles = case.get("ancestorTitles")
            cases.append({
                "passed": case.get("status") == "passed",
                "full_name": case.get("fullName"),
                "file": suite.get("testFilePath"),
                "suite": " > ".join(str(t) for t in titles) if isinstance(titles, list) else "",
                "test": case.get("title"),
                "failure_messages": case.get("failureMessages") or [],
            })  # fmt: skip
    return cases
