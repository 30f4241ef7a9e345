"""The languages table: every family's rows, in the order sandlot lists them.

Each row is data; `registry.Language` says what the fields mean. A family's module holds its
rows and the toolchain settings only they use: `scripting.py` (interpreted from source),
`native.py` (compiled to a native program), `jvm.py`, `node.py`, `csharp.py`, `verilog.py` and
`external.py` (toolchains `sandlot setup` cannot install). Rows that need shell logic (finding
the class or object to run, copying a prewarmed cache) say it in a `/bin/sh -c` argv template,
so the engine never grows a branch for one language. Versions of what `sandlot setup` installs
are pinned beside their rows so that a cache built at set-up time (Go's build cache, the JVM
class-data archives) fits the toolchain that uses it.
"""

from __future__ import annotations

from sandlot.languages import csharp, external, jvm, native, node, scripting, verilog
from sandlot.languages.registry import Language

__all__ = ["LANGUAGES"]

# The order of `/languages`, the playground's menu and the docs' languages table, which the registry
# keeps: the most asked-for first, as before the rows were split by family. A row not named here
# (a new one) follows these, in its family's order.
_ORDER = (
    "python", "pytest", "bash", "c", "cpp", "catch2", "java", "nodejs", "go", "rust", "go_test",
    "junit", "typescript", "jest", "php", "ruby", "perl", "lua", "R", "scala", "kotlin",
    "kotlin_script", "csharp", "D_ut", "racket", "verilog", "sql", "haskell", "fortran", "julia",
    "swift", "lean", "cuda", "python_gpu",
)  # fmt: skip


def _in_order(rows: tuple[Language, ...]) -> tuple[Language, ...]:
    """`rows` in _ORDER, then those it does not name; a name in _ORDER without a row fails here."""
    by_name = {row.name: row for row in rows}
    return (*(by_name.pop(name) for name in _ORDER), *by_name.values())


LANGUAGES: tuple[Language, ...] = _in_order(
    (*scripting.ROWS, *native.ROWS, *jvm.ROWS, *node.ROWS, *csharp.ROWS, *verilog.ROWS,
     *external.ROWS)
)  # fmt: skip
