"""What the playground's editor knows of each language row: a highlighting mode, and the row's
hello world (sandlot/languages/hello.py).

`mode` is a MIME type of the vendored CodeMirror 5 (static/vendor/codemirror/); None shows plain
text, as for a row with none here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sandlot.languages import HELLO_WORLDS


@dataclass(frozen=True, slots=True)
class Template:
    mode: str | None
    code: str
    output: str | None  # its stdout; None for a test file (it passes, prints a report)


MODES: dict[str, str | None] = {
    "python": "text/x-python",
    "pytest": "text/x-python",
    "bash": "text/x-sh",
    "c": "text/x-csrc",
    "cpp": "text/x-c++src",
    "catch2": "text/x-c++src",
    "java": "text/x-java",
    "nodejs": "text/javascript",
    "go": "text/x-go",
    "rust": "text/x-rustsrc",
    "go_test": "text/x-go",
    "junit": "text/x-java",
    "typescript": "text/typescript",
    "jest": "text/typescript",
    "php": "text/x-php",
    "ruby": "text/x-ruby",
    "perl": "text/x-perl",
    "lua": "text/x-lua",
    "R": "text/x-rsrc",
    "scala": "text/x-scala",
    "kotlin": "text/x-kotlin",
    "kotlin_script": "text/x-kotlin",
    "csharp": "text/x-csharp",
    "D_ut": "text/x-d",
    "racket": "text/x-scheme",
    "verilog": "text/x-systemverilog",
    "sql": "text/x-sql",
    "haskell": "text/x-haskell",
    "fortran": "text/x-fortran",
    "julia": "text/x-julia",
    "swift": "text/x-swift",
    "lean": None,
    "cuda": "text/x-c++src",
    "python_gpu": "text/x-python",
}
TEMPLATES: dict[str, Template] = {
    name: Template(MODES.get(name), hello.code, hello.output)
    for name, hello in HELLO_WORLDS.items()
}


def as_json() -> dict[str, dict[str, str | None]]:
    """The table as the pages read it: {language: {mode, code, output}}."""
    return {name: asdict(t) for name, t in TEMPLATES.items()}
