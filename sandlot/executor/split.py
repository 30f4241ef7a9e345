"""Split builds: a judge's answer compiled apart from its harness, checked, then linked.

A row with a `split` (sandlot/languages/registry.py) builds a request that carries `harness`
files in up to two steps, each through the compile cache: the harness alone (the same for every
answer to a problem, so it is compiled once), then the answer with the harness's artifacts, in
one box that compiles it, checks the symbols of its object against the harness's and the runtime
libraries' (guards/symbols.py, run in the box) and links the program. A refused answer is a
failed build whose stderr says why.

The runtime libraries' symbols are read here, in the server, once per row: they are the
toolchain's own files, which the boxes see at the same paths.
"""

from __future__ import annotations

import glob
from functools import cache
from pathlib import Path

from sandlot.executor.guards import symbols
from sandlot.languages import Language

CHECKER = ".sandlot_symbols.py"
RUNTIME = ".sandlot_runtime.syms"
_CHECKER_TEXT = (Path(__file__).parent / "guards" / "symbols.py").read_bytes()


@cache
def _runtime(patterns: tuple[str, ...], runtime_dir: str) -> bytes:
    paths = sorted({p for pattern in patterns
                    for p in glob.glob(pattern.format(runtime=runtime_dir))})  # fmt: skip
    return ("\n".join(symbols.runtime_symbols(paths)) + "\n").encode()


def tool_files(row: Language, runtime_dir: str) -> dict[str, bytes]:
    """What every step of a row's split build gets besides its sources: the checker, and the
    list of what the runtime libraries define."""
    assert row.split is not None
    return {CHECKER: _CHECKER_TEXT, RUNTIME: _runtime(row.split.runtime, runtime_dir)}
