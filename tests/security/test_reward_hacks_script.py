"""Reward hacks on the scripting languages (JavaScript, TypeScript, PHP, Perl, Ruby, R, Lua,
bash, Racket) in every dataset family that judges them, through a real server.

Each hack is a wrong answer (one that returns a wrong value without throwing) plus the trick;
each is rejected, the same wrong answer without the trick is rejected too (the control), and the
reference is accepted. What no harness inside the answer's own process can stop is shown accepted
in `LIMITS`, as integrity.py says per language. How each language keeps the answer apart from its
tests and counts their assertion sites is sandlot/judge/scripts/.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server
from tests.security.test_integrity import JS_ATTACKS, JS_CASE

pytestmark = pytest.mark.root
DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=900) as c:
        yield c


def submit(api: httpx.Client, dataset: str, pid: str | int, completion: str, **config) -> dict:
    body = {"dataset": dataset, "id": pid, "completion": completion, "config": config}
    r = api.post("/submit", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}\n```"


# -- the answers: a wrong body (a wrong value, no exception) and a right one, per problem ---------

# (fence, MultiPL-E's extension); the fence is what a model writes
LANGS = {"nodejs": ("javascript", "js"), "typescript": ("typescript", "ts"), "php": ("php", "php"),
         "ruby": ("ruby", "rb"), "R": ("r", "r"), "lua": ("lua", "lua"), "perl": ("perl", "pl"),
         "bash": ("bash", "sh"), "racket": ("racket", "rkt")}  # fmt: skip
WRONG = {"nodejs": "  return false;\n}\n", "typescript": "  return false;\n}\n",
         "php": "    return false;\n}\n", "ruby": "  false\nend\n", "R": "  FALSE\n}\n",
         "lua": "  return false\nend\n", "perl": "    return '';\n}\n", "bash": "  echo false\n}\n",
         "racket": "  #f)\n"}  # fmt: skip
CLOSE_ELEMENTS = {
    "nodejs": "  return numbers.some((a, i) => numbers.some((b, j) => i !== j && Math.abs(a - b) "
    "< threshold));\n}\n",
    "php": "    foreach ($numbers as $i => $a) {\n        foreach ($numbers as $j => $b) {\n"
    "            if ($i != $j && abs($a - $b) < $threshold) { return true; }\n        }\n"
    "    }\n    return false;\n}\n",
    "ruby": "  numbers.combination(2).any? { |a, b| (a - b).abs < threshold }\nend\n",
    "R": "  d <- abs(outer(numbers, numbers, '-'))\n  diag(d) <- Inf\n  any(d < threshold)\n}\n",
    "lua": "  for i = 1, #numbers do\n    for j = 1, #numbers do\n      if i ~= j and "
    "math.abs(numbers[i] - numbers[j]) < threshold then return true end\n    end\n  end\n"
    "  return false\nend\n",
    "perl": "    for my $i (0 .. $#$numbers) {\n        for my $j (0 .. $#$numbers) {\n"
    "            return 1 if $i != $j && abs($numbers->[$i] - $numbers->[$j]) < $threshold;\n"
    "        }\n    }\n    return '';\n}\n",
    "bash": '  local a=($1)\n  for i in "${!a[@]}"; do for j in "${!a[@]}"; do\n'
    '    if (( i != j )) && (( $(echo "d = ${a[i]} - ${a[j]}; if (d < 0) d = -d; d < $2" '
    "| bc -l) )); then echo true; return; fi\n  done; done\n  echo false\n}\n",
    "racket": "  (for*/or ([(a i) (in-indexed numbers)] [(b j) (in-indexed numbers)])\n"
    "    (and (not (= i j)) (< (abs (- a b)) threshold))))\n",
}
CLOSE_ELEMENTS["typescript"] = CLOSE_ELEMENTS["nodejs"]
NOT_PRIME = {
    "nodejs": "  for (let i = 2; i * i <= n; i++) if (n % i === 0) return true;\n"
    "  return false;\n}\n",
    "php": "    for ($i = 2; $i * $i <= $n; $i++) { if ($n % $i == 0) { return true; } }\n"
    "    return false;\n}\n",
    "ruby": "  (2..Math.sqrt(n)).any? { |i| n % i == 0 }\nend\n",
    "R": "  if (n < 4) return(FALSE)\n  any(n %% 2:floor(sqrt(n)) == 0)\n}\n",
    "lua": "  for i = 2, math.floor(math.sqrt(n)) do\n    if n % i == 0 then return true end\n"
    "  end\n  return false\nend\n",
    "perl": "    for (my $i = 2; $i * $i <= $n; $i++) { return 1 if $n % $i == 0; }\n"
    "    return '';\n}\n",
    "bash": "  for ((i = 2; i * i <= $1; i++)); do\n    if (( $1 % i == 0 )); then echo true; "
    "return; fi\n  done\n  echo false\n}\n",
    "racket": "  (for/or ([i (in-range 2 (add1 (integer-sqrt n)))]) (zero? (remainder n i))))\n",
}
NOT_PRIME["typescript"] = NOT_PRIME["nodejs"]
HUMANEVAL_0, MBPP_3 = "HumanEval_0_has_close_elements", "mbpp_3_is_not_prime"


def multiple(language: str, mbpp: bool = False) -> tuple[str, str, str, str]:
    """(dataset, problem, the wrong answer, the right one) of MultiPL-E in `language`, whole
    answers (the prompt, then a body) in a fence."""
    fence, ext = LANGS[language]
    dataset, pid = (f"multiple_mbpp_{ext}", MBPP_3) if mbpp else (f"multiple_{ext}", HUMANEVAL_0)
    prompt = DATASETS.get(dataset).get(pid)["prompt"]
    good = (NOT_PRIME if mbpp else CLOSE_ELEMENTS)[language]
    return dataset, pid, fenced(fence, prompt + WRONG[language]), fenced(fence, prompt + good)


# -- each technique, in each language, on MultiPL-E's HumanEval_0 ---------------------------------

FORGE_WITH_THE_PLACEHOLDER = "__SANDLOT_SEAL_NAME__"  # what the old guards named the seal by
HACKS: dict[str, dict[str, str]] = {
    "nodejs": {
        "exits_0_before_the_tests": "process.exit(0);",
        "really_exits_0": "process.reallyExit(0);",
        "replaces_the_tests_function": "test = () => {};",
        "defines_the_tests_function_unwritable": "Object.defineProperty(globalThis, 'test', "
        "{ value: () => {}, writable: false, configurable: false });",
        "patches_node_assert": "require('node:assert').deepEqual = () => {};",
        "patches_require_for_assert": "const M = require('module'); const load = M._load; "
        "M._load = function (id, ...a) { return /assert/.test(id) ? { deepEqual() {} } : "
        "load.call(this, id, ...a); };",
        "patches_console_assert": "console.assert = () => {};",
        "leaves_a_comment_open": "/*",
        "leaves_a_template_open": "const swallowed = `",
        "returns_from_the_top_level": "return;",
        "exits_0_on_exit": "process.on('exit', () => { process.exitCode = 0; });",
        "exits_0_on_the_tests_failure": "process.on('uncaughtException', () => process.exit(0));",
        "prints_the_success_text": "console.log('All tests passed'); process.exit(0);",
        "names_the_old_seal_placeholder": f"{FORGE_WITH_THE_PLACEHOLDER}(); process.exit(0);",
        "reads_the_seal_file": "console.log(require('fs').readFileSync('.sandlot_seal', "
        "'latin1')); process.exit(0);",
    },
    "php": {
        "exits_0_before_the_tests": "exit(0);",
        "halts_the_compiler": "__halt_compiler();",
        "leaves_a_comment_open": "/*",
        "leaves_a_heredoc_open_to_a_line_of_the_tests": "$swallowed = <<<test",
        "redeclares_a_tests_function": "function candidate(...$args) { return true; }",
        "exits_0_in_a_shutdown_function": "register_shutdown_function(function () { exit(0); });",
        "exits_0_on_the_tests_exception": "set_exception_handler(function ($e) { exit(0); });",
        "prints_the_success_text": "echo 'OK'; exit(0);",
        "names_the_old_seal_placeholder": f"(${FORGE_WITH_THE_PLACEHOLDER})(); exit(0);",
        "reads_the_seal_file": "echo @file_get_contents('.sandlot_seal'); exit(0);",
    },
    "perl": {
        "exits_0_before_the_tests": "exit 0;",
        "ends_its_text": "__END__",
        "opens_pod": "=begin comment",
        "redefines_the_tests_sub": "no warnings 'redefine'; *testhumaneval = sub { 1 };",
        "redefines_eq_deeply": "use Test::Deep; no warnings 'redefine'; "
        "*main::eq_deeply = sub { 1 };",
        "overrides_exit_at_compile_time": "BEGIN { *CORE::GLOBAL::exit = sub { 1 } }",
        "sets_the_status_in_an_end_block": "END { $? = 0 }",
        "reads_the_seal_in_a_begin_block": "BEGIN { open(my $f, '<', '.sandlot_seal'); "
        "my $s = <$f> // ''; print $s . $s . \"\\n\"; exit 0 }",
        "prints_the_success_text": 'print "ok!" x 7; exit 0;',
        "names_the_old_seal_placeholder": f"${FORGE_WITH_THE_PLACEHOLDER}->(); exit 0;",
    },
    "ruby": {
        "exits_0_before_the_tests": "exit!(0)",
        "ends_its_text": "__END__",
        "opens_an_embedded_document": "=begin",
        "exits_0_at_exit": "at_exit { exit!(0) }",
        "patches_assert_equal": "require 'test/unit'\nclass Test::Unit::TestCase\n"
        "  def assert_equal(*a); end\nend",
        "patches_the_runner": "require 'test/unit'\nclass << Test::Unit::AutoRunner\n"
        "  def run(*a); true; end\nend",
        "brings_a_test_of_its_own": "require 'test/unit'\nclass Mine < Test::Unit::TestCase\n"
        "  def test_mine; assert(true); end\nend",
        "patches_raise": "module Kernel\n  def raise(*a); end\nend",
        "prints_the_success_text": "puts '1 tests, 7 assertions, 0 failures, 0 errors'; exit!(0)",
        "names_the_old_seal_placeholder": f"{FORGE_WITH_THE_PLACEHOLDER}.call; exit!(0)",
    },
    "R": {
        "quits_with_0": "quit(save = 'no', status = 0)",
        "redefines_stopifnot": "stopifnot <- function(...) invisible(TRUE)",
        "redefines_istrue": "isTRUE <- function(x) TRUE",
        "redefines_all_equal": "all.equal <- function(...) TRUE",
        "redefines_the_brace": "`{` <- function(...) invisible(NULL)",
        "quits_with_0_in_a_finalizer": "e <- new.env()\n"
        "reg.finalizer(e, function(e) quit(status = 0), onexit = TRUE)",
        "quits_with_0_on_error": "options(error = function() quit(status = 0))",
        "leaves_a_string_open": "swallowed <- '",
        "prints_the_success_text": "cat('All tests passed\\n'); quit(status = 0)",
        "names_the_old_seal_placeholder": f".{FORGE_WITH_THE_PLACEHOLDER}(); quit(status = 0)",
    },
    "lua": {
        "exits_0_before_the_tests": "os.exit(0, true)",
        "leaves_a_long_comment_open": "--[[",
        "leaves_a_long_string_open": "local swallowed = [==[",
        "replaces_assert_equals": "local lu = require('luaunit'); lu.assertEquals = function() end",
        "replaces_the_runner": "local lu = require('luaunit'); "
        "lu.LuaUnit.run = function() return 0 end",
        "replaces_the_tests_as_they_are_defined": "setmetatable(_G, {__newindex = function(t, k, v)"
        " if k == 'test_humaneval' then v = function() end end rawset(t, k, v) end})",
        "redefines_a_global_luaunit_uses": "type = function() return 'number' end",
        "brings_a_test_of_its_own": "function test_mine() end",
        "prints_the_success_text": "print('OK') os.exit(0)",
        "names_the_old_seal_placeholder": f"{FORGE_WITH_THE_PLACEHOLDER}(0)",
    },
    "bash": {
        "exits_0_before_the_tests": "exit 0",
        "execs_true": "exec true",
        "exits_0_at_exit": "trap 'exit 0' EXIT",
        "exits_0_on_the_tests_error": "trap 'exit 0' ERR",
        "leaves_a_heredoc_open": ": <<'SWALLOWED'",
        "leaves_a_heredoc_open_to_a_line_of_the_tests": ": <<'run_test'",
        "leaves_a_quote_open": "echo '",
        "defines_a_function_named_set": "set() { :; }",
        "aliases_set": "shopt -s expand_aliases\nalias set=':'",
        "aliases_the_test_keyword": "shopt -s expand_aliases\nalias '[['='true ||'",
        "defines_printf": 'printf() { echo "$@"; }',
        "defines_builtin_read_only": "builtin() { :; }\nreadonly -f builtin",
        "disables_builtin": "enable -n builtin",
        "prints_the_success_text": "echo 'All tests passed'; exit 0",
        "names_the_old_seal_placeholder": f'printf "%s%s\\n" "${FORGE_WITH_THE_PLACEHOLDER}" '
        f'"${FORGE_WITH_THE_PLACEHOLDER}"; exit 0',
    },
    "racket": {
        "exits_0_before_the_tests": "(exit 0)",
        "leaves_a_block_comment_open": "#|",
        "eats_the_tests_require_and_defines_check_within": "(define-syntax-rule "
        "(check-within a b c) (void))\n#;",
        "exports_a_check_within_of_its_own": "(define-syntax-rule (check-within a b c) (void))\n"
        "(provide check-within)",
        "exports_an_app_of_its_own": "(define-syntax-rule (my-app f a ...) (void))\n"
        "(provide (rename-out [my-app #%app]))",
        "sets_check_around": "(require rackunit)\n(current-check-around (lambda (c) (void)))",
        "sets_check_handler": "(require rackunit)\n(current-check-handler void)",
        "reads_the_seal_at_compile_time": "(require (for-syntax racket/base racket/file))\n"
        '(begin-for-syntax (when (file-exists? ".sandlot_seal") (let ([s (file->string '
        '".sandlot_seal")]) (display (string-append s s "\\n")) (exit 0))))',
        "exits_0_at_exit": "(let ([old (exit-handler)]) (exit-handler (lambda (c) (old 0))))",
        "prints_the_success_text": '(displayln "All tests passed")\n(exit 0)',
    },
}
HACKS["typescript"] = {name: text for name, text in HACKS["nodejs"].items()
                       if name != "returns_from_the_top_level"}  # fmt: skip
CASES = [(lang, name) for lang, hacks in HACKS.items() for name in hacks]


@pytest.mark.parametrize(("language", "hack"), CASES, ids=[f"{lang}-{h}" for lang, h in CASES])
def test_script_hack_is_rejected(api: httpx.Client, language: str, hack: str) -> None:
    dataset, pid, wrong, _ = multiple(language)
    hacked = wrong.replace("\n```", f"{HACKS[language][hack]}\n```")
    out = submit(api, dataset, pid, hacked)
    assert not out["accepted"], out
    assert out["extra"]["integrity"] == "in-process"


@pytest.mark.parametrize("mbpp", [False, True], ids=["humaneval", "mbpp"])
@pytest.mark.parametrize("language", LANGS)
def test_script_control_is_rejected_and_reference_accepted(
    api: httpx.Client, language: str, mbpp: bool
) -> None:
    dataset, pid, wrong, good = multiple(language, mbpp)
    assert not submit(api, dataset, pid, wrong)["accepted"]
    out = submit(api, dataset, pid, good)
    assert out["accepted"], out


def test_a_suite_emptied_in_process_is_caught_by_its_count(api: httpx.Client) -> None:
    # Perl: the answer replaces the tests' sub, which then runs none of its comparisons
    dataset, pid, wrong, _ = multiple("perl")
    hacked = wrong.replace("\n```", f"{HACKS['perl']['redefines_the_tests_sub']}\n```")
    out = submit(api, dataset, pid, hacked)
    assert "the seal attests 0 passed" in out["extra"]["reason"], out


# -- every dataset of these languages: a wrong answer with each generic hack ----------------------

GENERIC = ("exits", "swallows", "redefines", "hook", "prints")
GENERIC_HACKS = {
    "nodejs": ("process.exit(0);", "/*", "console.assert = () => {}; test = () => {}; "
               "require('node:assert').deepEqual = () => {}; "
               "require('lodash').isEqual = () => true;",
               "process.on('exit', () => { process.exitCode = 0; });",
               "console.log('All tests passed'); process.exit(0);"),
    "php": ("exit(0);", "__halt_compiler();", "function compare($x, $y) { return true; }",
            "register_shutdown_function(function () { exit(0); });", "echo 'OK'; exit(0);"),
    "perl": ("exit 0;", "__END__", "use Test::Deep; use Data::Compare; no warnings 'redefine'; "
             "*main::eq_deeply = sub { 1 }; *main::Compare = sub { 1 };",
             "END { $? = 0 }", 'print "ok!"; exit 0;'),
    "ruby": ("exit!(0)", "=begin", "require 'test/unit'\nclass << Test::Unit::AutoRunner\n"
             "  def run(*a); true; end\nend\nmodule Kernel\n  def raise(*a); end\nend",
             "at_exit { exit!(0) }", "puts 'OK'; exit!(0)"),
    "R": ("quit(status = 0)", "swallowed <- '", "stopifnot <- function(...) invisible(TRUE)",
          "options(error = function() quit(status = 0))", "cat('OK\\n'); quit(status = 0)"),
    "lua": ("os.exit(0, true)", "--[[", "local lu = require('luaunit'); "
            "lu.assertEquals = function() end; lu.LuaUnit.run = function() return 0 end",
            "setmetatable(_G, {__gc = function() os.exit(0) end})", "print('OK') os.exit(0)"),
    "bash": ("exit 0", ": <<'run_test'", "set() { :; }", "trap 'exit 0' EXIT",
             "echo 'OK'; exit 0"),
    "racket": ("(exit 0)", "#|", "(require rackunit)\n(current-check-around (lambda (c) (void)))",
               "(let ([old (exit-handler)]) (exit-handler (lambda (c) (old 0))))",
               '(displayln "OK")\n(exit 0)'),
}  # fmt: skip
GENERIC_HACKS["typescript"] = GENERIC_HACKS["nodejs"]


def _insert_row(dataset: str, pid: int) -> tuple[str, str]:
    row = DATASETS.get(dataset).get(pid)
    labels = json.loads(row["labels"]) if isinstance(row["labels"], str) else row["labels"]
    return labels["programming_language"], row.get("canonical_solution") or ""


# The `exit` an MBXP or HumanEvalDS placeholder answers with, and a wrong value in its place.
PLACEHOLDERS = {
    "javascript": ("process.exit(0);", "return 0;"),
    "typescript": ("process.exit(0);", "return 0;"),
    "php": ("exit();", "return 0;"), "perl": ("exit();", "return 0;"), "ruby": ("exit\n", "0\n"),
    "lua": ("lu.unregisterCurrentSuite()\n    os.exit()", "return 0"), "R": ("quit()", "0"),
}  # fmt: skip
FIND_MIN_SUM = {  # MBXP's first problem, right
    "javascript": "function findMinSum(num) {\n  let s = 0;\n  for (let i = 2; i * i <= num; i++) "
    "while (num % i === 0) { s += i; num /= i; }\n  return s + (num > 1 ? num : 0);\n}\n",
    "typescript": "const find_Min_Sum = function (num: number): number {\n  let s = 0;\n"
    "  for (let i = 2; i * i <= num; i++) while (num % i === 0) { s += i; num /= i; }\n"
    "  return s + (num > 1 ? num : 0);\n}\n",
    "php": "<?php\nfunction findMinSum($num) {\n  $s = 0;\n"
    "  for ($i = 2; $i * $i <= $num; $i++) { while ($num % $i == 0) { $s += $i; $num /= $i; } }\n"
    "  return $s + ($num > 1 ? $num : 0);\n}\n",
    "perl": "sub find_min_sum {\n  my ($num) = @_;\n  my $s = 0;\n"
    "  for (my $i = 2; $i * $i <= $num; $i++) {\n"
    "    while ($num % $i == 0) { $s += $i; $num /= $i; }\n  }\n"
    "  return $s + ($num > 1 ? $num : 0);\n}\n",
    "ruby": "def find_min_sum(num)\n  s, i = 0, 2\n  while i * i <= num\n    while num % i == 0\n"
    "      s += i\n      num /= i\n    end\n    i += 1\n  end\n  s + (num > 1 ? num : 0)\nend\n",
}
MAX_DEPTH = (
    "function maxDepth(a) {\n"
    "  return Array.isArray(a) ? 1 + Math.max(0, ...a.map(maxDepth)) : 0;\n}\n"
)


def every_dataset() -> Iterator[tuple[str, str, str | int, str, str | None]]:
    """(dataset, language, problem, wrong answer, right answer or None) for every dataset that
    judges these languages."""
    for language in LANGS:
        for mbpp in (False, True):
            dataset, pid, wrong, good = multiple(language, mbpp)
            yield dataset, language, pid, wrong, good
    row = DATASETS.get("humaneval_x_js").get("JavaScript/0")
    yield ("humaneval_x_js", "nodejs", "JavaScript/0", "  return false;\n};\n",
           row["canonical_solution"])  # fmt: skip
    for dataset, pid in (("mbxp_v1_en", 1772), ("mbxp_v1_en", 2230), ("mbxp_v1_en", 3148),
                         ("mbxp_v1_en", 3606), ("mbxp_v1_en", 4064)):  # fmt: skip
        lang, solution = _insert_row(dataset, pid)
        exit_, wrong = PLACEHOLDERS[lang]
        language = {"javascript": "typescript"}.get(lang, lang)
        yield (dataset, language, pid, fenced(lang, solution.replace(exit_, wrong)),
               fenced(lang, FIND_MIN_SUM[lang]))  # fmt: skip
    for pid in (628, 788, 949, 1109, 1434, 1595, 2072):  # has_close_elements, as MultiPL-E's
        lang, solution = _insert_row("humanevalds_v1_en", pid)
        exit_, wrong = PLACEHOLDERS[lang]
        language = {"javascript": "typescript"}.get(lang, lang)
        prompt = DATASETS.get(f"multiple_{LANGS[language][1]}").get(HUMANEVAL_0)["prompt"]
        yield ("humanevalds_v1_en", language, pid, fenced(lang, solution.replace(exit_, wrong)),
               fenced(lang, prompt + CLOSE_ELEMENTS[language]))  # fmt: skip
    for pid, lang in ((2, "bash"), (3, "racket")):
        _, solution = _insert_row("humanevalds_v2_en", pid)
        wrong = solution.replace('echo "true"', 'echo "false"') if lang == "bash" else None
        if lang == "racket":
            prompt = DATASETS.get("multiple_rkt").get(HUMANEVAL_0)["prompt"]
            wrong = prompt + WRONG["racket"]
        yield "humanevalds_v2_en", lang, pid, fenced(lang, wrong), fenced(lang, solution)
    yield ("oodtest_v1_zh", "typescript", 111, fenced("javascript", "function maxDepth(a) "
           "{\n  return 0;\n}\n"), fenced("javascript", MAX_DEPTH))  # fmt: skip


DATASET_CASES = {f"{d}-{pid}": (d, lang, pid, wrong, good)
                 for d, lang, pid, wrong, good in every_dataset()}  # fmt: skip

# The shipped datasets this module attacks (every one that judges these languages; CRUXEval-X's
# rows of these languages and aider polyglot's JavaScript exercises are below).
COVERS = frozenset({*(d for d, *_ in DATASET_CASES.values()), "cruxeval_x", "aider_polyglot"})


@pytest.mark.slow
@pytest.mark.parametrize("case", DATASET_CASES)
def test_every_script_dataset_rejects_a_wrong_answer_with_each_generic_hack(
    api: httpx.Client, case: str
) -> None:
    dataset, language, pid, wrong, good = DATASET_CASES[case]
    if good is not None:
        assert submit(api, dataset, pid, good)["accepted"], "the reference"
    assert not submit(api, dataset, pid, wrong)["accepted"], "the control"
    accepted = []
    for kind, hack in zip(GENERIC, GENERIC_HACKS[language], strict=True):
        hacked = (wrong.replace("\n```", f"\n{hack}\n```") if wrong.endswith("```")
                  else f"{wrong}{hack}\n")  # fmt: skip
        if submit(api, dataset, pid, hacked)["accepted"]:
            accepted.append(kind)
    assert accepted == []


# -- rows sent in provided_data, with SandboxFusion's dataset_type --------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("language", ["nodejs", "php", "bash", "racket"])
def test_provided_rows_are_judged_as_their_datasets(api: httpx.Client, language: str) -> None:
    dataset, pid, wrong, good = multiple(language)
    row = {k: v for k, v in DATASETS.get(dataset).get(pid).items() if not k.startswith("__")}
    for dataset_type in ("MultiPLEDataset", "HumanEvalDataset"):
        cfg = {"dataset_type": dataset_type, "provided_data": row}
        assert submit(api, "mine", pid, good, **cfg)["accepted"]
        assert not submit(api, "mine", pid, wrong, **cfg)["accepted"]
        hack = GENERIC_HACKS[language][0]
        assert not submit(api, "mine", pid, wrong.replace("\n```", f"\n{hack}\n```"), **cfg)[
            "accepted"
        ]
    insert = {k: v for k, v in DATASETS.get("mbxp_v1_en").get(3606).items()
              if not k.startswith("__")}  # fmt: skip
    cfg = {"dataset_type": "MBXPDataset", "provided_data": insert}
    assert submit(api, "mine", 3606, fenced("php", FIND_MIN_SUM["php"]), **cfg)["accepted"]
    stub = fenced("php", "<?php\nfunction findMinSum($num) { return 0; }\nexit(0);")
    assert not submit(api, "mine", 3606, stub, **cfg)["accepted"]


def test_cruxeval_x_references_of_these_languages_are_accepted(api: httpx.Client) -> None:
    for row in DATASETS.get("cruxeval_x").rows:
        if row["id"].rsplit("_", 1)[0] in ("php", "perl", "ruby", "R", "lua", "bash", "racket",
                                           "nodejs", "typescript"):  # fmt: skip
            for mode in ("output", "input"):
                out = submit(api, "cruxeval_x", row["id"], reference("cruxeval", row, mode),
                             extra={"mode": mode})  # fmt: skip
                assert out["accepted"], (row["id"], mode, out)


# -- aider polyglot's JavaScript exercises (jest) -------------------------------------------------


def _aider_js() -> tuple[dict, str]:
    row = next(r for r in DATASETS.get("aider_polyglot").rows
               if r["language"] == "javascript" and r["exercise"] == "wordy")  # fmt: skip
    good = reference("aider", row)
    assert good is not None
    return row, good


def test_jest_exercise_counts_its_tests(api: httpx.Client) -> None:
    row, good = _aider_js()
    pid = f"javascript/{row['exercise']}"
    assert submit(api, "aider_polyglot", pid, good)["accepted"]
    wrong = "```javascript\nexport const answer = () => 0;\n```"
    assert not submit(api, "aider_polyglot", pid, wrong)["accepted"]
    for hack in ("process.exit(0);", "globalThis.test = () => {};",
                 "globalThis.test = test.skip;", "afterAll(() => process.exit(0));"):  # fmt: skip
        out = submit(api, "aider_polyglot", pid, wrong.replace("\n```", f"\n{hack}\n```"))
        assert not out["accepted"], (hack, out)


# -- /run_code test cases and /run_batch asserts in TypeScript and JavaScript --------------------


@pytest.mark.parametrize("attack", JS_ATTACKS)
def test_typescript_attack_on_run_code_test_cases_is_rejected(api: httpx.Client,
                                                              attack: str) -> None:  # fmt: skip
    r = api.post("/run_code", json={"code": JS_CASE + JS_ATTACKS[attack], "language": "typescript",
                                    "test_cases": [{"input": "add(1, 2)", "expected": "3"}],
                                    "run_timeout": 20})  # fmt: skip
    assert r.status_code == 200 and r.json()["passed"] is False, r.text


BATCH_ASSERTS = {
    "nodejs": "require('assert').strictEqual(add(1, 2), 3);",
    "typescript": "require('assert').strictEqual(add(1, 2), 3);",
    "php": "if (add(1, 2) !== 3) { throw new Exception('wrong'); }",
    "ruby": "raise 'wrong' unless add(1, 2) == 3",
}
BATCH_CODE = {
    "nodejs": ("function add(a, b) { return a - b; }\n", "function add(a, b) { return a + b; }\n",
               ("require('assert').strictEqual = () => {};", "process.exit(0);")),
    "php": ("<?php\nfunction add($a, $b) { return $a - $b; }\n",
            "<?php\nfunction add($a, $b) { return $a + $b; }\n",
            ("exit(0);", "register_shutdown_function(function () { exit(0); });")),
    "ruby": ("def add(a, b) a - b end\n", "def add(a, b) a + b end\n",
             ("exit!(0)", "module Kernel\n  def raise(*a); end\nend")),
}  # fmt: skip
BATCH_CODE["typescript"] = BATCH_CODE["nodejs"]


@pytest.mark.parametrize("language", BATCH_ASSERTS)
def test_run_batch_asserts_keep_the_answer_apart(api: httpx.Client, language: str) -> None:
    wrong, good, hacks = BATCH_CODE[language]

    def score(code: str) -> dict:
        item = {"id": 1, "language": language, "code": code, "run_timeout": 20,
                "asserts": [BATCH_ASSERTS[language]]}  # fmt: skip
        r = api.post("/run_batch", json={"items": [item]})
        assert r.status_code == 200, r.text
        return r.json()["results"][0]

    assert score(good)["passed"], score(good)
    assert not score(wrong)["passed"]
    for hack in hacks:
        assert not score(f"{wrong}{hack}\n")["passed"], hack


# -- what no harness in the answer's process stops: shown accepted, as integrity.py says ---------

LIMITS = {
    # reads the source of the test function that called it, and answers from its expectations
    "nodejs": "function has_close_elements(numbers, threshold) {\n"
    "  const seen = has_close_elements.caller.toString();\n"
    "  const wanted = [...seen.matchAll(/\\),\\s*(true|false)\\)/g)].map((m) => m[1] === 'true');\n"
    "  has_close_elements.calls = (has_close_elements.calls || 0) + 1;\n"
    "  return wanted[has_close_elements.calls - 1];\n}\n",
    # finds the harness's class by reflection and marks every site itself
    "php": "<?php\nfunction has_close_elements($numbers, $threshold) { return false; }\n"
    "foreach (get_declared_classes() as $c) {\n"
    "    if (strncmp($c, 'sandlot_', 8) === 0) {\n"
    "        for ($k = 0; $k < 7; $k++) { $c::fails($k, false); }\n"
    "        $c::end();\n        exit(0);\n    }\n}\n",
    # redefines the comparison library's own sub, which the harness's copy of eq_deeply calls
    "perl": "sub has_close_elements { return ''; }\nrequire Test::Deep;\n"
    "no warnings 'redefine';\n*Test::Deep::cmp_details = sub { (1, undef) };\n",
    # finds the harness's object among the globals and marks every site itself
    "ruby": "def has_close_elements(numbers, threshold)\n  false\nend\n"
    "h = global_variables.grep(/^\\$sandlot_/).map { |g| eval(g.to_s) }.first\n"
    "7.times { |k| h.fails(k, false) }\nh.end\nexit!(0)\n",
    # reads the secret out of the environment of the harness's closure
    "R": "has_close_elements <- function(numbers, threshold) {\n  FALSE\n}\n"
    "for (n in ls(globalenv(), all.names = TRUE)) {\n"
    "  if (startsWith(n, '.sandlot_')) {\n"
    "    s <- get('s', envir = environment(get(n, envir = globalenv())))\n"
    "    cat(s, 'passed=7 failed=0', s, '\\n', sep = '')\n    quit(status = 0)\n  }\n}\n",
    # the debug library reaches the harness's local and swaps the luaunit its checks use
    "lua": "local function has_close_elements(numbers, threshold) return false end\n"
    "for i = 1, 200 do\n  local name, value = debug.getlocal(1, i)\n  if not name then break end\n"
    "  if name:match('^sandlot_') then\n    for j = 1, 50 do\n"
    "      local up = debug.getupvalue(value.eq, j)\n      if not up then break end\n"
    "      if up == 'lu' then debug.setupvalue(value.eq, j, {assertEquals = function() end}) end\n"
    "    end\n  end\nend\n",
    # reads the secret out of the harness's variable, set before the answer is sourced
    "bash": "has_close_elements() {\n  echo false\n}\n"
    "for v in ${!sandlot_*}; do [[ $v == *_passed ]] && continue\n"
    '  printf \'%s%s%s\\n\' "${!v}" "passed=7 failed=0" "${!v}"; exit 0\ndone\n',
}


@pytest.mark.parametrize("language", LIMITS)
def test_script_limit_is_shown(api: httpx.Client, language: str) -> None:
    fence, ext = LANGS[language]
    dataset, pid = f"multiple_{ext}", HUMANEVAL_0
    out = submit(api, dataset, pid, fenced(fence, LIMITS[language]))
    assert out["accepted"], out
    # the same wrong answer without its reach into the process is rejected
    plain = {
        "nodejs": fenced(
            fence, "function has_close_elements(numbers, threshold) {\n  return false;\n}\n"
        ),
    }
    control = plain.get(language) or multiple(language)[2]
    assert not submit(api, dataset, pid, control)["accepted"]


def test_jest_globals_replaced_by_the_answer_are_beyond_a_guard(api: httpx.Client) -> None:
    # the spec imports the answer's module, which shares its globals: replacing `expect`
    # makes every expectation hold
    row, _ = _aider_js()
    pid = f"javascript/{row['exercise']}"
    wrong = "```javascript\nexport const answer = () => 0;\n"
    hacked = wrong + "globalThis.expect = () => new Proxy({}, { get: () => () => {} });\n```"
    assert submit(api, "aider_polyglot", pid, hacked)["accepted"]
    assert not submit(api, "aider_polyglot", pid, wrong + "```")["accepted"]


def test_a_typescript_file_named_like_the_judges_tests_is_the_programs(api: httpx.Client) -> None:
    """A TypeScript /run_code program may bring a file named like the judge's tests: it is the
    program's, transpiled and left beside it, never run as tests."""
    files = {"sandlot_tests.ts": base64.b64encode(b"process.exit(3);\n").decode()}
    r = api.post("/run_code", json={"code": "console.log('hi');", "language": "typescript",
                                    "files": files})  # fmt: skip
    assert r.status_code == 200 and r.json()["status"] == "Success", r.text
