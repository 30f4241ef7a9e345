"""Judge pieces that need no sandbox: extraction, checkers, pass@k, dataset loading."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pytest

from sandlot.errors import NotFound
from sandlot.judge import Datasets, braces
from sandlot.judge.aider import class_path_jar
from sandlot.judge.assemble_multi import build_aider
from sandlot.judge.checkers import Checker
from sandlot.judge.datasets import BadDataset, DatasetSpec
from sandlot.judge.extract import extract
from sandlot.judge.families import FAMILIES
from sandlot.judge.metrics import pass_at_k, summarize
from sandlot.judge.plans import JudgeConfig
from sandlot.languages import LANGUAGES, Registry

REGISTRY = Registry(LANGUAGES, "/opt/sandlot")

# -- extraction --------------------------------------------------------------------------------


def test_one_fenced_block() -> None:
    ex = extract("Here:\n```python\ndef f():\n    return 1\n```\nDone.", "python")
    assert (ex.kind, ex.code, ex.language) == ("fenced", "def f():\n    return 1", "python")


def test_the_block_in_the_wanted_language_wins() -> None:
    text = "```bash\npip install x\n```\nthen\n```py\nprint(2)\n```\n```cpp\nint main(){}\n```"
    assert extract(text, "python").code == "print(2)"
    assert extract(text, "cpp").code == "int main(){}"
    assert "2 " not in extract(text, "python").how and "python" in extract(text, "python").how


def test_the_block_defining_the_entry_point_wins_over_a_usage_example() -> None:
    text = "```python\nprint(add(1, 2))\n```\n```python\ndef add(a, b):\n    return a + b\n```"
    # the first python block merely names add; both do; so the first is kept (usage example)
    ex = extract(text, "python", "add")
    assert ex.kind == "fenced" and "add" in ex.code
    text2 = "```python\nimport os\n```\n```python\ndef add(a, b):\n    return a + b\n```"
    assert extract(text2, "python", "add").code.startswith("def add")


def test_untagged_block_and_tilde_fences_and_longer_fences() -> None:
    assert extract("```\nx = 1\n```", "python").code == "x = 1"
    assert extract("~~~ruby\nputs 1\n~~~", "ruby").code == "puts 1"
    assert extract("````python\na = '```'\n````", "python").code == "a = '```'"


def test_unclosed_fence_runs_to_the_end() -> None:
    ex = extract("Sure!\n```python\ndef f():\n    return 3\n", "python")
    assert ex.kind == "incomplete_fenced" and ex.code.startswith("def f():")


def test_continuation_of_a_prompt() -> None:
    ex = extract("    return a + b\n\nprint(1)", "python")
    assert ex.kind == "heuristic" and ex.continuation


def test_prose_then_bare_code() -> None:
    ex = extract("The answer is below.\ndef f(x):\n    return x\n", "python")
    assert ex.kind == "heuristic" and ex.code.startswith("def f") and "prose" in ex.how


def test_no_code_at_all() -> None:
    assert extract("", "python").kind == "empty"
    assert extract("I can't help with that.", "python").kind == "empty"
    # an empty fenced block is still a fenced one (SandboxFusion's extracted_type), with no code
    empty_block = extract("```python\n\n```", "python")
    assert (empty_block.kind, empty_block.code, empty_block.empty) == ("fenced", "", True)


def test_bare_fence_then_language_name_quirk() -> None:
    assert extract("```\npython\nprint(5)\n```", "python").code == "print(5)"


def test_block_index_chooses() -> None:
    assert extract("```\na\n```\n```\nb\n```", None, block_index=1).code == "b"


# -- checkers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "actual", "expected", "ok"),
    [
        ("exact", "1 2\n", "1 2\n", True),
        ("exact", "1 2", "1 2\n", False),
        ("whitespace", "1   2  \n\n\n", "1 2\n", True),
        ("whitespace", "1 2 3\n", "1 2\n", False),
        ("whitespace", "YES\n", "yes\n", False),
        ("case", "YES\n", "yes\n", True),
        ("float", "0.3333333\n", "0.333333333\n", True),
        ("float", "0.34\n", "0.333333333\n", False),
        ("sandboxfusion", "  Yes  \n1.0000001\n", "yes\n1.0\n", True),
        ("sandboxfusion", "1 2\n", "1  2\n", False),
    ],
)
def test_checker_modes(mode: str, actual: str, expected: str, ok: bool) -> None:
    assert Checker.parse(mode).compare(actual, expected)[0] is ok


def test_float_tolerances_absolute_and_relative() -> None:
    absolute = Checker.parse({"mode": "float", "abs_tol": 0.01, "rel_tol": 0})
    assert absolute.compare("1.005", "1.0")[0] and not absolute.compare("1.02", "1.0")[0]
    relative = Checker.parse({"mode": "float", "abs_tol": 0, "rel_tol": 1e-3})
    assert relative.compare("1000.5", "1000")[0] and not relative.compare("1002", "1000")[0]


def test_exact_integers_compare_integers_exactly_and_reals_within_the_tolerance() -> None:
    exact = Checker.parse("sandboxfusion", strict=True)
    assert Checker.parse("sandboxfusion").compare("903952722\n", "903952723\n")[0]
    assert not exact.compare("903952722\n", "903952723\n")[0]
    assert exact.compare("-0\n007\n+5\n", "0\n7\n5\n")[0]
    assert exact.compare("1.0000001\n", "1\n")[0]  # a real number keeps its tolerance
    # a tolerance the request sets is as set, integers too
    assert Checker.parse({"mode": "float", "abs_tol": 1}, strict=True).compare("9", "10")[0]
    digits = "9" * 100_000  # no int() of a token: it may be longer than int() takes
    assert exact.compare(digits, digits + "\n")[0] and not exact.compare(digits, digits + "8")[0]


def test_checker_says_where_outputs_differ() -> None:
    ok, why = Checker.parse("whitespace").compare("1\n2\n4\n", "1\n2\n3\n")
    assert not ok and why == "line 3: expected '3', got '4'"


def test_unknown_checker_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="unknown checker 'fuzzy'"):
        Checker.parse("fuzzy")


# -- pass@k ------------------------------------------------------------------------------------


def test_pass_at_k_unbiased_estimator() -> None:
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    # 1 - C(7, 2) / C(10, 2) = 1 - 21/45
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)
    assert pass_at_k(5, 1, 5) == 1.0


def test_summarize_means_over_problems_and_skips_k_beyond_n() -> None:
    records = [("a", True), ("a", False), ("b", False), ("b", False)]
    assert summarize(records, [1, 2, 10]) == {"pass@1": 0.25, "pass@2": 0.5}


# -- datasets ----------------------------------------------------------------------------------


def test_builtin_datasets_and_aliases() -> None:
    ds = Datasets(REGISTRY)
    names = ds.names()
    for name in ("humaneval_python", "mbpp", "mbpp_sanitized", "cruxeval", "humaneval_x_cpp",
                 "multiple_cpp", "aider_benchmark_v1", "code_contests", "live_code_bench_v1",
                 "mhpp", "evoeval", "palmath", "ncb_python_en", "mbxp_v1_en",
                 "humanevalds_v2_en"):  # fmt: skip
        assert name in names
    assert ds.spec("humaneval").name == "humaneval_python"
    assert len(ds.get("humaneval").rows) == 164
    assert len(ds.get("mbpp").rows) == 974
    assert len(ds.get("mbpp_sanitized").rows) == 427
    assert len(ds.get("cruxeval").rows) == 800
    assert ds.get("humaneval").get(0)["task_id"] == "HumanEval/0"


def test_unknown_dataset_and_id_say_what_exists() -> None:
    ds = Datasets(REGISTRY)
    with pytest.raises(NotFound, match=r"'humaneva'; did you mean 'humaneval'"):
        ds.spec("humaneva")
    with pytest.raises(NotFound, match="this server has: humaneval_python"):
        ds.spec("nothing-like-any")
    with pytest.raises(NotFound, match="164 problems, ids like HumanEval/0"):
        ds.get("humaneval").get("HumanEval/999")


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n")


def test_user_dataset_dir(tmp_path: Path) -> None:
    _write(tmp_path / "mine.jsonl", [
        json.dumps({"id": "a", "prompt": "add", "test": "assert add(1, 2) == 3"}),
        json.dumps({"id": "b", "prompt": "echo",
                    "tests": [{"stdin": "1", "expected_stdout": "1"}]}),
    ])  # fmt: skip
    with gzip.open(tmp_path / "zipped.jsonl.gz", "wt") as f:
        f.write(json.dumps({"id": 1, "prompt": "p", "test": "pass"}) + "\n")
    ds = Datasets(REGISTRY, str(tmp_path))
    assert {"mine", "zipped"} <= set(ds.names())
    assert ds.get("mine").ids() == ["a", "b"]
    assert ds.get("zipped").get(1)["prompt"] == "p"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "prompt": "p", "test": "x"', "line 2: not valid JSON"),
        ('["a"]', "line 2: a row must be a JSON object"),
        ('{"id": 2, "test": "x"}', "line 2: missing 'prompt'"),
        ('{"id": 2, "prompt": "p"}', "line 2: give 'test'"),
        ('{"id": 2, "prompt": "p", "tests": [{"stdin": "1"}]}', "line 2: tests[0] must be"),
        ('{"id": 1, "prompt": "p", "test": "x"}', "line 2: duplicate id '1'"),
    ],
)
def test_malformed_user_dataset_names_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    _write(tmp_path / "bad.jsonl", [json.dumps({"id": 1, "prompt": "p", "test": "x"}), line])
    ds = Datasets(REGISTRY, str(tmp_path))
    with pytest.raises(BadDataset) as info:
        ds.get("bad")
    assert str(tmp_path / "bad.jsonl") in str(info.value) and message in str(info.value)


# -- aider polyglot java / cpp assembly ---------------------------------------------------------


def _aider_row(language: str, exercise: str) -> dict:
    rows = Datasets(REGISTRY).get("aider_polyglot").rows
    return next(r for r in rows if (r["language"], r["exercise"]) == (language, exercise))


def test_class_path_jar_is_a_fixed_manifest_only_jar() -> None:
    jar = class_path_jar(("/usr/share/java/a.jar", "/usr/share/java/b.jar"))
    assert jar == class_path_jar(("/usr/share/java/a.jar", "/usr/share/java/b.jar"))
    with zipfile.ZipFile(io.BytesIO(jar)) as z:
        assert z.namelist() == ["META-INF/MANIFEST.MF"]
        manifest = z.read("META-INF/MANIFEST.MF").decode()
    assert "Class-Path: /usr/share/java/a.jar /usr/share/java/b.jar\r\n" in manifest


def test_aider_java_one_file_per_type_every_test_enabled() -> None:
    row = _aider_row("java", "bowling")
    answer = ("Here:\n```java\nimport java.util.*;\nclass BowlingGame {}\n```\nand\n"
              "```java\npublic final class Frame {}\n```\n```\n$ gradle test\n```\n")  # fmt: skip
    job = build_aider(row, answer, JudgeConfig(), {}).job
    assert job is not None and job.language == "junit"
    assert set(job.files) == {"assertj.jar", "BowlingGame.java", "Frame.java",
                              ".sandlot_answer/reserved"}  # fmt: skip
    assert "@Disabled" not in job.code and "@Test" in job.code


def test_aider_cpp_blocks_become_header_and_source() -> None:
    row = _aider_row("cpp", "clock")
    header = "#pragma once\nnamespace date_independent { struct clock {}; }"
    source = '#include "clock.h"\nnamespace date_independent {}'
    both = f"```cpp\n{source}\n```\n```cpp\n{header}\n```"
    job = build_aider(row, both, JudgeConfig(), {}).job
    assert job is not None and job.language == "catch2"  # Catch's main is prebuilt there
    assert (job.files["clock.h"].decode(), job.files["clock.cpp"].decode()) == (header, source)
    assert job.code.startswith("#define EXERCISM_TEST_SUITE\n#define EXERCISM_RUN_ALL_TESTS\n")
    # only the .cpp: the stub header stays; only a header: the .cpp just includes it
    job = build_aider(row, f"```cpp\n{source}\n```", JudgeConfig(), {}).job
    assert job.files["clock.h"].decode() == row["solution_files"]["clock.h"]
    job = build_aider(row, f"```cpp\n{header}\n```", JudgeConfig(), {}).job
    assert job.files["clock.cpp"] == b'#include "clock.h"\n'


def test_aider_cpp_prompt_shows_header_and_source() -> None:
    spec = DatasetSpec(name="aider_polyglot", family=FAMILIES["aider"], file="")
    text = spec.family.prompt(spec, _aider_row("cpp", "clock"), JudgeConfig())
    assert "clock.h:\n```cpp\n" in text and "clock.cpp:\n```cpp\n" in text


# -- brace-language surgery: C# and Java answers in a test's class -------------------------------

MINCOST_FULL = """```csharp
using System;
using System.Collections.Generic;
using System.Linq;

namespace Solution
{
    public class Program
    {
        // braces in comments { and strings do not count
        static string Open = "{";
        static char Close = '}';

        public static int MinCost(List<List<int>> cost, int m, int n)
        {
            var dp = new int[m + 1, n + 1];
            return dp[m, n];
        }

        public static void Main(string[] args)
        {
            Console.WriteLine(MinCost(new List<List<int>> { new List<int> { 1 } }, 0, 0));
        }
    }
}
```"""


def _assemble(dataset: str, pid: object, completion: str):
    ds = Datasets(REGISTRY)
    spec = ds.spec(dataset)
    params = {**spec.params, "language": spec.language}
    return spec.family.assemble(ds.get(dataset).get(pid), completion, JudgeConfig(), params).job


def test_class_body_counts_braces_outside_comments_and_literals() -> None:
    members = "\n  string s = \"}\";\n  // }\n  char c = '{';\n  void f() { }\n"
    code = f"class A {{{members}}}\nclass B {{ }}"
    assert braces.class_body(code) == members
    assert braces.class_body(code, "B") == " "
    assert braces.class_body(code, "C") == braces.class_body(code)  # none of that name: the first
    assert braces.class_body("static int f() { return 1; }") is None


def test_enclosing_class_of_a_slot() -> None:
    template = "using X;\nclass Problem {\n  // {1, 2}}\n  #<INSERT>\n  static void Main() { }\n}\n"
    assert braces.enclosing_class(template, template.index("#<INSERT>")) == "Problem"
    outside = "class T { }\n#<INSERT>\n"
    assert braces.enclosing_class(outside, outside.index("#<INSERT>")) is None


@pytest.mark.parametrize(
    "main",
    ["public static void Main(string[] args) {", "static int Main() {",
     "private static async Task Main() {"],
)  # fmt: skip
def test_drop_main_csharp_signatures(main: str) -> None:
    code = f"class P {{\n  static int F() {{ return 1; }}\n  {main}\n    if (x) {{ }}\n  }}\n}}\n"
    assert braces.drop_main(code, "csharp") == "class P {\n  static int F() { return 1; }\n\n}\n"


def test_mbxp_csharp_answer_full_program_or_bare_method_is_the_class_of_its_own() -> None:
    job = _assemble("mbxp_v2_en", 10000, MINCOST_FULL)
    answer = job.files[".sandlot_answer/answer.cs"].decode()
    assert "MinCost" in answer and 'Open = "{"' in answer
    # the answer's members, as a class Program of its own unit, without its namespace and Main;
    # the harness is the tests' program, calling it by the extern alias
    members = answer[answer.index("class Program {") :]
    for gone in ("namespace", "static void Main", "Console.WriteLine(MinCost"):
        assert gone not in members
    assert "MinCost" not in job.code.replace("SandlotAnswer::Program.MinCost(", "")
    assert job.code.count("static void Main") == 1
    method = "public static int MinCost(List<List<int>> c, int m, int n) { return 0; }"
    job = _assemble("mbxp_v2_en", 10000, f"```csharp\nusing System.Linq;\n{method}\n```")
    answer = job.files[".sandlot_answer/answer.cs"].decode()
    assert answer.startswith("using System.Linq;\nclass Program {") and method in answer
    assert method not in job.code


def test_csharp_tests_write_the_seal_at_the_end_of_their_main() -> None:
    one = _assemble("humanevalds_v2_en", 0, "```csharp\nstatic bool HasCloseElements() {}\n```")
    two = _assemble("humanevalds_v2_en", 0, "```csharp\nstatic bool HasCloseElements() {}\n```")
    # the same text each time: no secret in it, and the compile cache hits
    assert one.seal and one.code == two.code and one.apart
    end = "global::SandlotSeal.End(sandlotSecret);"
    assert end in one.code and end not in one.test_code
    main = one.code.index("static void Main")
    last_assert = one.code.rindex("global::SandlotSeal.Check(")  # each Debug.Assert, counted
    assert "Debug.Assert" not in one.code[main : one.code.index(end)] and one.tests
    assert main < last_assert < one.code.index(end)
    # the secret is read first in Main, into a local
    first = one.code.index("{", main) + 1
    read = "string sandlotSecret = global::SandlotSeal.Read();"
    assert one.code[first:].lstrip().startswith(read)
    # MultiPL-E C#: the same, in the tests' Main, which is the harness's only
    row = Datasets(REGISTRY).get("multiple_cs").rows[0]
    job = _assemble("multiple_cs", row["name"], row["gpt_solution"])
    assert job.seal and end in job.code and job.apart
    assert job.code.count("static void Main") == 1 and "class Problem" not in job.code
    assert "class Problem {" in job.files[".sandlot_answer/answer.cs"].decode()


def test_every_jest_skip_form_runs_in_the_aider_benchmark() -> None:
    from sandlot.judge.aider import unskipped

    skipped = ("xtest('a', f); xit('b', f); xdescribe('c', f); test.skip('d', f);\n"
               "it.skip ('e', f); describe.skip('f', f); fixit('g'); maxit('h')")  # fmt: skip
    enabled = ("test('a', f); it('b', f); describe('c', f); test('d', f);\n"
               "it ('e', f); describe('f', f); fixit('g'); maxit('h')")  # fmt: skip
    assert unskipped(skipped) == enabled
    job = _assemble(
        "aider_polyglot", "javascript/phone-number", "```js\nexport const clean = 1\n```"
    )
    assert "xtest(" not in job.code and job.code.count("test(") > 10


def test_python_programs_keep_their_tests_apart_from_the_answer() -> None:
    job = _assemble("humaneval_python", "HumanEval/0", "    return False\n")
    assert job.seal and job.tests_at is not None
    answer, tests = job.code[: job.tests_at], job.code[job.tests_at :]
    assert "def has_close_elements" in answer and "def check" not in answer
    assert tests.lstrip().startswith("METADATA") and tests.rstrip().endswith(
        "check(has_close_elements)"
    )
    # PAL's ground truth is in the tests' text, not in a file the answer could read
    pal = _assemble("palmath", Datasets(REGISTRY).get("palmath").rows[0]["id"],
                    "```python\ndef solution():\n    return 1\n```")  # fmt: skip
    assert "answer.json" not in pal.files and "gt = " in pal.code[pal.tests_at :]


def test_a_completion_without_code_is_judged_in_the_language_it_would_have_run() -> None:
    """No code to run still names the language, so that an eval's report counts the sample in
    its language's group, as pass@k does."""
    import asyncio

    from sandlot.judge import Judge

    judge = Judge(Datasets(REGISTRY), lambda: None)  # type: ignore[arg-type,return-value]
    for dataset, pid, language in (("humaneval", "HumanEval/0", "python"),
                                   ("multiple_cpp", "HumanEval_0_has_close_elements",
                                    "cpp")):  # fmt: skip
        result = asyncio.run(judge.submit(dataset, pid, "Sorry, I cannot.", JudgeConfig()))
        assert result.extra["verdict"] == "no_code"
        assert result.extra["language"] == language


def test_the_dataset_names_the_docs_use_are_the_ones_listed() -> None:
    """GET /list_datasets lists the datasets' own names (aliases such as `humaneval` are taken
    too, but not listed): the docs' examples and the API's use listed names."""
    import re

    from sandlot.wire.judge import Dataset

    listed = set(Datasets(REGISTRY).names())
    root = Path(__file__).resolve().parents[2]
    text = "\n".join(p.read_text() for p in [root / "README.md", *(root / "docs").glob("*.md")])
    used = re.findall(r'"dataset": "([^"]+)"', text)
    used += re.findall(r"sandlot eval (?:--dataset|-d) ([a-z_0-9]+)", text)
    used += [str(e) for e in Dataset.__metadata__[0].examples]  # type: ignore[attr-defined]
    assert used and set(used) <= listed, set(used) - listed
