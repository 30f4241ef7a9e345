"""What each dataset family hands a native language's split (a row of dialects.py: its
`Split`), made into that language's `Side`: the dataset's prompt, declarations, prelude and
tests, and the answer's code as the family extracted it."""

from __future__ import annotations

import re
from typing import Any

from sandlot.judge.extract import fenced_blocks
from sandlot.judge.plans import Program
from sandlot.judge.split import Side, Splitter, program

# A MultiPL-E prompt's lines a whole answer needs before it (includes, imports, uses).
PRELUDE = re.compile(r"^(#include|import |using |use |require|const \w+ = require|<\?php)")


def humaneval_x(
    splitter: Splitter, language: str, head: str, row: dict[str, Any], code: str, whole: bool,
    **kw: Any,
) -> Program | str | None:  # fmt: skip
    """HumanEval-X: the tests call what the row's declaration (else its prompt) declares."""
    prompt, test = row["prompt"], row["test"]
    side = Side(code, whole, prompt, test, row.get("declaration") or prompt, head, row)
    return program(language, splitter(side), test, **kw)


def multiple(
    splitter: Splitter, language: str, head: str, prompt: str, code: str, whole: bool, tests: str,
    **kw: Any,
) -> Program | str | None:  # fmt: skip
    """MultiPL-E (`code` a body cut at the row's stop tokens, or a whole answer). Its tests begin
    by closing the prompt's function (`}`): that line ends a body's unit; a whole answer closed
    it itself and gets the prompt's prelude lines (imports, includes) it lacks."""
    first, _, rest = tests.partition("\n")
    closes = first.strip() == "}"
    if whole:
        present = set(code.split("\n"))
        prelude = "".join(f"{ln}\n" for ln in prompt.split("\n")
                          if PRELUDE.match(ln) and ln not in present)  # fmt: skip
        code = prelude + code
    elif closes:
        code += "\n}\n"
    side = Side(code, whole, prompt, rest if closes else tests, prompt, head)
    return program(language, splitter(side), tests, **kw)


def insert(
    splitter: Splitter, language: str, fences: tuple[str, ...], template: str, code: str,
    content: str, **kw: Any,
) -> Program | str | None:  # fmt: skip
    """An `#<INSERT>` row: what precedes the slot is both units' prelude, what follows it the
    tests; they call what the prompt's code block (in one of `fences`) declares."""
    slot = template.find("#<INSERT>")
    side = Side(code, True, "", template[slot + len("#<INSERT>") :], prompt_code(content, fences),
                template[:slot])  # fmt: skip
    return program(language, splitter(side), template, **kw)


def cruxeval(code: str, test: str, **kw: Any) -> None:
    """CRUXEval-X: the answer is a literal in the test, read by crux.py; nothing to split."""
    return None


def prompt_code(content: str, fences: tuple[str, ...]) -> str:
    """The code a table's prompt shows (its last fenced block tagged with one of `fences`, or
    untagged): what the tests may call, as the dataset declares it; "" when it has none."""
    names = {name.lower() for name in fences}
    blocks = [
        b
        for b in fenced_blocks(content)
        if b.language is None or b.language.lower() in names or b.tag.lower() in names
    ]
    return blocks[-1].code if blocks else ""
