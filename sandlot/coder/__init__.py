"""coder — the AI-coding route: `route` (which tool serves a request), Aider run as a subprocess
in a git worktree, and the edit → tests in the sandbox → feedback loop (research/aider.md §4).

Its other names are imported on first use (sandlot/faces.py): wire's models take the defaults
and `route` from here, which must not load the loop, and the loop's jobs and repos import each
other. `route` and `git` are imported at once (both cheap): a lazy name cannot hide the module
of the same name.
"""

from __future__ import annotations

from sandlot.coder.git import git
from sandlot.coder.route import Decision, route
from sandlot.faces import lazy

__all__ = ["Decision", "git", "route"]
__getattr__ = lazy(__name__, {})
