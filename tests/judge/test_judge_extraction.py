"""Extraction and assembly details that need no sandbox (issues 17 and 14): prose detection that
never drops a line of code, bodies that call their own function, Go's imports, MultiPL-E's open
scopes, HumanEval's raw-completion cut, SandboxFusion's extracted_type rules."""

from __future__ import annotations

import pytest

from sandlot.judge import braces
from sandlot.judge.assemble import python_solution
from sandlot.judge.assemble_multi import build_aider, declares
from sandlot.judge.dialects import dialect
from sandlot.judge.extract import extract
from sandlot.judge.plans import JudgeConfig
from sandlot.judge.splices import go_program

# -- prose detection: a line that could be code stays (issue 17, item 2) ------------------------


@pytest.mark.parametrize(
    ("completion", "language", "kept"),
    [
        ("\nstd::process::exit(0);\nlet mut balance = 0;\n", "rust", "std::process::exit(0);"),
        ("\nloop {}\nlet mut balance = 0;\n", "rust", "loop {}"),
        ("NODE, EDGE, ATTR = range(3)\ndef f():\n    return NODE\n", "python", "NODE, EDGE"),
        ("while True: pass\ndef f():\n    return 1\n", "python", "while True: pass"),
        ("throw 1;\n#include <vector>\nint f() { return 1; }\n", "cpp", "throw 1;"),
        ("throw new RuntimeException();\nimport java.util.*;\nclass A {}\n", "java", "throw new"),
        ("throw 0;\nconst f = (a) => a;\n", "nodejs", "throw 0;"),
        ("for {}\nfunc F() int { return 1 }\n", "go_test", "for {}"),
        ("raise ArgumentError unless valid\ndef f\nend\n", "ruby", "raise ArgumentError"),
        ("module Main where\nmain = print 1\n", "haskell", "module Main where"),
        ("exit 0\n", "ruby", "exit 0"),
        ("System.exit(0);\nreturn 1;\n}\n", "java", "System.exit(0);"),
    ],
)
def test_a_line_that_could_be_code_is_never_dropped(
    completion: str, language: str, kept: str
) -> None:
    ex = extract(completion, language)
    assert ex.code.lstrip().startswith(kept), (ex.code, ex.how)
    assert "dropped" not in ex.how


@pytest.mark.parametrize(
    ("completion", "language", "first"),
    [
        ("Here is the code:\n\nint f() { return 1; }\n", "cpp", "int f()"),
        ("Sure! Here is the solution (in Rust):\nfn f() -> i32 { 1 }\n", "rust", "fn f()"),
        ("The answer is below.\ndef f(x):\n    return x\n", "python", "def f(x):"),
        ("This function walks the list and\nchecks each element.\nfn f() {}\n", "rust", "fn f"),
        ("## Solution\n#include <vector>\nint main() {}\n", "cpp", "#include"),
        ("1. First we sort.\n2. Then we scan.\nint x;\n", "cpp", "int x;"),
    ],
)
def test_sure_prose_is_dropped_and_named(completion: str, language: str, first: str) -> None:
    ex = extract(completion, language)
    assert ex.code.startswith(first), ex.code
    assert "dropped" in ex.how and "prose" in ex.how
    dropped = completion.split("\n")[0]
    assert repr(dropped[:60]) in ex.how  # extra.extraction quotes what went


def test_prose_after_the_code_is_dropped_too() -> None:
    ex = extract("fn f() -> i32 { 1 }\nThis works because it returns one.\n", "rust")
    assert ex.code == "fn f() -> i32 { 1 }" and "This works" in ex.how


def test_only_prose_is_no_code() -> None:
    for language in ("python", "cpp", "rust"):
        ex = extract("I can't help with that.", language)
        assert ex.kind == "empty" and ex.empty


# -- SandboxFusion's extracted_type (issue 14, item 11) ----------------------------------------


def test_an_empty_fenced_block_is_fenced_and_empty() -> None:
    ex = extract("Here:\n```cpp\n\n```\n", "cpp")
    assert (ex.kind, ex.code, ex.empty) == ("fenced", "", True)


def test_unfenced_cpp_is_no_answer_in_strict_extraction() -> None:
    ex = extract("int f() { return 1; }", "cpp", strict=True)
    assert (ex.kind, ex.code) == ("empty", "")
    assert "SandboxFusion" in ex.how
    # python, bash and sql are taken unfenced there too; and without `strict` C++ is taken
    assert extract("def f():\n    return 1\n", "python", strict=True).code.startswith("def f")
    assert extract("int f() { return 1; }", "cpp").kind == "heuristic"


# -- a body that calls its own function is a body (issue 17, item 3) ---------------------------


