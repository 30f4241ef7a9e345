"""repos — repository tasks in phases: setup (dependencies, through the egress proxy), work (no
network) and grade (no network, tests restored from the base, history up to the base).

Its names are imported on first use (sandlot/faces.py): repos and coder import each other's
modules, and each command needs few of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.repos.source import bundle_from_path, git, working_patch
    from sandlot.repos.store import Store
    from sandlot.repos.tasks import GradeTask, Repos, Repository, by_kind

__all__: list[str] = [
    "GradeTask",
    "Repos",
    "Repository",
    "Store",
    "bundle_from_path",
    "by_kind",
    "git",
    "working_patch",
]
__getattr__ = lazy(
    __name__,
    {
        "GradeTask": "sandlot.repos.tasks",
        "Repos": "sandlot.repos.tasks",
        "Repository": "sandlot.repos.tasks",
        "Store": "sandlot.repos.store",
        "bundle_from_path": "sandlot.repos.source",
        "by_kind": "sandlot.repos.tasks",
        "git": "sandlot.repos.source",
        "working_patch": "sandlot.repos.source",
    },
)
