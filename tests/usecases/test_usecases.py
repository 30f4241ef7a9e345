"""sandlot.usecases: its public names, each the function or class it says (never a module of the
same name), imported only when used."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

CHECK = """
import sys, types
from sandlot import usecases
from sandlot.usecases import run, run_tests
assert "sandlot.judge" not in sys.modules, "running code imported the judge"
for name in usecases.__all__:
    got = getattr(usecases, name)
    assert not isinstance(got, types.ModuleType), name
    assert got.__module__.startswith("sandlot.usecases."), name
print("ok")
"""


def test_every_public_name_is_what_it_says_and_loads_lazily() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
