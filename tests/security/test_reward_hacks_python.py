"""Reward hacks on the Python families, CRUXEval(-X) and VerilogEval, through a real server.

Each hack is a wrong answer plus the trick; each is rejected, the same wrong answer without the
trick is rejected too (the control), and the reference is accepted. The Python driver's in-process
limits (frames, gc, patched built-ins) are in tests/security/test_integrity.py.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.datasets import row_id
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server
from tests.security.test_integrity import PY_ATTACKS

pytestmark = pytest.mark.root
DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=600) as c:
        yield c


def submit(
    api: httpx.Client, dataset: str, pid: str, completion: str, language: str | None = None, **extra
) -> dict:
    config = {"extra": extra, **({"language": language} if language else {})}
    body = {"dataset": dataset, "id": pid, "completion": completion, "config": config}
    r = api.post("/submit", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def row(dataset: str, pid: str) -> dict:
    return DATASETS.get(dataset).get(pid)


# -- CRUXEval: an answer is data ----------------------------------------------------------------

# sample_0: f([1, 1, 3, 1, 3, 1]) == [(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]
CRUX_OUTPUT_HACKS = {
    "the_call_itself": "f([1, 1, 3, 1, 3, 1])",
    "or_true_after_a_wrong_value": "[] or True",
    "a_comparison_that_always_holds": "[] == [] or f([1, 1, 3, 1, 3, 1])",
    "closes_the_assert_and_exits": "[]) or __import__('os')._exit(0) or (1",
    "an_exit_in_the_value": "__import__('os')._exit(0)",
    "a_lambda_called_on_the_spot": "(lambda: f([1, 1, 3, 1, 3, 1]))()",
    "a_comprehension_that_runs_code": "[__import__('sys').exit(0) for _ in [1]]",
    "a_method_of_the_answers_own_object": "[].__class__.__base__.__subclasses__()",
}
CRUX_INPUT_HACKS = {
    "an_argument_that_exits": "__import__('os')._exit(0)",
    "a_second_statement": "[1]); import os; os._exit(0); f([1]",
    "a_keyword_spread_of_code": "**{'x': __import__('os')._exit(0)}",
    "a_lambda_that_reaches_builtins": "[1], (lambda: __builtins__)",
}


@pytest.mark.parametrize("hack", CRUX_OUTPUT_HACKS)
def test_cruxeval_output_hack_is_not_data(api: httpx.Client, hack: str) -> None:
    out = submit(api, "cruxeval", "sample_0", f"[ANSWER]{CRUX_OUTPUT_HACKS[hack]}[/ANSWER]")
    assert not out["accepted"], out
    assert "not data" in out["extra"]["reason"], out
    # the control: a wrong literal is judged and rejected; the right one is accepted
    assert not submit(api, "cruxeval", "sample_0", "[ANSWER][][/ANSWER]")["accepted"]
    good = reference("cruxeval", row("cruxeval", "sample_0"), "output")
    assert submit(api, "cruxeval", "sample_0", good)["accepted"]


@pytest.mark.parametrize("hack", CRUX_INPUT_HACKS)
def test_cruxeval_input_hack_is_not_data(api: httpx.Client, hack: str) -> None:
    answer = f"[ANSWER]f({CRUX_INPUT_HACKS[hack]})[/ANSWER]"
    out = submit(api, "cruxeval", "sample_0", answer, mode="input")
    assert not out["accepted"], out
    assert "not data" in out["extra"]["reason"] or out["extra"]["verdict"] != "accepted", out
    assert not submit(api, "cruxeval", "sample_0", "[ANSWER]f([1])[/ANSWER]", mode="input")[
        "accepted"
    ]
    good = reference("cruxeval", row("cruxeval", "sample_0"), "input")
    assert submit(api, "cruxeval", "sample_0", good, mode="input")["accepted"]


def test_cruxeval_data_answers_that_are_not_literals_are_still_judged(api: httpx.Client) -> None:
    # references that build their input with dict(), a lambda or a global of the problem
    for pid in ("sample_364", "sample_694", "sample_258"):
        good = reference("cruxeval", row("cruxeval", pid), "input")
        assert submit(api, "cruxeval", pid, good, mode="input")["accepted"], pid


def test_cruxeval_a_deeply_nested_answer_is_refused_cleanly(api: httpx.Client) -> None:
    for answer in ("[" * 5000 + "]" * 5000, "1" + "+1" * 100_000, "-" * 50_000 + "1"):
        out = submit(api, "cruxeval", "sample_0", f"[ANSWER]{answer}[/ANSWER]")
        assert not out["accepted"]


# CRUXEval-X: each language's answer is a literal of that language
CRUX_X_HACKS = {
    "java_0": ("output", "null) || true || (null", "new ArrayList<Long>()"),
    "cpp_0": ("output", "{}); exit(0); (void)({}", "{}"),
    "cpp_0#comment": ("output", "{} /* */", "{}"),
    "rust_0": ("output", "vec![]); std::process::exit(0); (vec![]", "vec![]"),
    "nodejs_0": ("output", "[]);process.exit(0);(", "[]"),
    "php_0": ("output", "array()) { } exit(0); if (array()", "array()"),
    "lua_0": ("output", "{}) os.exit(0) print({}", "{}"),
    "R_0": ("output", "list()) quit('no', 0) print(list()", "list()"),
    "bash_0": ("output", '"x" ]] ; exit 0 ; [[ "x"', '"x"'),
    "ruby_0": ("output", "[], nil); exit!(0); p(", "[]"),
    # (no control: this row's test ignores the answer, as in SandboxFusion: f returns a list,
    # which Perl flattens into eq_deeply's arguments, so it compares 4 with 4)
    "perl_0": ("output", "[]) or exit(0); print(", None),
    "racket_0": ("output", "(list)) (exit 0) (list", "(list)"),
    "python_0": ("output", "candidate([1, 1, 3, 1, 3, 1])", "[]"),
    "scala_0": ("output", "null) || true || (null", "List[Long]()"),
    "csharp_0": ("output", "null) || true || (null", "new List<long>()"),
    "typescript_0": ("input", "[1]); process.exit(0); candidate([1]", "[1]"),
    "D_ut_0": ("input", "[1L]) || true || candidate([1L]", "[1L]"),
    "go_test_2": ("output", "nil } ; os.Exit(0) ; _ = []int{", "nil"),
    # strings that are code: what the language interpolates, or re-reads as source
    "bash_0#a_glob_that_matches_any_output": ("output", "*", '"x"'),
    "bash_0#a_bracket_pattern": ("output", "[0-9]*", '"x"'),
    "bash_0#command_substitution_in_a_string": (
        "output", '"$(candidate "1 1 3 1 3 1")"', '"x"'),
    "bash_0#a_backslash_that_ends_no_single_quoted_string": (
        "output", "'\\' ]] || [[ '", '"x"'),
    "ruby_0#interpolation_that_patches_equality": (
        "output", '"#{String.class_eval { define_method(:==) { |o| true } }}"', "[]"),
    "php_0#interpolation_that_runs_a_call": ("output", '"${exit(0)}"', "array()"),
    "java_0#unicode_escapes_that_close_the_string": (
        "output", '"\\u0022) || true || Boolean.valueOf(\\u0022true"', "new ArrayList<Long>()"),
}  # fmt: skip


@pytest.mark.parametrize("case", CRUX_X_HACKS)
def test_cruxeval_x_answer_that_is_not_a_literal_is_refused(api: httpx.Client, case: str) -> None:
    pid = case.split("#")[0]
    mode, hack, wrong = CRUX_X_HACKS[case]
    out = submit(api, "cruxeval_x", pid, f"[ANSWER]{hack}[/ANSWER]", mode=mode)
    assert not out["accepted"] and "not data" in out["extra"]["reason"], out
    if wrong is None:
        return
    control = submit(api, "cruxeval_x", pid, f"[ANSWER]{wrong}[/ANSWER]", mode=mode)
    assert not control["accepted"] and "not data" not in control["extra"].get("reason", ""), control


# -- VerilogEval: a circuit judged by its ports alone ---------------------------------------------

# verilogeval_human 0: out = sel ? b : a (100 bits). The wrong answer: out = a.
VERILOG_WRONG = "assign out = a;\n"
VERILOG_HACKS = {
    "prints_the_summary_and_finishes": 'initial begin $display("Mismatches: 0 in 100 samples");'
    " $finish; end\n",
    "prints_the_summary_in_a_final_block": 'final $display("Mismatches: 0 in 100 samples");\n',
    "instantiates_the_reference_module": "endmodule\nmodule top_module_cheat; endmodule\n",
    "copies_the_reference_by_instantiating_it": "",  # replaced below: the whole answer
    "forces_the_testbench_error_count": "always @* force tb.stats1.errors = 0;\n",
    "reads_a_file": 'integer fd; initial fd = $fopen("/etc/passwd", "r");\n',
    "a_compiler_directive": "`define x 1\n",
    "defparam_on_the_testbench": "defparam tb.good1.x = 1;\n",
}


@pytest.mark.parametrize("hack", VERILOG_HACKS)
def test_verilog_answer_reaching_past_its_ports_is_refused(api: httpx.Client, hack: str) -> None:
    if hack == "copies_the_reference_by_instantiating_it":
        body = "reference_module r (.a(a), .b(b), .sel(sel), .out(out));\nendmodule\n"
    elif hack == "instantiates_the_reference_module":
        body = VERILOG_WRONG + "endmodule\nmodule helper; reference_module r ();\n"
    else:
        body = VERILOG_WRONG + VERILOG_HACKS[hack]
    out = submit(api, "verilogeval_human", "0", f"```verilog\n{body}endmodule\n```")
    assert not out["accepted"], out
    assert out["extra"]["verdict"] == "refused", out
    control = submit(api, "verilogeval_human", "0", f"```verilog\n{VERILOG_WRONG}endmodule\n```")
    assert not control["accepted"] and control["extra"]["verdict"] == "wrong_answer", control
    good = reference("verilog", row("verilogeval_human", "0"))
    assert submit(api, "verilogeval_human", "0", good)["accepted"]


# -- unittest and pytest suites: the driver (or pytest) runs the problem's own, counted ----------

# Each hack makes the problem's tests not run, or run others in their place.
EMPTIES_THE_TESTCASES = """
import unittest
def _empty(cls, **kwargs):
    for name in list(vars(cls)):
        if name.startswith("test"):
            delattr(cls, name)
