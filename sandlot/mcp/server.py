"""sandlot's MCP server: its tools over one Service, and what it tells a client on connecting.

The tools are faces like the HTTP routes: they build the same requests, call the same layers and
shape the same results; no decision is made here. `build` gives the server and the record of
what each connection opened (`caller.Opened`), which its transport ends when the connection does.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from sandlot import __version__
from sandlot.mcp import coder_tools, repo_tools, run_tools, session_tools
from sandlot.mcp.caller import Opened
from sandlot.service import Service
from sandlot.usecases import end_session

INSTRUCTIONS = """\
sandlot runs untrusted code in isolated boxes (no network, limits on time, memory and output)
in ~30 languages, judges code against tests, and sends repository work to Aider.
- Run a snippet safely, or code a model wrote: run_code. Keep state across calls (a Python
  kernel or a bash shell, files, variables): session_create, session_run, session_close; set one
  up once and try several things from there: session_fork, session_snapshot.
- Does this code pass these tests? run_tests with your cases; a benchmark problem: judge.
- Add a feature, fix a bug or write tests in a repository: code (Aider on a new branch,
  proven by the repository's tests); repo_test runs those tests alone; repo_grade grades a
  patch SWE-bench style (tests restored, resolved or not, test edits named).
- Unsure which? route says which tool and why.
"""


def build(service: Service) -> tuple[MCPServer, Opened]:
    opened = Opened(lambda session_id: end_session(service, session_id))
    server: MCPServer = MCPServer(
        "sandlot", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    run_tools.register(server, service)
    session_tools.register(server, service, opened)
    coder_tools.register(server, service)
    repo_tools.register(server, service)
    return server, opened
