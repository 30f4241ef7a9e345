"""PHP: the answer is its own file, `require`d by the harness once the secret is read.

The tests assert with `if (cond) { throw new Exception(...); }` (MultiPL-E, HumanEvalDS,
CRUXEval-X, MBXP's `if (!compare($x, $v))`): each condition becomes the harness's
`fails(site, cond)`, which marks its site when the condition is false. PHP cannot redeclare a
function, so an answer that declares one of the tests' (`candidate`, `test`, `compare`) does not
compile; a class (static methods) under the drawn name holds the secret, where the tests'
functions call it and the answer, which cannot name it, does not.
"""

from __future__ import annotations

import re

from sandlot.judge.scripts import ANSWER, SEAL, Joined, fresh_name, lex

FILE = f"{ANSWER}.php"
_LEXEMES = lex.lexemes(lex.SINGLE, lex.DOUBLE, lex.SLASH_COMMENTS, r"#(?!\[)[^\n]*")

_START = """<?php
final class {v} {{
    private static $s = '';
    private static $passed = [];
    static function read() {{
        self::$s = (string) @file_get_contents('{seal}');
        @unlink('{seal}');
        @unlink(__FILE__);
    }}
    static function fails($site, $failed) {{
        if (!$failed) {{ self::$passed[$site] = true; }}
        return $failed;
    }}
    static function end() {{
        $counts = 'passed=' . count(self::$passed) . ' failed=0';
        fwrite(STDOUT, self::$s . $counts . self::$s . "\\n");
        fflush(STDOUT);
    }}
}}
{v}::read();
require __DIR__ . '/{answer}';
"""


def sites(tests: str, v: str) -> tuple[str, int | None]:
    spans = lex.guarded_conditions(_LEXEMES.blank(tests), "throw")
    if spans is None:
        return tests, None
    out = lex.replaced(tests, spans, lambda cond, k: f"{v}::fails({k}, {cond.strip()})")
    return (tests, None) if out is None else (out, len(spans))


def join(answer: str, tests: str) -> Joined:
    v = fresh_name()
    body, count = sites(_untagged(tests), v)
    tagged = answer if re.match(r"\s*<\?php", answer) else f"<?php\n{answer}"
    code = f"{_START.format(v=v, seal=SEAL, answer=FILE)}{body.rstrip()}\n{v}::end();\n"
    return Joined(code, {FILE: tagged.encode()}, count)


def _untagged(tests: str) -> str:
    """The tests' code without a closing `?>` (what follows it would be printed)."""
    text = tests.rstrip()
    return text[:-2] if text.endswith("?>") else text