unittest.TestCase.__init_subclass__ = classmethod(_empty)
"""
SUITE_HACKS = {
    "load_tests_returns_an_empty_suite": "import unittest\n"
    "def load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n",
    "deletes_every_test_as_its_class_is_made": EMPTIES_THE_TESTCASES,
    "puts_a_fake_unittest_in_sys_modules": """
import sys, types
_fake = types.ModuleType("unittest")
class _Case:
    pass
_fake.TestCase = _Case
_fake.main = lambda *a, **k: None
sys.modules["unittest"] = _fake
""",
    "replaces_the_test_module_on_disk_and_in_sys_modules": """
import sys, types
for _name in ("accumulate_test", "tests"):
    open(_name + ".py", "w").write("import unittest\\nclass T(unittest.TestCase):\\n"
                                   "    def test_ok(self):\\n        pass\\n")
    sys.modules[_name] = types.ModuleType(_name)
""",
    "prints_the_runners_success_line": "print('Ran 10 tests in 0.001s\\n\\nOK')\n",
    "exits_0_at_exit_once_the_tests_failed": "import atexit, os\natexit.register(os._exit, 0)\n",
}
SUITES = {
    # dataset, id, the wrong answer (fenced where the family wants a fence)
    "bigcodebench": (
        "bigcodebench",
        "BigCodeBench/1",
        "def task_func(*args, **kwargs):\n    return None\n",
        False,
    ),
    "aider_benchmark_v1": (
        "aider_benchmark_v1",
        "1",
        "def accumulate(collection, operation):\n    return []\n",
        True,
    ),
    "aider_polyglot_python": (
        "aider_polyglot_python",
        "1001",
        "def encode(plain_text, a, b):\n"
        "    return ''\ndef decode(ciphered_text, a, b):\n"
        "    return ''\n",
        True,
    ),
}


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.mark.parametrize("hack", SUITE_HACKS)
@pytest.mark.parametrize("suite", SUITES)
def test_unittest_suite_hack_is_rejected(api: httpx.Client, suite: str, hack: str) -> None:
    dataset, pid, wrong, fence = SUITES[suite]
    wrap = fenced if fence else (lambda code: code)
    out = submit(api, dataset, pid, wrap(wrong + SUITE_HACKS[hack]))
    assert not out["accepted"], out
    assert not submit(api, dataset, pid, wrap(wrong))["accepted"]


@pytest.mark.parametrize("suite", SUITES)
def test_unittest_suite_reference_is_accepted_with_its_count(api: httpx.Client, suite: str) -> None:
    dataset, pid, _, _ = SUITES[suite]
    spec = DATASETS.spec(dataset)
    out = submit(api, dataset, pid, reference(spec.family, row(dataset, pid)))
    assert out["accepted"], out


def test_a_suite_emptied_in_process_is_caught_by_its_count(api: httpx.Client) -> None:
    # the reference, plus a hook that deletes every test: it would pass with zero tests run
    dataset, pid = "bigcodebench", "BigCodeBench/1"
    problem = row(dataset, pid)
    good = problem["content"] + problem["canonical_solution"] + "\n"
    assert submit(api, dataset, pid, fenced(good))["accepted"]
    out = submit(api, dataset, pid, fenced(good + EMPTIES_THE_TESTCASES))
    assert not out["accepted"]
    assert "the seal attests 0 passed" in out["extra"]["reason"], out


NCB_WRONG = "def word_count(file_path):\n    return {}\n"
NCB_HACKS = {
    "leaves_a_string_open_to_swallow_the_tests": "x = '''\n",
    "brings_a_test_of_its_own": "def test_always():\n    assert True\n",
    "skips_every_test_with_pytestmark": "import pytest\npytestmark = pytest.mark.skip('no')\n",
    "writes_a_conftest_that_passes_everything": """
