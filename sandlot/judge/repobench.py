"""RepoBench-C: next-line completion, judged as SandboxFusion judges it.

The completion's first line that is not blank or a comment must equal the row's `next_line`
token for token (split on whitespace). Python checks that in the sandbox (an assertion over the
two token lists); Java decides in the judge and runs a program that passes or fails by it, as
SandboxFusion does, so both give one test with its exec_info.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandlot.judge.extract import Extracted
from sandlot.judge.plans import Assembled, JudgeConfig, Program

_JAVA = """
public class Main {
    public static void main(String[] args) {
        String completion = "some value";
        String nextLine = "%s";
        assert completion.equals(nextLine);
    }
}"""


@dataclass(frozen=True, slots=True)
class _Language:
    line: str  # what starts a line comment
    opens: tuple[str, ...]  # what starts a block comment (or a docstring) on a line
    closes: tuple[str, ...]  # what ends one at a line's end
    # (the first code line's tokens, next_line's) -> the program that passes iff they are equal
    program: Callable[[list[str], list[str]], str]


def _python(got: list[str], want: list[str]) -> str:
    return f"\ndef check():\n    assert {got!r} == {want!r}\ncheck()\n"


def _java(got: list[str], want: list[str]) -> str:
    return _JAVA % ("some value" if got == want else "some other value")


_LANGUAGES = {
    "python": _Language("#", ('"""', "'''"), ('"""', "'''"), _python),
    "java": _Language("//", ("/*",), ("*/",), _java),
}


def first_code_line(text: str, language: str) -> str:
    """The first line that is not blank, a comment or inside a block comment (else the first)."""
    syntax = _LANGUAGES[language]
    lines = text.lstrip("\n").split("\n")
    in_block = False
    for line in lines:
        bare = line.strip()
        if not bare:
            continue
        if not in_block and bare.startswith(syntax.opens):
            in_block = True
            continue
        if in_block:
            if bare.endswith(syntax.closes):
                in_block = False
            continue
        if bare.startswith(syntax.line):
            continue
        return line
    return lines[0]


def build(row: dict[str, Any], completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = p.get("language") or "python"
    line = first_code_line(completion, language)
    code = _LANGUAGES[language].program(line.split(), str(row["next_line"]).split())
    ex = Extracted(line, "heuristic", "the first line that is not a comment")
    return Assembled(ex, Program(language, code, code, run_timeout=30))
