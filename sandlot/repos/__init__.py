"""repos — repository tasks in phases: setup (dependencies, through the egress proxy), work (no
network) and grade (no network, tests restored from the base, history up to the base).

Its names are imported on first use (sandlot/faces.py): repos and coder import each other's
modules, and each command needs few of them.
"""

from __future__ import annotations

from sandlot.faces import lazy

__all__: list[str] = []
__getattr__ = lazy(__name__, {})
