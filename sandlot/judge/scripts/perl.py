"""Perl: the answer is its own file, compiled and run by `do` once the harness holds the secret.

The harness's closure is a lexical of the harness's file, which no other file can name (not by
a string `eval` either); the answer's `BEGIN` blocks, `use` lines and `CORE::GLOBAL::` overrides
run only when its file is compiled, after the secret was read, and do not reach the tests, which
were compiled before it (their `exit 1` stays the built-in). `__END__`, `__DATA__` and POD end
its own file.

The tests assert by calling a comparison (`eq_deeply` of Test::Deep in `if (...) { print "ok!" }
else { exit 1; }`, `Compare` of Data::Compare in MBXP's `unless (...) { die ... }`): each call
becomes the harness's copy of that function, taken before the answer ran (an answer's
`*eq_deeply = sub { 1 }` changes nothing the tests call), wrapped in `ok(site, ...)`, which marks
its site when the comparison held.
"""

from __future__ import annotations

from sandlot.judge.scripts import ANSWER, SEAL, Joined, fresh_name, lex

FILE = f"{ANSWER}.pl"
COMPARISONS = ("eq_deeply", "Compare")
_LEXEMES = lex.lexemes(lex.SINGLE, lex.DOUBLE, r"(?<![$\\])#[^\n]*")

_START = """my ${v} = do {{
    no strict 'refs';
    open(my $f, '<', '{seal}');
    local $/;
    my $s = <$f> // '';
    close $f;
    unlink '{seal}', $0;
    my %passed;
    my %compare = map {{ defined &{{"main::$_"}} ? ($_ => \\&{{"main::$_"}}) : () }} qw({names});
    +{{ ok => sub {{ $passed{{$_[0]}} = 1 if $_[1]; $_[1] }}, compare => \\%compare,
        end => sub {{
            syswrite STDOUT, $s . 'passed=' . scalar(keys %passed) . ' failed=0' . $s . "\\n";
        }} }}
}};
do './{answer}';
die $@ if $@;
"""


def sites(tests: str, v: str) -> tuple[str, int | None]:
    spans = lex.calls(_LEXEMES.blank(tests), COMPARISONS, before=r"(?<![\w$:>&])")

    def wrap(call: str, k: int) -> str:
        name, _, args = call.partition("(")
        return f"${v}->{{ok}}->({k}, ${v}->{{compare}}{{{name.strip()}}}->({args})"

    out = lex.replaced(tests, spans, wrap)
    return (tests, None) if out is None or not spans else (out, len(spans))


def join(answer: str, tests: str) -> Joined:
    v = fresh_name()
    body, count = sites(tests, v)
    start = _START.format(v=v, seal=SEAL, answer=FILE, names=" ".join(COMPARISONS))
    return Joined(f"{start}{body.rstrip()}\n${v}->{{end}}->();\n", {FILE: answer.encode()}, count)
