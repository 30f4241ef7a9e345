"""Public faces: each layer's package `__init__` lists in `__all__` what other layers may
import from it, FACES pins those lists, and no module of sandlot (nor an example or script)
imports another layer's modules past its face. Imports within one layer are free.

A face changes on purpose: add or drop its name in FACES in the commit that needs it. A face
whose names are imported on first use (sandlot/faces.py) must offer each from the module its
table names.

The tests (this folder) and the benchmarks (bench/) may import a layer's modules: they test and
measure the rooms behind the faces, which no other layer sees.
"""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sandlot"
CALLERS = ("sandlot", "examples", "scripts")

# faces:start
# Written by the faces rewrite (kept outside the repository); edit by hand after that.
FACES: dict[str, list[str]] = {}
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
