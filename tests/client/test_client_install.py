"""A client-only install (`pip install sandlot`, no server extra) in a real virtualenv.

The venv gets exactly the distributions that pyproject.toml's core `dependencies` pull in,
linked from this interpreter's site-packages (no network, no build), and sandlot itself on a
.pth line, as an editable install puts it. FastAPI, Starlette and uvicorn are not there at all.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.conftest import ROOT, Server

GOOD = "    return [x for x in strings if substring in x]\n"  # HumanEval/7's

SERVER_ONLY = {"fastapi", "starlette", "uvicorn", "pyseccomp", "prometheus_client"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def core_closure(extras: tuple[str, ...] = ()) -> set[str]:
    """The distributions the core dependencies (and sandlot's `extras`) need here, transitively
    (none of theirs)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    todo, seen = [Requirement(r) for r in wanted], set()
    while todo:
        req = todo.pop()
        key = normalized(req.name)
        if key in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(key)
        todo += [Requirement(r) for r in md.requires(req.name) or []]
    return seen


def top_level(dist: str) -> set[Path]:
    """The importable files and folders a distribution installed."""
    out = set()
    d = md.distribution(dist)
    for f in d.files or []:
        first = f.parts[0]
        if first in ("..", "__pycache__") or first.endswith((".dist-info", ".pth")):
            continue
        out.add(Path(str(d.locate_file(first))))
    return out


def make_venv(where: Path) -> Path:
    venv.create(where / "venv", with_pip=False, symlinks=True)
    python = where / "venv" / "bin" / "python"
    site = next((where / "venv" / "lib").glob("python3*/site-packages"))
    deps = where / "deps"
    deps.mkdir()
    for dist in core_closure():
        for path in top_level(dist):
            if not (deps / path.name).exists():
                (deps / path.name).symlink_to(path)
    (site / "sandlot.pth").write_text(f"{deps}\n{ROOT}\n")
    return python


CHECK = """
import importlib.util, sys
import sandlot.client, sandlot.wire.run, sandlot.wire.judge, sandlot.wire.coder
from sandlot.client import AsyncClient, Client, ServerError
server = {server!r}
assert all(importlib.util.find_spec(name) is None for name in server), "a server package is here"
loaded = sorted(m for m in sys.modules if m.split(".")[0] in server or m.startswith("sandlot.api"))
assert not loaded, loaded
assert sys.prefix != {ours!r}, "not the test's own interpreter"
print("client ok")
"""


def test_the_client_installs_and_imports_without_the_server(tmp_path: Path):
    python = make_venv(tmp_path)
    assert not {normalized(n) for n in SERVER_ONLY} & core_closure(), "a server package is core"
    check = CHECK.format(server=SERVER_ONLY, ours=sys.prefix)
    done = subprocess.run([python, "-c", check], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "client ok" in done.stdout, done.stderr
    # The CLI is there too; its server command says which extra it needs.
    done = subprocess.run([python, "-m", "sandlot", "serve"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "sandlot[server]" in done.stderr, done.stderr


@pytest.mark.root
def test_a_client_install_judges_a_samples_file_on_a_server(tmp_path: Path, server: Server):
    """`sandlot eval --server` (reading samples, the resumable results file, pass@k) needs
    neither the server's packages nor prometheus-client: the engine it imports tells its events
    to nobody there."""
    python = make_venv(tmp_path)
    samples = tmp_path / "samples.jsonl"
    rows = [{"task_id": "HumanEval/7", "completion": c} for c in (GOOD, "    return strings\n")]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run(
        [python, "-m", "sandlot", "eval", "-d", "humaneval", "-s", str(samples), "--server",
         server.url], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "accepted" in done.stdout and "1/2" in done.stdout, done.stdout
    results = samples.with_name("samples_results.jsonl").read_text().splitlines()
    verdicts = {rec["sample"]: rec["accepted"] for rec in map(json.loads, results)}
    assert verdicts == {0: True, 1: False}  # in the order they were judged
