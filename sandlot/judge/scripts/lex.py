"""Just enough lexing of a scripting language's test text to find its assertion sites: literals
and comments blanked (to spaces of the same length, so positions carry over), brackets matched
in what is left, and spans of the text replaced.

The texts are the datasets' tests, which sandlot trusts: these helpers need to read every shipped
test right (test_judge_units.py counts their sites), not any program.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sandlot.judge.braces import matching


@dataclass(frozen=True, slots=True)
class Lexemes:
    """What a language's literals and comments look like, as one alternation of regexes."""

    pattern: re.Pattern[str]

    def blank(self, text: str) -> str:
        """`text` with its literals and comments turned to spaces (newlines kept)."""
        return self.pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def lexemes(*parts: str) -> Lexemes:
    return Lexemes(re.compile("|".join(f"(?:{p})" for p in parts)))


SINGLE = r"'(?:\\.|[^'\\])*'"
DOUBLE = r'"(?:\\.|[^"\\])*"'
BACKTICK = r"`(?:\\.|[^`\\])*`"
HASH_COMMENT = r"#[^\n]*"
SLASH_COMMENTS = r"//[^\n]*|/\*[\s\S]*?\*/"


def opening(blanked: str, closing: int) -> int | None:
    """The index of the bracket opening the one closing at `closing`, or None."""
    depth = 0
    for i in range(closing, -1, -1):
        c = blanked[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            depth -= 1
            if depth == 0:
                return i
    return None


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int


def calls(blanked: str, names: Iterable[str], before: str = r"(?<![\w.$:])") -> list[Span]:
    """Each call of one of `names` (a call: the name, then its parenthesised arguments), from
    the name to its closing parenthesis; a call left open is not one."""
    alternation = "|".join(re.escape(n) for n in names)
    out = []
    for m in re.finditer(rf"{before}(?:{alternation})\s*\(", blanked):
        end = matching(blanked, m.end() - 1)
        if end is not None:
            out.append(Span(m.start(), end + 1))
    return out


def replaced(text: str, spans: list[Span], wrap: Callable[[str, int], str]) -> str | None:
    """`text` with each span's text replaced by `wrap(text, its number)` (in order of start),
    or None when two spans overlap (a shape the caller does not know)."""
    out, at = [], 0
    for k, span in enumerate(sorted(spans, key=lambda s: s.start)):
        if span.start < at:
            return None
        out += [text[at : span.start], wrap(text[span.start : span.end], k)]
        at = span.end
    return "".join(out) + text[at:]


def guarded_conditions(blanked: str, raises: str) -> list[Span] | None:
    """The condition (inside its parentheses) of each `if (cond) { raise ...` whose block opens
    with a statement matching `raises` (`throw`, `die`); None when such a statement stands
    anywhere else."""
    out = []
    for m in re.finditer(rf"(?<![\w$]){raises}\b", blanked):
        before = blanked[: m.start()].rstrip()
        if not before.endswith("{"):
            return None
        before = before[:-1].rstrip()
        start = opening(blanked, len(before) - 1) if before.endswith(")") else None
        if start is None or not re.search(r"(?<![\w$])(?:if|unless)\s*$", blanked[:start]):
            return None
        out.append(Span(start + 1, len(before) - 1))
    return out
