"""Code extraction from a model's raw completion.

A completion may hold fenced blocks (``` or ~~~, any info string), an unclosed fence (the model
was cut off), or bare code, possibly continuing the prompt. The result says which it was:
`kind` is SandboxFusion's `extracted_type` (fenced, incomplete_fenced, heuristic, empty) and
`how` says in words which block was taken and why.
"""

from __future__ import annotations

import ast
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
# Languages SandboxFusion takes unfenced code in (its heuristic blocks); in strict extraction an
# unfenced answer in any other language is no answer, as there.
SF_BARE_LANGUAGES = frozenset({None, "python", "pytest", "bash", "sql"})
# A shell takes any line as a command: its bare code is taken whole (SandboxFusion: all of it).
WHOLE_BARE_LANGUAGES = frozenset({"bash"})
# Languages where `#` starts a comment, so a markdown heading is harmless code there.
_HASH_COMMENTS = frozenset({"python", "pytest", "bash", "ruby", "perl", "R", "julia"})
_WORD = re.compile(r"^\(?[A-Za-z][A-Za-z'\u2019-]*[,.:;!?)]*$")
# Anything in a line that prose rarely has and code usually does.
_CODE_MARK = re.compile(r"[;{}=<>\[\]`\"$\|&]|::|->|\b[A-Za-z_]\w*\(|^\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+\S")
_BULLET = re.compile(r"^([-*+]|\d+[.)])\s+[A-Za-z`*]")


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

    @property
    def empty(self) -> bool:
        """No code to judge (an empty fenced block is still `fenced`, as in SandboxFusion)."""
        return not self.code.strip()


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
    strict: bool = False,
) -> Extracted:
    """The code to judge in `completion`, for a program in `language`.

    `strict` is SandboxFusion's extraction for its datasets: without a fence, only python, bash
    and sql answers are taken (an unfenced C++ answer is no answer there).
    """
    if not completion.strip():
        return Extracted("", "empty", "the completion is empty")
    blocks = fenced_blocks(completion)
    closed = [b for b in blocks if b.closed]
    if closed:
        if block_index is not None and -len(closed) <= block_index < len(closed):
            block, why = closed[block_index], f"block {block_index} as asked"
        else:
            block, why = _choose(closed, language, entry_point)
        count = f"{len(closed)} fenced blocks" if len(closed) > 1 else "one fenced block"
        if not block.code.strip():  # still a fenced block, as SandboxFusion reports it
            return Extracted("", "fenced", f"{why} of {count}, which is empty", block.language)
        return Extracted(block.code, "fenced", f"{why} of {count}", block.language)
    if blocks:
        block = blocks[-1]
        if not block.code.strip():
            return Extracted("", "incomplete_fenced", "the only fence is open and empty",
                             block.language)  # fmt: skip
        return Extracted(
            block.code, "incomplete_fenced", "an unclosed fence: from it to the end", block.language
        )
    return _bare(completion, language, strict)


def _bare(text: str, language: str | None, strict: bool) -> Extracted:
    """No fences: bare code, possibly between some prose, possibly continuing the prompt.

    Only lines that are surely prose are dropped, at the start and at the end: a line that
    could be code in `language` stays (the compiler decides), and `how` quotes what went.
    """
    lines = text.split("\n")
    first = next((ln for ln in lines if ln.strip()), "")
    if first[:1] in (" ", "\t"):
        return Extracted(text, "heuristic", "bare code continuing the prompt", continuation=True)
    if strict and language not in SF_BARE_LANGUAGES:
        return Extracted("", "empty", f"no fenced block; unfenced {language} code is not taken "
                         "(SandboxFusion takes unfenced python, bash and sql only)")  # fmt: skip
    if language in WHOLE_BARE_LANGUAGES:
        return Extracted(text, "heuristic", "bare code, taken whole")
    prose = _prose_lines(lines, language)
    code_at = [i for i, is_prose in enumerate(prose) if not is_prose]
    if not code_at:
        return Extracted("", "empty", "no code in the completion: no fence and only prose")
    start, end = code_at[0], code_at[-1] + 1
    dropped = [ln.strip() for ln in lines[:start] + lines[end:] if ln.strip()]
    if not dropped:
        return Extracted("\n".join(lines[start:end]), "heuristic", "bare code, taken whole")
    quoted = "; ".join(repr(ln[:60]) for ln in dropped[:3]) + (" ..." if len(dropped) > 3 else "")
    how = f"bare code; dropped {len(dropped)} line(s) of prose: {quoted}"
    return Extracted("\n".join(lines[start:end]), "heuristic", how)


def _prose_lines(lines: list[str], language: str | None) -> list[bool]:
    """Per line, whether it is surely prose (blank lines count as prose: they go with it)."""
    out: list[bool] = []
    after_prose = False
    for line in lines:
        if not line.strip():
            out.append(True)
            continue
        is_prose = _is_prose(line, language, after_prose)
        out.append(is_prose)
        after_prose = is_prose
    return out


def _is_prose(line: str, language: str | None, after_prose: bool) -> bool:
    s = line.strip()
    if not _reads_as_prose(line, s, language, after_prose):
        return False
    # A line that reads as prose is code still if Python parses it. Asked last: parsing costs
    # ten times what the rest of the extraction does (MBPP's and HumanEval's answers).
    return language not in (None, "python", "pytest") or not _parses_as_python(s)


def _reads_as_prose(line: str, s: str, language: str | None, after_prose: bool) -> bool:
    if _HEADING.match(s):
        return language not in _HASH_COMMENTS  # there a comment: harmless, so kept
    if line[:1] in (" ", "\t") or _CODE_MARK.search(s):
        return False
    s = _BULLET.sub(lambda m: m.group()[len(m.group(1)) :].lstrip(), s)
    tokens = s.split()
    words = sum(1 for t in tokens if _WORD.match(t))
    if words < max(1, (2 * len(tokens) + 2) // 3):
        return False  # numbers, operators, odd tokens: maybe code
    if len(tokens) == 1:  # "Solution:", "Sure!"; a lone word is kept ("end", "exit")
        return s[-1] in ":!" and s[0].isupper()
    sentence_end = s[-1] in ".:!?,"
    # A sentence: a capital start and (an end mark, or more words than a statement of bare
    # words has: `module Main where` has three), or the next line of a paragraph.
    return (s[0].isupper() and (sentence_end or len(tokens) >= 4)) or (
        after_prose and (sentence_end or len(tokens) >= 5)
    )


def _parses_as_python(s: str) -> bool:
    """Whether one line is Python by itself, or the head of a block (`def f(x):`)."""
    for candidate in (s, s + "\n    pass", s + "\ndef _(): pass"):
        try:
            ast.parse(candidate)
        except (SyntaxError, ValueError):
            continue
        return True
    return False


def cut_at(code: str, markers: tuple[str, ...]) -> str:
    """`code` up to the first of `markers` (model rambling after the answer)."""
    end = len(code)
    for marker in markers:
        pos = code.find(marker)
        if pos != -1:
            end = min(end, pos)
    return code[:end]
