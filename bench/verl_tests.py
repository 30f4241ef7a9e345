"""verl's own SandboxFusion test file, unchanged, against a sandlot server started here.

verl ships its reward code in its wheel (`make setup` installs it, without its dependencies),
but its tests only in its repository: pass the path of
`tests/utils/reward_score/reward_score/test_sandbox_fusion_on_cpu.py` from a checkout of verl.
The file imports `verl.utils.reward_score.sandbox_fusion.utils`; the package `verl` itself
imports torch, which the reward code does not use, so a throwaway package tree holding only the
installed `sandbox_fusion` package goes first on the tests' path.

Two of its tests send 100 cases at once (all CPU-bound for 10 s in one of them); on a few slots
that is overload, which verl survives only when answered 504 (it retries nothing else) before its
own read timeout (compile + run timeout + 10 s). Reported: each test's outcome, and from the
server's access log what it did with the load: answers by status (499: the client had gone),
runs done for clients that had gone, and how long the server took to drain once the tests
ended.

    .venv/bin/python bench/verl_tests.py --tests PATH/test_sandbox_fusion_on_cpu.py [--slots 2]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from engine import STATE_DIR, server_health, start_server, stop_server, wait_ping

GONE = 499  # the access log's status of a request whose client left before its answer


def verl_shim(root: Path) -> Path:
    """A package tree `verl.utils.reward_score` whose `sandbox_fusion` is the installed one."""
    try:
        dist = importlib.metadata.distribution("verl")
    except importlib.metadata.PackageNotFoundError:
        sys.exit("verl is not installed: `make .venv/.installed-test` installs it")
    pkg = root / "verl" / "utils" / "reward_score"
    pkg.mkdir(parents=True)
    for part in (root / "verl", root / "verl" / "utils", pkg):
        (part / "__init__.py").write_text("")
    (pkg / "sandbox_fusion").symlink_to(
        Path(str(dist.locate_file("verl/utils/reward_score/sandbox_fusion")))
    )
    return root


def run_tests(tests: Path, url: str, shim: Path, report: Path, keyword: str | None) -> float:
    env = {**os.environ, "PYTHONPATH": str(shim), "SANDBOX_FUSION_URL": f"{url}/run_code"}
    argv = [sys.executable, "-m", "pytest", str(tests), "-q", "-p", "no:cacheprovider",
            "-c", os.devnull, "--rootdir", str(tests.parent), f"--junitxml={report}"]  # fmt: skip
    if keyword:
        argv += ["-k", keyword]
    started = time.monotonic()
    subprocess.run(argv, env=env, cwd=tests.parent, check=False)
    return time.monotonic() - started


def outcomes(report: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        out[case.get("name", "?")] = (
            "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds
            else "passed"
        )  # fmt: skip
    return out


def drain_seconds(url: str) -> float:
    """From now until the server has nothing running and nothing queued."""
    started = time.monotonic()
    while True:
        health = server_health(url)
        if health.get("busy", 1) == 0 and health.get("queued", 1) == 0:
            return time.monotonic() - started
        time.sleep(0.2)


def access_lines(log: Path) -> list[dict[str, object]]:
    lines = []
    for text in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if line.get("logger") == "sandlot.access" and line.get("endpoint") == "/run_code":
            lines.append(line)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tests", type=Path, required=True,
                    help="verl's test_sandbox_fusion_on_cpu.py")  # fmt: skip
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("-k", dest="keyword", help="only the tests pytest's -k selects")
    ap.add_argument("--out", type=Path, help="also write the figures here, as JSON")
    ap.add_argument("--log", type=Path, help="keep the server's log here")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        env = {"SANDLOT_STATE_DIR": f"{STATE_DIR}-verl", "SANDLOT_LOG_FORMAT": "json",
               "SANDLOT_SESSION_POOL": "0"}  # fmt: skip
        proc, url = start_server(args.slots, log, env)
        try:
            wait_ping(url, proc, log)
            report = Path(tmp) / "junit.xml"
            seconds = run_tests(args.tests.resolve(), url, verl_shim(Path(tmp) / "shim"),
                                report, args.keyword)  # fmt: skip
            drain = drain_seconds(url)
        finally:
            stop_server(proc)
        results, lines = outcomes(report), access_lines(log)
        if args.log:
            args.log.write_bytes(log.read_bytes())
    statuses = Counter(int(str(line["status"])) for line in lines)
    seconds_each = [float(str(line["duration_ms"])) / 1000 for line in lines]
    gone = [line for line in lines if line["status"] == GONE]
    figures = {
        "tests": results,
        "passed": sum(v == "passed" for v in results.values()),
        "of": len(results),
        "tests_s": round(seconds, 1),
        "drain_s": round(drain, 1),
        "run_code_answers": dict(sorted(statuses.items())),
        "client_gone_dropped_unrun": sum(1 for line in gone if not line.get("runs")),
        "client_gone_after_running": sum(1 for line in gone if line.get("runs")),
        # verl's read timeout at its default 10 s timeouts: a slower answer reached no one
        "answered_after_30s": sum(1 for s in seconds_each if s > 30),
        "slowest_answer_s": round(max(seconds_each, default=0.0), 1),
    }
    for name, outcome in results.items():
        print(f"{outcome:7} {name}")
    print(json.dumps({k: v for k, v in figures.items() if k != "tests"}, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
