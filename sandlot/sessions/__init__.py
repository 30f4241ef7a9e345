"""sessions — boxes that live across requests: Jupyter kernels and shells for agents, and
the fresh kernel of each `/run_jupyter` notebook.

Imports the jail (live boxes) and the languages table; never the API, the executor or the judge.
"""

from sandlot.sessions.events import Result
from sandlot.sessions.forks import Paused
from sandlot.sessions.manager import LANGUAGES, MIN_MEMORY_MB, SessionManager, bounded, worker_of
from sandlot.sessions.notebooks import NotebookRun, run_notebook
from sandlot.sessions.session import Execution, Session
from sandlot.sessions.snapshots import Snapshot

__all__ = [
    "LANGUAGES",
    "MIN_MEMORY_MB",
    "Execution",
    "NotebookRun",
    "Paused",
    "Result",
    "Session",
    "SessionManager",
    "Snapshot",
    "bounded",
    "run_notebook",
    "worker_of",
]
