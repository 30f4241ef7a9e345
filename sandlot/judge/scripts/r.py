"""R: the answer is its own file, `source`d by the harness once the secret is read; the tests run
in an environment of their own, over base.

An R program can redefine any name the tests call in the global environment: `stopifnot`,
`isTRUE`, `all.equal`, even `{`, `(` and `<-`. The tests are evaluated in an environment whose
parent is base's, so every name base defines is base's; the function the tests are about (their
`candidate <- name`) is bound there from the answer's definitions, and the answer's other names
are found after base's. The harness itself (the closure that reads the secret, under the drawn
name) is defined over base too, and removed from the global environment before the tests run.

The tests assert with `stopifnot(...)`: each becomes the harness's check, which fails as
`stopifnot` does and marks its site when it holds.
"""

from __future__ import annotations

import re

from sandlot.judge.scripts import ANSWER, SEAL, Joined, fresh_name, lex

FILE = f"{ANSWER}.R"
_LEXEMES = lex.lexemes(lex.SINGLE, lex.DOUBLE, lex.BACKTICK, lex.HASH_COMMENT)

_START = """.{v} <- local(envir = new.env(parent = baseenv()), {{
  s <- if (file.exists('{seal}')) readChar('{seal}', 200L) else ''
  unlink('{seal}')
  unlink(sub('^--file=', '', grep('^--file=', commandArgs(), value = TRUE)))
  passed <- logical(0L)
  function(tests) {{
    code <- substitute(tests)
    rm(list = '.{v}', envir = globalenv())
    env <- new.env(parent = baseenv())
    for (n in c({entries})) {{
      if (exists(n, envir = globalenv(), inherits = FALSE)) {{
        assign(n, get(n, envir = globalenv()), envir = env)
      }}
    }}
    assign('.{v}', function(site, x) {{
      if (!(is.logical(x) && !anyNA(x) && all(x))) {{
        stop(sprintf('%s is not TRUE', deparse(substitute(x))[1L]), call. = FALSE)
      }}
      passed[site + 1L] <<- TRUE
      invisible(x)
    }}, envir = env)
    eval(code, env)
    cat(s, 'passed=', sum(passed, na.rm = TRUE), ' failed=0', s, '\\n', sep = '')
  }}
}})
source('{answer}')
.{v}({{
"""


def sites(tests: str, v: str) -> tuple[str, int | None]:
    blanked = _LEXEMES.blank(tests)
    spans = lex.calls(blanked, ("stopifnot",), before=r"(?<![\w.$@])")
    for span in spans:  # a check of one condition only
        inner = blanked[span.start : span.end]
        inner = inner[inner.index("(") + 1 : -1]
        if _top_level_comma(inner):
            return tests, None

    def wrap(call: str, k: int) -> str:
        return f".{v}({k}, {call[call.index('(') + 1 : -1]})"

    out = lex.replaced(tests, spans, wrap)
    return (tests, None) if out is None or not spans else (out, len(spans))


def _top_level_comma(blanked: str) -> bool:
    depth = 0
    for c in blanked:
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            return True
    return False


def join(answer: str, tests: str) -> Joined:
    v = fresh_name()
    body, count = sites(tests, v)
    entries = ", ".join(f"'{n}'" for n in dict.fromkeys(re.findall(r"\bcandidate\s*<-\s*([\w.]+)",
                                                                    tests)))  # fmt: skip
    start = _START.format(v=v, seal=SEAL, answer=FILE, entries=entries)
    return Joined(f"{start}{body.rstrip()}\n}})\n", {FILE: answer.encode()}, count)
