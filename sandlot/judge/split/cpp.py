"""C++ (and C answered as C++): the answer in `answer.cpp`, the harness in `main.cpp`.

The harness is the dataset's prelude, the dataset's declarations turned into prototypes, and its
tests, whose `main` becomes a function the harness's own `main` calls: every exit of the tests'
main (a `return 0;` mid-way, the end of its body) comes back to it, and it writes the seal only
when the tests returned 0. Each `assert(...)`, and each `if (...) throw ...;` (MBXP's form),
marks its site when it passed. The seal's secret is read by a pre-init function (before any
static initializer of the answer's) and kept masked with random bytes.

The answer's signature stands in for the dataset's when it declares the same function with other
types (a whole answer taking `const vector<int>&`): its tokens, from a closed grammar, are all of
the answer's text that the harness ever sees.
"""

from __future__ import annotations

import re
from functools import cache

from sandlot.executor import SEAL_FILE
from sandlot.judge import braces
from sandlot.judge.split import Built, Side, Site, call_sites, mark_sites, matching, view
from sandlot.languages import CPP_PRELUDE

ANSWER = "answer.cpp"  # the cpp row's Split.answer
HARNESS = "main.cpp"

_GUARD = """\
// sandlot's harness (sandlot/judge/split/cpp.py): the seal's secret, read before any static
// initializer runs and kept masked; the tests' assertion sites; the seal, written by main alone.
#include <cstdio>
#include <cstring>
#include <sys/random.h>
namespace {
unsigned char sandlot_mask[64], sandlot_text[64], sandlot_sites[@SITES@];
unsigned sandlot_length;
void sandlot_read() {
    unsigned char text[64] = {0};
    if (std::FILE* f = std::fopen("@SEAL@", "rb")) {
        sandlot_length = std::fread(text, 1, sizeof text, f);
        std::fclose(f);
    }
    std::remove("@SEAL@");
    if (getrandom(sandlot_mask, sizeof sandlot_mask, 0) != (ssize_t)sizeof sandlot_mask) {
        std::memset(sandlot_mask, 0x5a, sizeof sandlot_mask);
    }
    for (unsigned i = 0; i < sizeof text; ++i) {
        sandlot_text[i] = text[i] ^ sandlot_mask[i];
        ((volatile unsigned char*)text)[i] = 0;
    }
}
__attribute__((section(".preinit_array"), used)) void (*sandlot_reader)() = sandlot_read;
inline void sandlot_pass(int site) { sandlot_sites[site] = 1; }
void sandlot_end() {
    unsigned passed = 0;
    for (unsigned char site : sandlot_sites) passed += site;
    char text[64];
    for (unsigned i = 0; i < sandlot_length; ++i) text[i] = sandlot_text[i] ^ sandlot_mask[i];
    std::fflush(stdout);
    std::printf("%.*spassed=%u failed=0 skipped=0%.*s\\n", (int)sandlot_length, text, passed,
                (int)sandlot_length, text);
    std::fflush(stdout);
}
}  // namespace
"""
_MAIN = """
int main(int argc, char** argv) {
    (void)argc;
    (void)argv;
    int sandlot_rc = sandlot_tests_main(@ARGS@);
    if (sandlot_rc == 0) sandlot_end();
    return sandlot_rc;
}
"""

_ASSERT = r"assert"
_FUNCTION_TAIL = re.compile(r"\)\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:->\s*[^;{}=]+)?$")
_NOT_A_FUNCTION = re.compile(r"^\s*(?:template|struct|class|union|enum|namespace|extern\s)\b")
_TOKEN = re.compile(r"[A-Za-z_]\w*|::|->|&&|[0-9][\w.']*|\S")
_SIGNATURE_PUNCTUATION = frozenset(("(", ")", "[", "]", "<", ">", ",", "*", "&", "&&", "::",
                                     "->"))  # fmt: skip
_SIGNATURE_DENIED = frozenset((
    "asm", "operator", "template", "typename", "decltype", "typeof", "alignas", "static_assert",
    "requires", "friend", "extern", "static", "inline", "thread_local", "register", "main",
    "noexcept", "throw",
))  # fmt: skip
_TYPE_WORDS = frozenset(("int", "long", "short", "char", "double", "float", "bool", "unsigned",
                         "signed", "void", "auto", "size_t", "const"))  # fmt: skip


