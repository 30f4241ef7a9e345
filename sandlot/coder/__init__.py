"""coder — the AI-coding route: `route` (which tool serves a request), Aider run as a subprocess
in a git worktree, and the edit → tests in the sandbox → feedback loop (research/aider.md §4).
"""

from sandlot.coder.route import Decision, route

__all__ = ["Decision", "route"]
