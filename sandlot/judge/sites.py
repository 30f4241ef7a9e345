"""Assertion sites of a brace language's tests (Java, C#, Kotlin, Scala), rewritten so that each
reports to the harness's seal that it ran and held: the seal then attests how many distinct sites
passed, a number the judge counts here, outside the box.

Two shapes of site are known, as every shipped main-based test writes them:

- a call of an assertion (`assert(x == 1)`, `Debug.Assert(...)`, Java's `assert` statement): it
  becomes the harness's own check, `CHECK(k, x == 1)`, which fails as the assertion would and
  marks site k when it holds; the assertion the tests named is no longer used, so nothing the
  answer does to it (a trace listener removed, a shadowing `assert`) changes what is checked;
- an `if` whose branch throws (`if (!(compare(x0, v0))) { throw new Exception(...); }`): its
  condition becomes `FAILS(k, cond)`, which marks site k when the condition is false.

A `throw` in any other place (an `else`, a `catch`, a helper's loop) has no site this can place:
then the count is None and the seal attests only that the tests' main ran to its end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandlot.judge import braces


@dataclass(frozen=True, slots=True)
class Dialect:
    """How a language's tests assert (`calls`: names of assertion calls, `keyword`: an assert
    statement with no parentheses needed) and what the harness's check and fails are called."""

    calls: tuple[str, ...]
    check: str  # CHECK(k, cond)
    fails: str  # FAILS(k, cond): cond, marking k when it is false
    keyword: bool = False  # Java's `assert cond;`, `assert(cond);`, `assert cond : message;`


_OPEN = "([{"
_CLOSE = ")]}"


def _matching(blanked: str, at: int) -> int | None:
    """The index of the bracket closing the one at `at` (any of ([{)."""
    depth = 0
    for i in range(at, len(blanked)):
        c = blanked[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
    return None


def _opening(blanked: str, at: int) -> int | None:
    """The index of the bracket opening the one closing at `at`."""
    depth = 0
    for i in range(at, -1, -1):
        c = blanked[i]
        if c in _CLOSE:
            depth += 1
        elif c in _OPEN:
            depth -= 1
            if depth == 0:
                return i
    return None


def _top_level(blanked: str, start: int, end: int, char: str) -> int | None:
    """The first `char` in blanked[start:end] outside any brackets (and not a `?:`'s)."""
    depth = ternary = 0
    for i in range(start, end):
        c = blanked[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif depth == 0 and c == "?":
            ternary += 1
        elif depth == 0 and c == char:
            if char == ":" and ternary:
                ternary -= 1
                continue
            return i
    return None


def instrument(tests: str, d: Dialect) -> tuple[str, int | None]:
    """`tests` with each assertion site reporting to the seal, and how many sites there are
    (None: some `throw` has no site this can place)."""
    blanked = braces.blank(tests)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in order of start
    names = "|".join(re.escape(c) for c in d.calls) or "(?!)"
    for m in re.finditer(rf"(?<![\w.$])(?:{names})\s*\(", blanked):
        close = _matching(blanked, m.end() - 1)
        if close is None:
            return tests, None
        args = (m.end(), close)
        comma = _top_level(blanked, args[0], args[1], ",")  # a message after the condition
        cond = tests[args[0] : comma if comma is not None else args[1]]
        edits.append((m.start(), close + 1, f"{d.check}({{k}}, {cond.strip()})"))
    if d.keyword:
        for m in re.finditer(r"(?<![\w.$])assert\b", blanked):
            end = _top_level(blanked, m.end(), len(blanked), ";")
            if end is None:
                return tests, None
            colon = _top_level(blanked, m.end(), end, ":")
            cond = tests[m.end() : colon if colon is not None else end]
            edits.append((m.start(), end, f"{d.check}({{k}}, {cond.strip()})"))
    for m in re.finditer(r"(?<![\w.$])throw\b", blanked):
        if any(a <= m.start() < b for a, b, _ in edits):
            continue
        condition = _guarding_if(blanked, m.start())
        if condition is None:
            return tests, None
        a, b = condition
        edits.append((a, b, f"{d.fails}({{k}}, {tests[a:b]})"))
    edits.sort()
    out, last = [], 0
    for k, (a, b, text) in enumerate(edits):
        if a < last:  # sites inside sites: not a shape this knows
            return tests, None
        out += [tests[last:a], text.replace("{k}", str(k), 1)]
        last = b
    out.append(tests[last:])
    return "".join(out), len(edits)


def _guarding_if(blanked: str, at: int) -> tuple[int, int] | None:
    """The span of the condition of the `if` whose branch starts with the `throw` at `at`."""
    before = blanked[:at].rstrip()
    if before.endswith("{"):
        before = before[:-1].rstrip()
    if not before.endswith(")"):
        return None
    opening = _opening(blanked, len(before) - 1)
    if opening is None or not re.search(r"(?<![\w.$])if\s*$", blanked[:opening]):
        return None
    return opening + 1, len(before) - 1