def split(side: Side) -> Built | str | None:
    if braces.main_span(side.tests, "cpp") is None:
        return None  # tests with no main of their own: nothing for a harness to run
    answer = side.head + (braces.drop_main(side.code, "cpp") if side.whole
                          else side.prompt + side.code)  # fmt: skip
    used = set(re.findall(r"[A-Za-z_]\w*", braces.blank(side.tests)))
    used -= set(_signatures(side.tests))  # the tests' own functions
    prototypes = _interface(side.interface, answer, used)
    sites = _sites(side.tests)
    tests = mark_sites(side.tests, sites, _mark)
    tests, args = _as_function(tests)
    guard = _GUARD.replace("@SITES@", str(max(1, len(sites)))).replace("@SEAL@", SEAL_FILE)
    # The dataset's prelude first when it is the one precompiled (languages/native.py), so that
    # the harness's compile starts from it too; any other prelude after the seal's guard.
    first, head = (side.head, "") if side.head == CPP_PRELUDE else ("", side.head)
    harness = f"{first}{guard}{head}{prototypes}\n{tests}\n{_MAIN.replace('@ARGS@', args)}"
    return Built(answer, {HARNESS: harness.encode()}, len(sites) or None,
                 view({ANSWER: answer, HARNESS: harness}))  # fmt: skip


# -- assertion sites ----------------------------------------------------------------------------


def _sites(tests: str) -> list[Site]:
    """`assert(...)` calls, and `if (...) throw ...;` statements (each as one site: its
    condition is the failure)."""
    found = call_sites(tests, _ASSERT)
    blanked = braces.blank(tests)
    for m in re.finditer(r"(?<![\w.])if\s*\(", blanked):
        close = matching(blanked, m.end() - 1)
        if close is None:
            continue
        body = re.match(r"\s*(\{)?\s*throw\b", blanked[close + 1 :])
        if body is None:
            continue
        if body.group(1):
            end = braces.closing(blanked, close + 1 + body.start(1))
        else:
            semicolon = blanked.find(";", close)
            end = semicolon if semicolon >= 0 else None
        if end is not None:
            found.append(Site(m.start(), end + 1))
    return sorted(found, key=lambda s: s.start)


def _mark(text: str, n: int) -> str:
    """A site marked when it passed: an `assert(...)` (an expression) as one with its mark, an
    `if (...) throw ...;` statement followed by it."""
    if text.startswith("if"):
        return f"{{ {text} sandlot_pass({n}); }}"
    return f"({text}, sandlot_pass({n}))"


def _as_function(tests: str) -> tuple[str, str]:
    """The tests with their `main` renamed `sandlot_tests_main` and ending in `return 0;` (as
    main's end does), and the arguments the harness's main passes it."""
    start, brace, end = braces.main_span(tests, "cpp") or (0, 0, None)
    head = tests[start:brace]
    params = head[head.find("(") + 1 : head.rfind(")")].strip()
    renamed = re.sub(r"\bmain\b", "sandlot_tests_main", head, count=1)
    if end is None:
        return tests, ""
    body = tests[brace:end] + "\n    return 0;\n"
    args = "" if params in ("", "void") else "argc, argv"
    return tests[:start] + renamed + body + tests[end:], args


# -- the dataset's declarations as prototypes ---------------------------------------------------


