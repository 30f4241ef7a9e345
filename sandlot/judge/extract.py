"""Code extraction from a model's raw completion.

A completion may hold fenced blocks (``` or ~~~, any info string), an unclosed fence (the model
was cut off), or bare code, possibly continuing the prompt. The result says which it was:
`kind` is SandboxFusion's `extracted_type` (fenced, incomplete_fenced, heuristic, empty) and
`how` says in words which block was taken and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Fence info strings -> sandlot language names. Unknown tags are kept as written (lower case).
TAG_LANGUAGES = {
    "py": "python", "python3": "python", "py3": "python", "python": "python", "ipython": "python",
    "pycon": "python",
    "c++": "cpp", "cpp": "cpp", "cxx": "cpp", "cc": "cpp", "hpp": "cpp", "h": "c", "c": "c",
    "java": "java", "js": "nodejs", "javascript": "nodejs", "node": "nodejs", "nodejs": "nodejs",
    "jsx": "nodejs", "mjs": "nodejs", "ts": "typescript", "typescript": "typescript",
    "go": "go", "golang": "go", "rust": "rust", "rs": "rust",
    "bash": "bash", "sh": "bash", "shell": "bash", "zsh": "bash", "console": "bash",
    "php": "php", "rb": "ruby", "ruby": "ruby", "r": "R", "lua": "lua", "perl": "perl",
    "pl": "perl", "cs": "csharp", "csharp": "csharp", "c#": "csharp", "kotlin": "kotlin",
    "kt": "kotlin", "scala": "scala", "swift": "swift", "julia": "julia", "jl": "julia",
    "racket": "racket", "rkt": "racket", "d": "D_ut", "verilog": "verilog", "sql": "sql",
    "pytest": "python",
}  # fmt: skip

_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n`]*$")
_PY_START = re.compile(
    r"^(def |async def |class |import |from \w|@\w|if __name__|[A-Za-z_][\w.]*\s*(=|\())"
)
_LOOSE_START = re.compile(r"^(#include|package |import |using |fn |func |public |def |class |"
                          r"function |const |let |var |#!|[a-z_]\w*\s*\()")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Block:
    code: str
    tag: str  # the info string as written ("" when none)
    language: str | None  # the sandlot language the tag names
    closed: bool


@dataclass(frozen=True, slots=True)
class Extracted:
    code: str
    kind: str  # fenced | incomplete_fenced | heuristic | empty
    how: str
    language: str | None = None  # the chosen block's language, when its fence said
    continuation: bool = False  # bare code that continues the prompt (an indented body)


def language_of_tag(tag: str) -> str | None:
    tag = tag.strip().lower().lstrip("{.").rstrip("}")
    return TAG_LANGUAGES.get(tag, tag or None)


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block in order; a last one left open runs to the end of the text."""
    blocks: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag = m.group(1), m.group(2)
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * 3) and stripped.strip(fence[0]) == "":
                closed = True
                break
            body.append(lines[j])
            j += 1
        code = "\n".join(body)
        # A quirk of some models: a bare fence, then the language name alone on the next line.
        if not tag and body and language_of_tag(body[0]) in set(TAG_LANGUAGES.values()):
            tag, code = body[0].strip(), "\n".join(body[1:])
        blocks.append(Block(code, tag, language_of_tag(tag) if tag else None, closed))
        i = j + 1
    return blocks


def _choose(
    blocks: list[Block], language: str | None, entry_point: str | None
) -> tuple[Block, str]:
    pool, why = blocks, "the first block"
    if language:
        same = [b for b in blocks if b.language == language]
        untagged = [b for b in blocks if b.language is None]
        if same:
            pool, why = same, f"the first {language} block"
        elif untagged:
            pool, why = untagged, "the first untagged block (none is tagged " + language + ")"
        else:
            why = f"the first block (none is {language})"
    if entry_point and len(pool) > 1:
        defining = [b for b in pool if re.search(rf"\b{re.escape(entry_point)}\b", b.code)]
        if defining and defining[0] is not pool[0]:
            return defining[0], f"the first block naming {entry_point} (not {why})"
    return pool[0], why


def extract(
    completion: str,
    language: str | None = None,
    entry_point: str | None = None,
    block_index: int | None = None,
) -> Extracted:
    """The code to judge in `completion`, for a program in `language`."""
    if not completion.strip():
        return Extracted("", "empty", "the completion is empty")
    blocks = fenced_blocks(completion)
    closed = [b for b in blocks if b.closed]
    if closed:
        if block_index is not None and -len(closed) <= block_index < len(closed):
            block, why = closed[block_index], f"block {block_index} as asked"
        else:
            block, why = _choose(closed, language, entry_point)
        if not block.code.strip():
            return Extracted("", "empty", "the fenced block is empty")
        count = f"{len(closed)} fenced blocks" if len(closed) > 1 else "one fenced block"
        return Extracted(block.code, "fenced", f"{why} of {count}", block.language)
    if blocks:
        block = blocks[-1]
        if not block.code.strip():
            return Extracted("", "empty", "the only fence is open and empty")
        return Extracted(
            block.code, "incomplete_fenced", "an unclosed fence: from it to the end", block.language
        )
    return _bare(completion, language)


def _bare(text: str, language: str | None) -> Extracted:
    """No fences: bare code, possibly after some prose, possibly continuing the prompt."""
    lines = text.split("\n")
    first = next((ln for ln in lines if ln.strip()), "")
    if first[:1] in (" ", "\t"):
        return Extracted(text, "heuristic", "bare code continuing the prompt", continuation=True)
    start = _PY_START if language in (None, "python", "pytest") else _LOOSE_START
    for i, line in enumerate(lines):
        if start.match(line):
            skipped = f" after {i} line(s) of prose" if i else ""
            return Extracted("\n".join(lines[i:]), "heuristic", f"bare code{skipped}")
    if language not in (None, "python", "pytest") and any(c in text for c in ";{}=("):
        return Extracted(text, "heuristic", "bare code, taken whole")
    return Extracted("", "empty", "no code in the completion: no fence and no line of code")


def cut_at(code: str, markers: tuple[str, ...]) -> str:
    """`code` up to the first of `markers` (model rambling after the answer)."""
    end = len(code)
    for marker in markers:
        pos = code.find(marker)
        if pos != -1:
            end = min(end, pos)
    return code[:end]