open("conftest.py", "w").write(
    "import pytest\\n@pytest.hookimpl(tryfirst=True)\\n"
    "def pytest_runtest_call(item):\\n    return True\\n")
""",
    "exits_0_at_import": "import os\nos._exit(0)\n",
    "prints_pytests_success_line": "print('6 passed in 0.01s')\n",
}


@pytest.mark.parametrize("hack", NCB_HACKS)
@pytest.mark.parametrize("dataset", ["ncb_python_en", "ncb_python_zh"])
def test_ncb_pytest_hack_is_rejected(api: httpx.Client, dataset: str, hack: str) -> None:
    out = submit(api, dataset, "0", fenced(NCB_WRONG + NCB_HACKS[hack]))
    assert not out["accepted"], out
    assert not submit(api, dataset, "0", fenced(NCB_WRONG))["accepted"]


def test_ncb_an_extra_test_beside_a_right_answer_breaks_the_count(api: httpx.Client) -> None:
    good = reference("ncb", row("ncb_python_en", "0"))
    assert submit(api, "ncb_python_en", "0", good)["accepted"]
    extra = good.replace("```python\n", "```python\ndef test_mine():\n    assert True\n\n", 1)
    out = submit(api, "ncb_python_en", "0", extra)
    assert not out["accepted"] and "the seal attests 7 passed" in out["extra"]["reason"], out


# -- zero tests in-process: the answer makes the tests' own frame skip its asserts ---------------

TRACE_JUMP = """
import sys as _sys
_calls = []
def has_close_elements(numbers, threshold):
    # right for the first assert (True), then wrong; the jump skips all asserts but the last,
    # which wants False
    _calls.append(1)
    if len(_calls) > 1:
        return False
    frame = _sys._getframe(1)
    last = max(line for _, _, line in frame.f_code.co_lines() if line)
    def jump(f, event, arg):
        if event == "line" and f is frame:
            try:
                f.f_lineno = last
            except ValueError:
                pass
        return jump
    frame.f_trace = jump
    _sys.settrace(lambda *a: None)
    return True