@pytest.mark.parametrize(
    ("code", "name", "language", "whole"),
    [
        ("    if n == 0 { return 1; }\n    (modp(n - 1, p) * 2) % p\n}\n", "modp", "rust", False),
        ("fn modp(n: i32, p: i32) -> i32 {\n    1\n}\n", "modp", "rust", True),
        ("    if (n == 0) return 1;\n    return modp(n - 1, p) * 2 % p;\n}", "modp", "cpp", False),
        ("    long r = modp(n - 1, p);\n    return r;\n}", "modp", "cpp", False),
        ("    cout << modp(n, p);\n}", "modp", "cpp", False),
        ("int modp(int n, int p) {\n    return 1;\n}", "modp", "cpp", True),
        ("std::vector<int> f(std::vector<int> a)\n{", "f", "cpp", True),
        ("        return modp(n - 1, p) * 2 % p;\n    }", "modp", "java", False),
        ("public static int modp(int n, int p) {", "modp", "java", True),
        ("  return fib(n - 1) + fib(n - 2);\n}", "fib", "nodejs", False),
        ("const fib = (n) => n;", "fib", "nodejs", True),
        ("    return Modp(n-1, p)\n}", "Modp", "go_test", False),
        ("Tuple!(long, long) sum_product(long[] numbers) {", "sum_product", "D_ut", True),
        ("    return sum_product(numbers[1 .. $]);", "sum_product", "D_ut", False),
        (
            "public static (List<object>, List<object>) Split(List<object> l) {",
            "Split",
            "csharp",
            True,
        ),
        ("func Modp(n int, p int) int {", "Modp", "go_test", True),
    ],
)
def test_declares_tells_a_definition_from_a_recursive_call(
    code: str, name: str, language: str, whole: bool
) -> None:
    assert declares(braces.blank(code), name, language) is whole


# -- Go: imports nothing uses are dropped (issue 17, item 4) -----------------------------------


def test_go_program_keeps_only_the_imports_the_code_uses() -> None:
    row = {
        "test_setup": 'package main\n\nimport (\n    "testing"\n'
        '    "github.com/stretchr/testify/assert"\n)\n',
        "import": 'import (\n    "math"\n    "strings"\n)\n',
        "prompt": 'import (\n    "math"\n    "strings"\n)\n\nfunc F(x float64) float64 {\n',
        "test": "func TestF(t *testing.T) {\n    assert := assert.New(t)\n"
        "    assert.Equal(1.0, F(-1.0))\n}\n",
    }  # fmt: skip
    body = '    // math.Abs would do; "strings" is in a literal\n    if x < 0 { return -x }\n'
    program = go_program(row, body + "    return x\n}\n", whole=False)
    imports = program.split("import (", 1)[1].split(")", 1)[0]
    assert '"testing"' in imports and '"github.com/stretchr/testify/assert"' in imports
    assert '"math"' not in imports and '"strings"' not in imports
    uses_math = go_program(row, "    return math.Abs(x)\n}\n", whole=False)
    assert '"math"' in uses_math.split(")", 1)[0]


# -- MultiPL-E Java and Scala: a whole answer leaves the prompt's scope open (issue 14, item 1) --


def test_scala_whole_answer_leaves_the_object_open_and_drops_trailing_statements() -> None:
    prompt = "import scala.math._\nobject Problem {\n    def f(x : Long) : Long = {\n"
    answer = (
        "import scala.math._\n\nobject Problem {\n    def f(x : Long) : Long = {\n        x\n"
        "    }\n}\nprintln(Problem.f(1))\nclass Helper { def g = 1 }\n"
    )
    code = dialect("scala").mp_whole(braces.drop_main(answer, "scala"), prompt)
    assert code.rstrip().endswith("x\n    }")  # the tests' `}` close the object
    assert "println(Problem" not in code and "class Helper { def g = 1 }" in code
    assert code.index("class Helper") < code.index("object Problem {")


def test_java_answer_cut_off_inside_its_class_keeps_its_members() -> None:
    prompt = "import java.util.*;\nclass Main {\n    public static long f(long x) {\n"
    cut = "import java.util.*;\nclass Problem {\n    public static long f(long x) {\n"
    code = dialect("java").mp_whole(cut + "        return x;\n    }\n\n", prompt)
    assert code.count("class ") == 1 and code.startswith("import java.util.*;\nclass Main {")
    assert code.rstrip().endswith("return x;\n    }")


def test_java_bare_method_answer_is_put_in_the_prompt_class() -> None:
    prompt = "import java.util.*;\nclass Main {\n    public static long f(long x) {\n"
    code = dialect("java").mp_whole("import java.io.*;\npublic static long f(long x) { return x; }",
                                    prompt)  # fmt: skip
    assert code.startswith("import java.io.*;\nclass Main {\n")


# -- HumanEval: a raw completion ends at its first unindented line (issue 14, item 2) -----------


def test_humaneval_raw_completion_is_cut_at_the_first_unindented_line() -> None:
    prompt = 'def add(a, b):\n    """Add."""\n'
    ex, code = python_solution(prompt, "    return a + b\n\n\ndef random", "add", {})
    assert ex.continuation and code.rstrip() == prompt + "    return a + b"
    # a whole function is not a continuation: its helpers after it stay
    whole = "def add(a, b):\n    return helper(a) + b\n\ndef helper(a):\n    return a\n"
    assert "def helper" in python_solution(prompt, whole, "add", {})[1]


# -- aider Java: every test source of the exercise compiles (issue 17, item 6) ------------------


def test_aider_java_second_test_file_is_compiled_too() -> None:
    row = {
        "language": "java", "exercise": "ledger",
        "solution_files": {"src/main/java/Ledger.java": "public class Ledger {}"},
        "test_files": {
            "src/test/java/LedgerTest.java": "public class LedgerTest {\n    @Disabled\n}\n",
            "src/test/java/LocaleExtension.java": "public class LocaleExtension {}\n",
        },
    }  # fmt: skip
    job = build_aider(row, "```java\npublic class Ledger {}\n```", JudgeConfig(), {}).job
    assert job is not None and job.language == "junit"
    assert job.code.startswith("public class LedgerTest") and "@Disabled" not in job.code
    assert job.files["LocaleExtension.java"] == b"public class LocaleExtension {}\n"
