"""repos — repository tasks in phases: setup (dependencies, through the egress proxy), work (no
network) and grade (no network, tests restored from the base, history up to the base).

Its names are imported on first use (sandlot/faces.py): each command needs few of them. Who
runs git on a repository of the machine (`Owner`, `run_git`) and which ones a server may work on
(`confined`) are here, below the coder, which works on those repositories too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandlot.faces import lazy

if TYPE_CHECKING:
    from sandlot.repos.gitrun import run_git
    from sandlot.repos.owner import Owner, as_owner, confined
    from sandlot.repos.source import bundle_from_path, working_patch
    from sandlot.repos.store import Store
    from sandlot.repos.tasks import GradeTask, Repos, Repository, by_kind

__all__: list[str] = [
    "GradeTask",
    "Owner",
    "Repos",
    "Repository",
    "Store",
    "as_owner",
    "bundle_from_path",
    "by_kind",
    "confined",
    "run_git",
    "working_patch",
]
__getattr__ = lazy(
    __name__,
    {
        "GradeTask": "sandlot.repos.tasks",
        "Owner": "sandlot.repos.owner",
        "Repos": "sandlot.repos.tasks",
        "Repository": "sandlot.repos.tasks",
        "Store": "sandlot.repos.store",
        "as_owner": "sandlot.repos.owner",
        "bundle_from_path": "sandlot.repos.source",
        "by_kind": "sandlot.repos.tasks",
        "confined": "sandlot.repos.owner",
        "run_git": "sandlot.repos.gitrun",
        "working_patch": "sandlot.repos.source",
    },
)