"""


def test_python_trace_jump_over_the_asserts_is_stopped_by_the_split(api: httpx.Client) -> None:
    # The answer reaches the tests' frame (sys._getframe) and makes it skip its asserts. By
    # default it runs in a process of its own, where the tests' frame is not: rejected, and the
    # result says the job was split. With config.extra.split false (one process, as
    # SandboxFusion runs it) no guard in that process stops it (integrity.py: out_of_reach),
    # shown here so that the docs' claim stays true.
    hacked = submit(api, "humaneval", "HumanEval/0", TRACE_JUMP)
    assert not hacked["accepted"]
    assert hacked["extra"]["integrity"] == "split"
    assert not submit(api, "humaneval", "HumanEval/0", TRACE_JUMP, strict=True)["accepted"]
    one_process = submit(api, "humaneval", "HumanEval/0", TRACE_JUMP, split=False)
    assert one_process["accepted"]
    assert one_process["extra"]["integrity"] == "in-process"
    control = TRACE_JUMP.replace("frame.f_trace = jump", "pass")
    assert not submit(api, "humaneval", "HumanEval/0", control)["accepted"]
    assert not submit(api, "humaneval", "HumanEval/0", control, split=False)["accepted"]
    ref = row("humaneval", "HumanEval/0")
    assert submit(api, "humaneval", "HumanEval/0", ref["canonical_solution"])["accepted"]


def test_python_split_opt_out_is_refused_with_strict_or_when_not_a_boolean(
    api: httpx.Client,
) -> None:
    body = {"dataset": "humaneval", "id": "HumanEval/0", "completion": "    return False\n"}
    for extra, said in (({"split": False, "strict": True}, "drop one of them"),
                        ({"split": "no"}, "must be true or false")):  # fmt: skip
        r = api.post("/submit", json={**body, "config": {"extra": extra}})
        assert r.status_code == 400, r.text
        assert said in r.text


# What the tests call besides the function under test is the dataset's, under `strict` (the
# answer's own built-in names) and without it (the prompt's helpers): each case is (dataset, id,
# the wrong answer, the hack after it, whether it holds without `strict` too).
NAMES_THE_TESTS_CALL = {
    # rows that name no entry point: the function under test is found in the tests
    "mbpp_sanitized_an_own_set_the_tests_call": (
        "mbpp_sanitized", "2", "def similar_elements(a, b):\n    return (99,)\n",
        "def set(*args):\n    return 0\n", False),
    "humaneval_x_python_an_own_abs_the_tests_call": (
        "humaneval_x_python", "Python/2", "def truncate_number(number):\n    return 0.5\n",
        "def abs(x):\n    return 0\n", False),
    # the prompt's helpers that the tests call
    "humaneval_redefines_the_prompts_encoder": (
        "humaneval", "HumanEval/38", "def decode_cyclic(s):\n    return s\n",
        "def encode_cyclic(s):\n    return s\n", True),
    "humaneval_redefines_the_prompts_polynomial": (
        "humaneval", "HumanEval/32", "def find_zero(xs):\n    return 0.0\n",
        "def poly(xs, x):\n    return 0.0\n", True),
}  # fmt: skip


@pytest.mark.parametrize("case", NAMES_THE_TESTS_CALL)
def test_a_name_the_tests_call_redefined_by_the_answer_is_not_theirs(
    api: httpx.Client, case: str
) -> None:
    dataset, pid, wrong, hack, always = NAMES_THE_TESTS_CALL[case]
    for strict in (True, False) if always else (True,):
        out = submit(api, dataset, pid, fenced(wrong + "\n\n" + hack), strict=strict)
        assert not out["accepted"], (strict, out)
        assert not submit(api, dataset, pid, fenced(wrong), strict=strict)["accepted"]
    rows = {"humaneval": "humaneval_python"}.get(dataset, dataset)
    good = _whole(dataset, row(rows, pid))
    assert good is not None
    assert submit(api, dataset, pid, fenced(good + "\n"), strict=True)["accepted"]


# -- every Python dataset: a wrong answer with each of the generic hacks --------------------------


def _python_rows(dataset: str) -> list[dict]:
    """The dataset's rows judged in Python."""
    out = []
    for r in DATASETS.get(dataset).rows:
        labels = r.get("labels")
        labels = json.loads(labels) if isinstance(labels, str) else (labels or {})
        if labels.get("programming_language", "python") == "python":
            out.append(r)
    return out


