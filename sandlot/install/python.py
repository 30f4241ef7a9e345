"""The sandbox Python: a venv of Debian's python3 with the pinned packages."""

from __future__ import annotations

import shutil

from sandlot.install.files import (
    make_world_readable,
    prepare_runtime,
    read_stamp,
    stamp_matches,
    write_stamp,
)
from sandlot.install.process import PATH, as_nobody, run
from sandlot.install.step import Setup

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's; a pyenv or venv python would not be in the box
# The sandbox Python's packages, pinned (requirement, module it is imported as): the scientific
# stack and pytest, and what SandboxFusion's runtime has that its sample tables (bigcodebench,
# ncb_python) and RL datasets' code import: requests, bs4, lxml, matplotlib, seaborn, PIL,
# cryptography, sortedcontainers (LeetCode's), networkx. Not torch, tensorflow or the other 90
# of SandboxFusion's ~110 (data/README.md says which and why). And what sessions and
# /run_jupyter run (sandlot/sessions): ipykernel, and pyzmq, which the agent in a session's box
# speaks the Jupyter protocol over; cloudpickle, which copies a kernel's names (functions and
# classes made in cells too) into a snapshot (sessions/box/namespace.py).
SANDBOX_PYTHON_PACKAGES = (
    ("numpy==2.4.6", "numpy"), ("pandas==3.1.1", "pandas"), ("scipy==1.17.1", "scipy"),
    ("sympy==1.14.0", "sympy"), ("pytest==9.2.0", "pytest"), ("requests==2.34.2", "requests"),
    ("beautifulsoup4==4.15.0", "bs4"), ("lxml==6.1.3", "lxml"),
    ("matplotlib==3.11.2", "matplotlib"), ("seaborn==0.13.2", "seaborn"),
    ("pillow==13.0.0", "PIL"), ("cryptography==50.0.2", "cryptography"),
    ("sortedcontainers==2.4.0", "sortedcontainers"), ("networkx==3.6.1", "networkx"),
    ("ipykernel==7.4.0", "ipykernel"), ("jupyter_client==8.10.0", "jupyter_client"),
    ("pyzmq==27.3.0", "zmq"), ("cloudpickle==3.1.2", "cloudpickle"),
)  # fmt: skip


def ensure_python(setup: Setup) -> str:
    target = setup.runtime / "python"
    wanted = [req for req, _ in SANDBOX_PYTHON_PACKAGES]
    base = f"venv of {SYSTEM_PYTHON} with "
    spec = f"{base}{' '.join(wanted)}\n"
    python = target / "bin" / "python3"
    if stamp_matches(target, spec) and python.exists():
        return "ok (already present)"
    # A venv built before (another package list) is updated in place: its runs go on meanwhile.
    update = python.exists() and (read_stamp(target)[:4] == base.split())
    setup.log(f"sandbox python: installing {' '.join(wanted)} into {target} ...")
    prepare_runtime(setup)
    if not update:
        # Built in place: a venv's scripts hold absolute paths, so it cannot be renamed after.
        shutil.rmtree(target, ignore_errors=True)
        run([SYSTEM_PYTHON, "-m", "venv", str(target)])
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    run([*pip, "install", *wanted])  # pip also writes every .pyc now
    make_world_readable(target)
    imports = ", ".join(module for _, module in SANDBOX_PYTHON_PACKAGES)
    env = {"PATH": PATH, "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1",
           "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp"}  # fmt: skip
    run(as_nobody([str(python), "-c", f"import {imports}"]), env=env, cwd="/")
    write_stamp(target, spec)
    return f"{'updated' if update else 'installed'} {' '.join(wanted)} in {target}"
