"""sandlot's pytest guard (sandlot/executor/guards/frameworks.py): a plugin that writes the run's
seal, with pytest's counts, when the session ends with every test passed.

Loaded by `-p` before any conftest or test module: it reads the secret and removes it, and itself,
at import, and keeps them in closures only. It runs in the box, never in the server.
"""

import os
import sys


def _plugin():
    write = os.write
    with open(".sandlot_seal", "rb") as f:
        seal = f.read()
    os.unlink(".sandlot_seal")
    os.unlink(__file__)
    counts = {"passed": 0, "failed": 0, "skipped": 0}

    class SandlotSeal:
        def pytest_collectreport(self, report):
            if report.failed:
                counts["failed"] += 1
            elif report.skipped:
                counts["skipped"] += 1

        def pytest_runtest_logreport(self, report):
            if report.failed:
                counts["failed"] += 1
            elif report.skipped:  # a skip, or an expected failure
                counts["skipped"] += 1
            elif report.when == "call":
                counts["passed"] += 1

        def pytest_sessionfinish(self, session, exitstatus):
            if exitstatus == 0 and counts["failed"] == 0:
                payload = " ".join(f"{k}={v}" for k, v in counts.items()).encode()
                write(1, seal + payload + seal + b"\n")

    guard = SandlotSeal()

    def pytest_configure(config):
        config.pluginmanager.register(guard, "sandlot-seal")
        sys.modules.pop(__name__, None)  # not for the tests to import: pytest holds it

    return pytest_configure


pytest_configure = _plugin()
del _plugin