def _whole(dataset: str, r: dict) -> str | None:
    """The row's reference as one whole program (None: the dataset has none)."""
    spec = DATASETS.spec(dataset)
    if spec.family.name in ("mhpp", "lcb", "stdio"):
        return None  # no usable reference (LiveCodeBench's sample is `sys.exit(0)`)
    ref = reference(spec.family, r)
    if ref is None:
        return None
    if spec.family.name in ("humaneval", "humaneval_x"):
        return (r.get("prompt") or r.get("content") or "") + ref
    blocks = re.findall(r"```\w*\n(.*?)```", ref, re.S)
    return blocks[0] if blocks else ref


def _wrong(code: str) -> str:
    """`code` with every function returning None: wrong, yet it runs to the tests' asserts."""

    class NoReturns(ast.NodeTransformer):
        def visit_Return(self, node: ast.Return) -> ast.Return:
            return ast.Return(value=ast.Constant(None))

    return ast.unparse(NoReturns().visit(ast.parse(code)))


def _stub(dataset: str, r: dict) -> str:
    """A wrong answer where the dataset has no reference: each function the prompt names."""
    if DATASETS.spec(dataset).family.name in ("lcb", "stdio"):
        return "print('wrong')\n"
    names = re.findall(r"def (\w+)\s*\(", r.get("content") or r.get("prompt") or "")
    return "".join(f"def {n}(*args, **kwargs):\n    return None\n" for n in names)