def _top_level(text: str) -> list[tuple[str, str, str]]:
    """`text` as top-level items (kind, head, body): a preprocessor line, a declaration ending
    in `;`, a block (its head and braces), or the last function left open (no body)."""
    blanked = braces.blank(text)
    items: list[tuple[str, str, str]] = []
    start = i = 0
    while i < len(blanked):
        c = blanked[i]
        if c == "#" and not blanked[blanked.rfind("\n", 0, i) + 1 : i].strip():
            end = i
            while True:  # to the end of the line, and of its continuation lines
                end = blanked.find("\n", end)
                if end < 0 or blanked[end - 1] != "\\":
                    break
                end += 1
            end = len(blanked) if end < 0 else end + 1
            items.append(("decl", text[start:i], ""))
            items.append(("pp", text[i:end], ""))
            start = i = end
        elif c == ";":
            items.append(("decl", text[start : i + 1], ""))
            start = i = i + 1
        elif c == "{":
            close = braces.closing(blanked, i)
            if close is None:
                items.append(("open", text[start:i], ""))
                return items
            tail = re.match(r"\s*;", blanked[close + 1 :])
            stop = close + 1 + (tail.end() if tail else 0)
            items.append(("block", text[start:i], text[i:stop]))
            start = i = stop
        else:
            i += 1
    if blanked[start:].strip():
        items.append(("decl", text[start:], ""))
    return items


def _function(head: str) -> str | None:
    """The name a block's head declares as a function (not a template, type or lambda)."""
    blanked = braces.blank(head).strip()
    if not _FUNCTION_TAIL.search(blanked) or _NOT_A_FUNCTION.match(blanked):
        return None
    close = blanked.rfind(")")
    opening = _opening_paren(blanked, close)
    if opening is None or "=" in blanked[:opening]:
        return None
    m = re.search(r"([A-Za-z_]\w*)\s*$", blanked[:opening])
    return m.group(1) if m else None


