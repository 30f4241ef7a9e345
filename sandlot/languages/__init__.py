"""languages — the table of what sandlot can run: one row per language, data only.

Adding a language is one row in its family's module (`scripting.py`, `native.py`, `jvm.py`,
`node.py`, `csharp.py`, `verilog.py`, `external.py`; `table.py` assembles them in order), its
hello world in `hello.py`, plus its tests; the engine has no per-language code (judging's
per-language knowledge: sandlot/judge/dialects.py).
"""

from sandlot.languages.registry import Language, Registry
from sandlot.languages.table import LANGUAGES

__all__ = ["LANGUAGES", "Language", "Registry"]