PYTHON_DATASETS = [
    "humaneval_python", "humaneval_x_python", "evoeval", "shadow_humaneval_python", "mbpp",
    "mbpp_sanitized", "mhpp", "live_code_bench_v1", "palmath", "code_contests", "mbxp_v1_en",
    "humanevalds_v1_en", "oodtest_v1_zh",
]  # fmt: skip
GENERIC = {name: text for name, text in PY_ATTACKS.items()}
GENERIC["prints_what_passing_tests_print"] = "print('OK')\nprint('All tests passed')\n"


@pytest.mark.slow
@pytest.mark.parametrize("dataset", PYTHON_DATASETS)
def test_every_python_dataset_rejects_a_wrong_answer_with_each_generic_hack(
    api: httpx.Client, dataset: str
) -> None:
    spec, extra = DATASETS.spec(dataset), {}
    if dataset == "code_contests":
        extra = {"language": "python"}
    # the first row whose reference is accepted (some rows of SandboxFusion's tables are its
    # deliberately wrong controls), or the first row where the dataset has no reference
    # (oodtest's Python rows have only those: the wrong answer is then a stub)
    rows = _python_rows(dataset)
    for r in rows:
        pid, whole = str(row_id(r, spec)), _whole(dataset, r)
        if whole is None or submit(api, dataset, pid, fenced(whole + "\n"), **extra)["accepted"]:
            break
    else:
        r, whole = rows[0], None
        pid = str(row_id(r, spec))
    wrong = _wrong(whole) + "\n" if whole is not None else _stub(dataset, r)
    assert not submit(api, dataset, pid, fenced(wrong), **extra)["accepted"], "control"
    accepted = [
        hack
        for hack, text in GENERIC.items()
        if submit(api, dataset, pid, fenced(wrong + text), **extra)["accepted"]
    ]
    assert accepted == [], accepted


