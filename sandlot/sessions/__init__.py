"""sessions — boxes that live across requests: Jupyter kernels and shells for agents, and
the fresh kernel of each `/run_jupyter` notebook.

Imports the jail (live boxes) and the languages table; never the API, the executor or the judge.
"""

from sandlot.sessions.events import Result
from sandlot.sessions.manager import SessionManager
from sandlot.sessions.notebooks import NotebookRun, run_notebook
from sandlot.sessions.session import Execution, Session

__all__ = ["Execution", "NotebookRun", "Result", "Session", "SessionManager", "run_notebook"]