def _opening_paren(blanked: str, close: int) -> int | None:
    depth = 0
    for i in range(close, -1, -1):
        if blanked[i] == ")":
            depth += 1
        elif blanked[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return None


def _signatures(text: str) -> dict[str, str]:
    """The signature (head text) of each top-level function `text` defines, by name."""
    out = {}
    for kind, head, _ in _top_level(text):
        name = _function(head) if kind in ("block", "open") else None
        if name is not None and name != "main":
            out[name] = _without_comments(head)
    return out


def _interface(declarations: str, answer: str, used: set[str]) -> str:
    """The dataset's declarations with each function's body dropped (a prototype), the
    answer's own signature where it declares the function with other types, and the answer's
    prototypes of the other functions the tests call; the answer's own declarations where the
    dataset has none."""
    if not declarations.strip():
        return _from_answer(answer)
    theirs = _signatures(answer)
    declared = set(_signatures(declarations))
    out = []
    for kind, head, body in _top_level(declarations):
        name = _function(head) if kind in ("block", "open") else None
        if name is None:
            out.append(head + body)
            continue
        if name == "main" or re.search(r"\bstatic\b", braces.blank(head)):
            continue
        signature = _without_comments(head)
        other = theirs.get(name)
        if other is not None and _types(other) != _types(signature) and _sanitized(other):
            signature = other
        out.append(f"\n{signature.strip()};\n")
    out += [f"\n{sig.strip()};\n" for name, sig in theirs.items()
            if name in used and name not in declared and _sanitized(sig)]  # fmt: skip
    return "".join(out)


def _without_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*[\s\S]*?\*/", " ", text)


def _types(signature: str) -> list[str]:
    """A signature's return type, name and parameter types (its parameter names left out)."""
    tokens = _TOKEN.findall(signature)
    try:
        opening = tokens.index("(")
    except ValueError:
        return tokens
    params: list[list[str]] = []
    current: list[str] = []
    depth = 0
    for tok in tokens[opening + 1 :]:
        if tok in ("(", "<", "["):
            depth += 1
        elif tok in (")", ">", "]"):
            if depth == 0:
                break
            depth -= 1
        if tok == "," and depth == 0:
            params.append(current)
            current = []
        else:
            current.append(tok)
    params.append(current)
    typed = []
    for param in params:
        if (
            len(param) > 1
            and re.fullmatch(r"[A-Za-z_]\w*", param[-1])
            and (param[-1] not in _TYPE_WORDS)
        ):
            param = param[:-1]
        typed.append(" ".join(param))
    return [*tokens[:opening], "(", *typed, ")"]


def _sanitized(signature: str) -> bool:
    """Whether an answer's signature may go into the harness: names, types and punctuation of
    declarations only (no macro, attribute, default argument, `asm` label or code)."""
    for tok in _TOKEN.findall(signature):
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            if tok in _SIGNATURE_DENIED or tok.startswith(("__", "sandlot")):
                return False
        elif not (tok in _SIGNATURE_PUNCTUATION or re.fullmatch(r"[0-9]+", tok)):
            return False
    return True


_INCLUDE = re.compile(r"#\s*include\s*<[\w./+-]+>\s*")
_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(?!\()\s+(.*?)\s*")
_ALIAS = re.compile(r"(?:using\s+namespace\s+\w+|typedef\s[^;]*|using\s+\w+\s*=[^;]*|"
                    r"(?:static\s+)?(?:const|constexpr)\s[^;=]*=[^;]*);\s*")  # fmt: skip
_BODY_DENIED = frozenset(("asm", "_Pragma", "alignas", "thread_local", "main"))


def _from_answer(answer: str) -> str:
    """What tests written to follow the answer in one program (`#<INSERT>` tables without a
    prompt) may use of it, as the harness's declarations: its system includes, `using`s, type
    aliases and constants, its object-like macros as constants or types (never as macros: no
    text of the answer rewrites the tests'), types whose text names nothing of the harness's,
    and its functions' prototypes. Anything else stays in the answer's unit."""
    out = []
    for kind, head, body in _top_level(answer):
        text = _without_comments(head + body).strip()
        name = _function(head) if kind in ("block", "open") else None
        if kind == "pp" and _INCLUDE.fullmatch(text):
            out.append(text)
        elif kind == "pp" and (m := _DEFINE.fullmatch(text)) and _plain(m.group(2)):
            out.append(_as_constant(m.group(1), m.group(2)))
        elif kind == "decl" and _ALIAS.fullmatch(text) and _plain(text):
            out.append(text)
        elif name is not None and name != "main" and _sanitized(_without_comments(head)):
            out.append(f"{_without_comments(head).strip()};")
        elif kind == "block" and re.match(r"(struct|class|enum)\b", text) and _plain(text):
            out.append(text)
    return "\n" + "\n".join(out) + "\n"


def _plain(text: str) -> bool:
    """Whether code from the answer names nothing of the harness's, runs nothing before main
    and holds no directive: no `sandlot` or reserved name, `asm`, attribute or `#`."""
    for tok in _TOKEN.findall(text):
        if tok == "#" or tok in _BODY_DENIED or tok.startswith(("__", "sandlot")):
            return False
    return True


def _as_constant(name: str, body: str) -> str:
    """An object-like macro of the answer's as what it stands for: a type or a constant."""
    if all(tok in _TYPE_WORDS for tok in _TOKEN.findall(body)):
        return f"typedef {body} {name};"
    return f"const auto {name} = ({body});"


CATCH_HEADER = "/usr/include/catch2/catch.hpp"


@cache
def _catch_names() -> frozenset[str]:
    try:
        with open(CATCH_HEADER, encoding="utf-8", errors="replace") as f:
            return frozenset(re.findall(r"[A-Za-z_]\w*", braces.blank(f.read())))
    except OSError:
        return frozenset()


def header_refusal(header: str, tests: str) -> str | None:
    """Why a header of the answer's, which the tests include (an Exercism exercise's), may not
    be: it defines or undefines a macro named like anything of the tests' or of Catch's (which
    would rewrite them), or changes macros by pragma. Its include guard and its own macros
    stand."""
    text = braces.blank(header.replace("\\\n", "").replace("%:", "#"))
    if re.search(r"\b_Pragma\b", text):
        return "the answer's header uses _Pragma, which may rewrite the tests' macros"
    taken = _catch_names() | set(re.findall(r"[A-Za-z_]\w*", braces.blank(tests)))
    for m in re.finditer(r"^[ \t]*#[ \t]*(define|undef|pragma)[ \t]+(\w+)", text, re.M):
        directive, name = m.groups()
        if directive == "pragma" and name != "once":
            return f"the answer's header has #pragma {name}, which may rewrite the tests' macros"
        if directive != "pragma" and name in taken:
            return f"the answer's header #{directive}s {name}, a name the tests or Catch use"
    return None