# -- sandlot's own harnesses (PAL-math, LiveCodeBench) hold what they compare with ----------------

HARNESS_PATCHES = """
import builtins, json, math, sys
import __main__
math.isclose = lambda *a, **k: True
builtins.float = lambda *a: 0.0
json.dumps = lambda *a, **k: "0"
json.loads = lambda *a, **k: 0
sys.exit = lambda *a: None
for _name in dir(__main__):
    if callable(getattr(__main__, _name)):
        setattr(__main__, _name, lambda *a, **k: True)
"""


def test_palmath_answer_patching_what_the_harness_compares_with_is_rejected(
    api: httpx.Client,
) -> None:
    good = reference("palmath", row("palmath", "0"))
    assert submit(api, "palmath", "0", good)["accepted"]
    wrong = "def solution():\n    return '8'\n"
    assert not submit(api, "palmath", "0", fenced(wrong))["accepted"]
    assert not submit(api, "palmath", "0", fenced(wrong + HARNESS_PATCHES))["accepted"]


def test_livecodebench_answer_patching_its_harness_is_rejected(api: httpx.Client) -> None:
    for r in DATASETS.get("live_code_bench_v1").rows:
        pid = str(row_id(r, DATASETS.spec("live_code_bench_v1")))
        wrong = "print('wrong')\n"
        assert not submit(api, "live_code_bench_v1", pid, fenced(wrong))["accepted"]
        out = submit(api, "live_code_bench_v1", pid, fenced(HARNESS_PATCHES + wrong))
        assert not out["accepted"], out


def test_a_result_says_whether_its_answer_ran_split(api: httpx.Client) -> None:
    good = reference("humaneval", row("humaneval_python", "HumanEval/0"))
    for extra in ({}, {"strict": True}):
        out = submit(api, "humaneval", "HumanEval/0", good, **extra)
        assert out["accepted"] and out["extra"]["integrity"] == "split", out
    out = submit(api, "humaneval", "HumanEval/0", good, split=False)
    assert out["accepted"] and out["extra"]["integrity"] == "in-process", out
    # MBPP 367's setup builds the answer's own objects: in one process, and says so
    ref = str(row("mbpp", "367")["code"])
    out = submit(api, "mbpp", "367", f"```python\n{ref}\n```")
    assert out["extra"]["integrity"] == "in-process", out


# verilogeval_machine 0: a 100-bit rotator; the wrong answer loads and never rotates
MACHINE_WRONG = "always @(posedge clk) if (load) q <= data;\n"


MACHINE_HACKS = ["prints_the_summary_and_finishes", "forces_the_testbench_error_count",
                 "reads_a_file", "a_compiler_directive"]  # fmt: skip


@pytest.mark.parametrize("hack", MACHINE_HACKS)
def test_verilog_machine_answer_reaching_past_its_ports_is_refused(
    api: httpx.Client, hack: str
) -> None:
    body = MACHINE_WRONG + VERILOG_HACKS[hack]
    out = submit(api, "verilogeval_machine", "0", f"```verilog\n{body}endmodule\n```")
    assert not out["accepted"] and out["extra"]["verdict"] == "refused", out
    control = submit(api, "verilogeval_machine", "0",
                     f"```verilog\n{MACHINE_WRONG}endmodule\n```")  # fmt: skip
    assert not control["accepted"] and control["extra"]["verdict"] == "wrong_answer", control
    good = reference("verilog", row("verilogeval_machine", "0"))
    assert submit(api, "verilogeval_machine", "0", good)["accepted"]


# -- RepoBench: the answer is a line compared token by token; nothing of it runs ------------------

