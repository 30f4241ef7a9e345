"""Split programs: the answer compiled on its own, apart from the harness that tests it.

A family that judges a compiled language (HumanEval-X, MultiPL-E, the `#<INSERT>` tables) hands
the answer's code and the dataset's tests to its language's splitter (a row of dialects.py names
it), which makes two things:

- the answer's unit (a file, module, crate or package of its own): the dataset's prelude and
  prompt with the completion, or a whole answer without its own entry point;
- the harness: the dataset's tests with every assertion site counted, the entry point, the seal
  and every name they use; it sees the answer only through declarations taken from the dataset's
  own text (its prompt), typed as the dataset declares them.

The executor builds the harness alone (once per problem: the compile cache keeps it), then the
answer, checks the answer's symbols against the harness's and the runtime's and links them
(sandlot/executor/split.py). The harness's seal attests `passed=N` distinct assertion sites;
the judge counts the sites in the tests' text, so `Program.tests` is N.

Nothing of the answer's text reaches the harness's unit except what a splitter takes from it
under a closed grammar (a C++ signature's tokens, say), never its macros, overloads or scopes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandlot.judge import braces
from sandlot.judge.braces import matching
from sandlot.judge.extract import Extracted
from sandlot.judge.plans import Assembled, Program


@dataclass(frozen=True, slots=True)
class Side:
    """What a family knows of one submission, for its language's splitter."""

    code: str  # the answer's code (a completion of `prompt`, or a whole answer)
    whole: bool  # `code` is a whole solution (it declares the function), not a body
    prompt: str  # the dataset's text the answer continues ("" for an `#<INSERT>` slot)
    tests: str  # the dataset's tests, as they follow the answer
    interface: str  # the dataset's declarations of what the tests call ("" when it has none)
    head: str = ""  # the dataset's prelude both units need (headers, imports)
    row: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Built:
    """A split program: the answer's unit (the request's code), the harness's files, how many
    assertion sites the seal must attest, and one text of both for people to read."""

    answer: str
    harness: dict[str, bytes]
    tests: int | None
    view: str


# (the submission) -> the split program, or a reason the answer is refused before it runs, or
# None when these tests cannot be split (the family assembles them as one program).
Splitter = Callable[[Side], "Built | str | None"]


@dataclass(frozen=True, slots=True)
class Site:
    """An assertion site in the tests: the span of its call (name and arguments)."""

    start: int
    end: int  # just past its closing parenthesis


def top_level_commas(text: str, brackets: str = "()[]{}") -> list[str]:
    """`text` cut at its commas outside any of `brackets` (pairs, opening first); the `>` of an
    arrow (`->`) closes nothing."""
    opening, closing = brackets[0::2], brackets[1::2]
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in opening:
            depth += 1
        elif c in closing and not (c == ">" and text[i - 1 : i] == "-"):
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]]


def call_sites(tests: str, names: str) -> list[Site]:
    """Every call of one of the assertion macros or functions `names` (a regex alternation) in
    the tests' code (not in their comments or strings)."""
    blanked = braces.blank(tests)
    out = []
    for m in re.finditer(rf"(?<![\w.:]){names}\s*\(", blanked):
        end = matching(blanked, m.end() - 1)
        if end is not None:
            out.append(Site(m.start(), end + 1))
    return out


def mark_sites(tests: str, sites: list[Site], wrap: Callable[[str, int], str]) -> str:
    """The tests with each site's text replaced by `wrap(text, its number)`."""
    out, at = [], 0
    for n, site in enumerate(sites):
        out += [tests[at : site.start], wrap(tests[site.start : site.end], n)]
        at = site.end
    return "".join(out) + tests[at:]


def view(files: dict[str, str]) -> str:
    """The files of a split program as one text (`full_code`), each after a comment naming it."""
    return "\n".join(f"// ---- {name} ----\n{text}" for name, text in files.items())


def program(
    language: str, built: Built | str | None, test_code: str, **kw: Any
) -> Program | str | None:
    """The judge's program of a split (or the reason the answer is refused before it runs, or
    None when these tests cannot be split); `kw` are the family's program fields."""
    if built is None or isinstance(built, str):
        return built
    return Program(language, built.answer, test_code, harness=built.harness, tests=built.tests,
                   view=built.view, seal=True, **kw)  # fmt: skip


def split_assembled(ex: Extracted, split: Program | str) -> Assembled:
    """What a family hands the judge for a language's split program (dialects.Split), marked as
    split (a split row of integrity.py holds for such programs only), or for an answer refused
    before it runs, which is a compile error with its reason."""
    if isinstance(split, str):
        return Assembled(ex, None, split, refused=True)
    split.apart = True
    return Assembled(ex, split)


def assembled(
    ex: Extracted, language: str, built: Built | str, test_code: str, **kw: Any
) -> Assembled:
    """`split_assembled` of a splitter's result (aider's exercises)."""
    split = program(language, built, test_code, **kw)
    assert split is not None
    return split_assembled(ex, split)
