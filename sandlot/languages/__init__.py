"""languages — the table of what sandlot can run: one row per language, data only.

Adding a language is one row in its family's module (`scripting.py`, `native.py`, `jvm.py`,
`node.py`, `csharp.py`, `verilog.py`, `external.py`; `table.py` assembles them in order), its
hello world in `hello.py`, plus its tests; the engine has no per-language code (judging's
per-language knowledge: sandlot/judge/dialects.py).
"""

from sandlot.languages.csharp import ANSWER_ALIAS
from sandlot.languages.hello import HELLO_WORLDS
from sandlot.languages.jvm import JARS_DIR, JAVA, MAVEN_JARS, SPLIT_DIR, VERSIONS_FILE
from sandlot.languages.native import (
    CATCH2_DIR,
    CATCH2_FLAGS,
    CPP_FLAGS,
    CPP_PRELUDE,
    CPP_PRELUDE_DIR,
    CRATES,
    GO,
    GO_MODULES,
    RUST_BIN,
    RUST_CRATES,
    RUST_TOOLCHAIN,
)
from sandlot.languages.node import TS_TESTS
from sandlot.languages.registry import PACKAGES_STATUS, Availability, Language, Registry
from sandlot.languages.scripting import R_BOOT, R_DIR, RUBY_BOOT, RUBY_DIR
from sandlot.languages.table import LANGUAGES

__all__ = [
    "ANSWER_ALIAS",
    "CATCH2_DIR",
    "CATCH2_FLAGS",
    "CPP_FLAGS",
    "CPP_PRELUDE",
    "CPP_PRELUDE_DIR",
    "CRATES",
    "GO",
    "GO_MODULES",
    "HELLO_WORLDS",
    "JARS_DIR",
    "JAVA",
    "LANGUAGES",
    "MAVEN_JARS",
    "PACKAGES_STATUS",
    "RUBY_BOOT",
    "RUBY_DIR",
    "RUST_BIN",
    "RUST_CRATES",
    "RUST_TOOLCHAIN",
    "R_BOOT",
    "R_DIR",
    "SPLIT_DIR",
    "TS_TESTS",
    "VERSIONS_FILE",
    "Availability",
    "Language",
    "Registry",
]