REPOBENCH_HACKS = {
    "an_exit_as_the_line": "__import__('os')._exit(0)",
    "a_comment_line_then_an_exit": "# the next line\nimport os; os._exit(0)",
    "the_success_text": "OK",
}


@pytest.mark.parametrize("hack", REPOBENCH_HACKS)
@pytest.mark.parametrize("dataset", ["repobench_c_python", "repobench_c_java"])
def test_repobench_line_is_compared_never_run(api: httpx.Client, dataset: str, hack: str) -> None:
    out = submit(api, dataset, "0", REPOBENCH_HACKS[hack])
    assert not out["accepted"], out
    assert not submit(api, dataset, "0", "x = 1")["accepted"]
    good = reference("repobench", row(dataset, "0"))
    assert submit(api, dataset, "0", good)["accepted"]


# The shipped datasets this module attacks (tests/security/test_battery_coverage.py checks that
# every shipped dataset is attacked by some module).
COVERS = frozenset(
    {*PYTHON_DATASETS, *(d for d, *_ in SUITES.values()), "ncb_python_en", "ncb_python_zh",
     "cruxeval", "cruxeval_x", "verilogeval_human", "verilogeval_machine", "repobench_c_python",
     "repobench_c_java", "aider_benchmark_v1", "aider_polyglot_python"}
)  # fmt: skip


# -- the split: what the answer's process leaves behind never runs in the tests' ---------------

# The answer's process writes a module into the work dir, which the tests' process imports
# after the answer ran (sys.path[0] is the work dir): here numpy, which T imports to decode a
# value tagged "nd"; the module's code runs in T and writes T's seal.
WRITES_A_MODULE_THE_TESTS_IMPORT = '''
import os as _os
_evil = """
import sys, os
f = sys._getframe()
while f is not None:
    if f.f_code.co_name == "__sandlot_driver":
        seal = f.f_locals["seal"]
        os.write(1, seal + seal + b"\\\\n")
        os._exit(0)
    f = f.f_back
"""
with open(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "numpy.py"), "w") as _f:
    _f.write(_evil)

class _Fake:
    shape = (1,)
    dtype = type("D", (), {"str": "<i8"})()
    def tolist(self):
        return [1]
_Fake.__module__ = "numpy"
'''


def test_strict_a_module_the_answer_writes_never_runs_in_the_tests_process(
    api: httpx.Client,
) -> None:
    wrong = "def decode_cyclic(s: str):\n    return s\n"
    hack = WRITES_A_MODULE_THE_TESTS_IMPORT + "def decode_cyclic(s: str):\n    return _Fake()\n"
    out = submit(api, "humaneval", "HumanEval/38", fenced(hack), strict=True)
    assert not out["accepted"], out
    assert not submit(api, "humaneval", "HumanEval/38", fenced(wrong), strict=True)["accepted"]
    good = _whole("humaneval", row("humaneval_python", "HumanEval/38"))
    assert submit(api, "humaneval", "HumanEval/38", fenced(good + "\n"), strict=True)["accepted"]


def test_run_batch_an_own_builtin_is_not_the_asserts(api: httpx.Client) -> None:
    # /run_batch asserts (and ground_truth.assert_case) name no entry: no name of the answer's
    # stands for a built-in there, as on the judge no name but the entry point's does
    wrong = "def similar_elements(a, b):\n    return (99,)\n"
    hack = wrong + "def set(*a):\n    return 0\n"
    asserts = ["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))"]
    good = "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"
    items = [
        {"id": "hack", "code": hack, "asserts": asserts},
        {"id": "hack_case", "code": hack, "ground_truth": {"assert_case": asserts}},
        {"id": "control", "code": wrong, "asserts": asserts},
        {"id": "good", "code": good, "asserts": asserts},
    ]
    results = {r["id"]: r for r in api.post("/run_batch", json={"items": items}).json()["results"]}
    assert not results["hack"]["passed"] and not results["hack_case"]["passed"], results
    assert not results["control"]["passed"] and results["good"]["passed"], results
