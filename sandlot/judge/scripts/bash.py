"""bash: the answer is its own file, `source`d inside one `{ ... }` group that holds the whole
harness.

bash parses a group whole before it runs any of it, so the tests' text is read before the answer
runs: an alias (even of `[[`), `shopt -s expand_aliases` or an unclosed heredoc or quote in the
answer reaches only the answer's own file. What the answer can still do is define functions named
like the built-ins the tests call (`set() { :; }`), arm traps and disable built-ins: between
the answer and the tests the harness, in POSIX mode (where a special built-in such as `unset`
is found before any function), removes the answer's functions named like a built-in the tests
or the harness call, its DEBUG/RETURN/ERR traps and `extdebug`, and refuses to go on when it
cannot (a read-only function, a disabled built-in). The seal is written the same way, through
built-ins no function can stand for.

The tests assert with `[[ ... ]]` commands (under `set -e`): each is followed by `&&` and an
assignment that marks its site, which runs only when the test held (an answer that turned
`set -e` off still leaves the sites of failing tests unmarked). The secret and the marks are
variables under the drawn name (`declare -p` lists them: reflection, out of reach).
"""

from __future__ import annotations

import re

from sandlot.judge.scripts import ANSWER, SEAL, Joined, fresh_name, lex

FILE = f"{ANSWER}.sh"
_LEXEMES = lex.lexemes(lex.SINGLE, lex.DOUBLE, r"(?<![\w$])#[^\n]*")
# bash's built-ins: a function the answer names like one the tests call stands for it, never
# what the tests mean.
BUILTINS = frozenset({
    "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete",
    "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
    "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
    "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap",
    "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait",
})  # fmt: skip

_START = """{{
{v}=; [[ -f {seal} ]] && {v}=$(< {seal}); rm -f {seal} "$0"; declare -a {v}_passed=()
source ./{answer}
{gate}
"""
# POSIX mode: `unset` and `exit` are special built-ins, found before any function of the name.
_GATE = (
    "POSIXLY_CORRECT=1; \\unset -f builtin || \\exit 97; "
    "\\builtin unset -f {names} || \\exit 97; \\builtin trap - DEBUG RETURN ERR || \\exit 97; "
    "\\builtin shopt -u extdebug; \\builtin set +o functrace +o errtrace; "
    "\\unset POSIXLY_CORRECT  # {v}"
)
_END = (
    "{gate}\n"
    "POSIXLY_CORRECT=1; \\unset -f builtin || \\exit 97; "
    '\\builtin printf \'%s%s%s\\n\' "${v}" "passed=${{#{v}_passed[@]}} failed=0" "${v}"\n'
    "}}\n"
)


def _test_ends(text: str, start: int) -> int | None:
    """Just past the `]]` that closes the `[[` at `start`: outside quotes and `$( )`."""
    i, depth, n = start + 2, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and depth == 0:
            end = text.find("'", i + 1)
            if end < 0:
                return None
            i = end + 1
            continue
        if c == '"':
            i = _double_quoted_end(text, i)
            if i < 0:
                return None
            continue
        if text.startswith("$(", i):
            depth += 1
            i += 2
            continue
        if c == ")" and depth:
            depth -= 1
        elif depth == 0 and text.startswith("]]", i) and text[i - 1] in " \t\n":
            return i + 2
        i += 1
    return None


def _double_quoted_end(text: str, start: int) -> int:
    """Just past the `"` closing the one at `start` (a `$( )` inside may hold quotes), or -1."""
    i, depth = start + 1, 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if text.startswith("$(", i):
            depth += 1
            i += 2
            continue
        if c == ")" and depth:
            depth -= 1
        elif c == '"' and depth:
            i = _double_quoted_end(text, i)
            if i < 0:
                return -1
            continue
        elif c == '"':
            return i + 1
        i += 1
    return -1


def sites(tests: str, v: str) -> tuple[str, int | None]:
    spans = []
    for m in re.finditer(r"^[ \t]*(\[\[)[ \t]", tests, re.M):
        end = _test_ends(tests, m.start(1))
        if end is None or tests[end:].split("\n", 1)[0].strip():
            return tests, None  # a test that is part of a longer command: not a shape known here
        spans.append(lex.Span(m.start(1), end))
    out = lex.replaced(tests, spans, lambda test, k: f"{test} && {v}_passed[{k}]=1")
    return (tests, None) if out is None or not spans else (out, len(spans))


def join(answer: str, tests: str) -> Joined:
    # MultiPL-E's tests (and CRUXEval-X's) begin by closing the prompt's function: that line ends
    # the answer's file (a whole answer closed it itself, and its family left the line out).
    first, _, rest = tests.partition("\n")
    if first.strip() == "}":
        answer, tests = f"{answer.rstrip()}\n}}\n", rest
    v = fresh_name()
    body, count = sites(tests, v)
    called = BUILTINS & set(re.findall(r"[\w.]+", _LEXEMES.blank(tests)))
    gate = _GATE.format(v=v, names=" ".join(["shopt", "printf", *sorted(called)]))
    start = _START.format(v=v, seal=SEAL, answer=FILE, gate=gate)
    return Joined(f"{start}{body.rstrip()}\n{_END.format(v=v, gate=gate)}", {FILE: answer.encode()},
                  count)  # fmt: skip
