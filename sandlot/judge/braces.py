"""Surgery on brace-language sources (C#, Java, Go, C++...): a class's members, a program's own
entry point, the end of a test's main.

Nothing here parses a language. Comments and string and character literals are blanked (to
spaces of the same length, so positions carry over) and braces are counted in what is left, so
that `'{'` in a bracket-matching answer or `new int[]{1}` in a test's comment does not throw the
count off.
"""

from __future__ import annotations

import re

_LEXEMES = re.compile(
    r'"""[\s\S]*?"""'  # Java text block
    r'|@"(?:[^"]|"")*"'  # C# verbatim string
    r'|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.[^'\n]{0,8}|[^'\\\n])'"  # one character or one escape (never a Rust lifetime)
    r"|`[^`]*`"  # Go raw string
    r"|//[^\n]*|/\*[\s\S]*?\*/"
)
_CLASS = re.compile(
    r"^[ \t]*(?:(?:public|private|protected|internal|static|final|sealed|abstract|partial|unsafe)"
    r"\s+)*class\s+(\w+)[^{;]*\{",
    re.M,
)
# Directives that can only stand at the top of a file, never in a class body.
_DIRECTIVE = re.compile(
    r"^[ \t]*(?:using\s+(?:static\s+)?[\w.]+(?:\s*=\s*[\w.<>, ]+)?|import\s+(?:static\s+)?[\w.*]+"
    r"|package\s+[\w.]+)\s*;[ \t]*\n?",
    re.M,
)
MAINS = {
    "cpp": r"\bint\s+main\s*\(", "c": r"\bint\s+main\s*\(", "rust": r"\bfn\s+main\s*\(\s*\)",
    "java": r"\bstatic\s+void\s+main\s*\(", "go": r"\bfunc\s+main\s*\(\s*\)",
    "csharp": r"\bstatic\s+(?:async\s+)?(?:void|int|Task|Task<int>)\s+Main\s*\(",
    "scala": r"\bdef\s+main\s*\(", "kotlin": r"\bfun\s+main\s*\(", "D_ut": r"\bvoid\s+main\s*\(",
}  # fmt: skip


def blank(code: str) -> str:
    """`code` with its comments and literals turned to spaces (newlines kept)."""
    return _LEXEMES.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), code)


def closing(blanked: str, opening: int) -> int | None:
    """The index of the brace closing the one at `opening`, or None when it never closes."""
    depth = 0
    for i in range(opening, len(blanked)):
        if blanked[i] == "{":
            depth += 1
        elif blanked[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def matching(blanked: str, opening: int) -> int | None:
    """The index of the bracket closing the one at `opening` (any of `([{`), or None."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for i in range(opening, len(blanked)):
        c = blanked[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return i
    return None


def class_body(code: str, name: str | None = None) -> str | None:
    """The members of class `name` in `code` (of its first class when none has that name), or
    None when `code` declares no class. A class cut off before its end runs to the end."""
    blanked = blank(code)
    found = list(_CLASS.finditer(blanked))
    if not found:
        return None
    m = next((f for f in found if f.group(1) == name), found[0])
    end = closing(blanked, m.end() - 1)
    return code[m.end() : end if end is not None else len(code)]


def enclosing_class(code: str, at: int) -> str | None:
    """The name of the innermost class whose braces hold position `at`, if any."""
    blanked = blank(code)
    for m in reversed(list(_CLASS.finditer(blanked, 0, at))):
        end = closing(blanked, m.end() - 1)
        if end is None or end >= at:
            return m.group(1)
    return None


def directives(code: str) -> list[str]:
    """The `using`/`import`/`package` lines of `code`, as written."""
    return [m.group().strip() for m in _DIRECTIVE.finditer(code)]


def without_directives(code: str) -> str:
    return _DIRECTIVE.sub("", code)


def main_span(code: str, language: str) -> tuple[int, int, int | None] | None:
    """Where the entry point is: (start of its line, its `{`, its `}` or None), or None."""
    pattern = MAINS.get(language)
    blanked = blank(code)
    m = re.search(pattern, blanked) if pattern else None
    if m is None:
        return None
    start = blanked.rfind("\n", 0, m.start()) + 1
    brace = blanked.find("{", m.end())
    if brace == -1:
        return start, len(code), None
    return start, brace, closing(blanked, brace)


def drop_main(code: str, language: str) -> str:
    """A whole solution without its own entry point (the tests bring theirs)."""
    span = main_span(code, language)
    if span is None:
        return code
    start, _, end = span
    return code[:start] if end is None else code[:start] + code[end + 1 :]


def at_end_of_main(code: str, language: str, statement: str) -> str | None:
    """`code` with `statement` as the last statement of its entry point's body (run only when
    the body runs to its end), or None when it has no complete one."""
    span = main_span(code, language)
    if span is None or span[2] is None:
        return None
    end = span[2]
    line = code.rfind("\n", 0, end) + 1
    if code[line:end].strip():  # `}` ends a line of code: the statement goes just before it
        return f"{code[:end]} {statement} {code[end:]}"
    return f"{code[:line]}{code[line:end]}    {statement}\n{code[line:]}"


def at_start_of_main(code: str, language: str, statement: str) -> str:
    """`code` with `statement` as the first statement of its entry point's body (as it is when
    it has none)."""
    span = main_span(code, language)
    if span is None or span[1] >= len(code):
        return code
    brace = span[1] + 1
    return f"{code[:brace]}\n    {statement}{code[brace:]}"
