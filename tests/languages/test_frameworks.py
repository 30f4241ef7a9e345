"""Test frameworks and language specifics, in the real jail through the real server.

JUnit, jest (with its JSON report fetched as SandboxFusion's clients do), go test with testify,
D unittest blocks, luaunit, Perl's test modules, SQL results, PHP's opening tag, Scala's object,
and the languages this server cannot run: a specific message, never a crash.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from sandlot.languages import LANGUAGES

pytestmark = [pytest.mark.root, pytest.mark.slow]

JUNIT_TEST = """
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;

public class CalcTest {
    @Test
    void adds() { assertEquals(3, Calc.add(1, 2)); }
    @Test
    void addsNegatives() { assertEquals(EXPECTED, Calc.add(-1, -2)); }
}
"""
JUNIT_CALC = "public class Calc { public static int add(int a, int b) { return a + b; } }\n"

JEST_TEST = """
function add(a: number, b: number): number { return a + b; }
describe("add", () => {
  test("small", () => { expect(add(1, 2)).toBe(3); });
  test("negative", () => { expect(add(-1, -2)).toBe(EXPECTED); });
});
"""

GO_TEST = """package main

import (
\t"testing"

\t"github.com/stretchr/testify/assert"
\t"github.com/stretchr/testify/require"
)

func add(a, b int) int { return a + b }

func TestAdd(t *testing.T) {
\trequire.Equal(t, 3, add(1, 2))
\tassert.Equal(t, EXPECTED, add(-1, -2))
}
"""

D_UT = """import std.stdio;
int add(int a, int b) { return a + b; }
unittest { assert(add(1, 2) == 3); }
unittest { assert(add(-1, -2) == EXPECTED); }
void main() { writeln("main ran"); }
"""

LUAUNIT = """local lu = require('luaunit')
local function add(a, b) return a + b end
function TestAdd() lu.assertEquals(add(1, 2), 3) end
function TestNegative() lu.assertEquals(add(-1, -2), EXPECTED) end
os.exit(lu.LuaUnit.run())
"""


@pytest.fixture
def available(client):
    names = {row["name"] for row in client.get("/languages").json() if row["available"]}

    def check(language: str) -> None:
        if language not in names:
            pytest.fail(f"{language} is not installed on the test server: run `make setup`")

    return check


def test_every_template_formats():
    """A row whose argv, env or binds a run cannot fill in would be a 500 on every request."""
    for row in LANGUAGES:
        for template in (row.run, row.compile or (), row.version):
            row.argv(template, "/opt/sandlot", 256)
        row.resolved_binds("/opt/sandlot")
        row.resolved_env("/opt/sandlot")


def test_sandboxfusion_languages_are_all_known(client):
    sent_by_clients = [
        "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash",
        "typescript", "sql", "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala",
        "julia", "pytest", "junit", "kotlin_script", "jest", "verilog", "python_gpu", "lean",
        "swift", "racket",
    ]  # fmt: skip
    rows = {row["name"]: row for row in client.get("/languages").json()}
    assert set(sent_by_clients) <= set(rows)
    for name in ("kotlin", "haskell", "fortran"):
        assert rows[name]["available"], rows[name]


@pytest.mark.parametrize(
    "language,words",
    [
        ("julia", "not packaged for Debian 12"),
        ("swift", "not packaged for Debian 12"),
        ("lean", "not packaged for Debian 12"),
        ("cuda", "needs an NVIDIA GPU"),
        ("python_gpu", "needs an NVIDIA GPU"),
    ],
)
def test_unavailable_language_says_why(run, client, language, words):
    out = run("print(1)", language)
    assert out["status"] == "SandboxError", out
    assert words in out["message"], out
    assert out["run_result"] is None
    row = next(r for r in client.get("/languages").json() if r["name"] == language)
    assert row["available"] is False
    assert words in row["reason"]


@pytest.mark.parametrize("expected,status", [("-3", "Success"), ("4", "Failed")])
def test_junit(run, available, expected, status):
    available("junit")
    out = run(
        JUNIT_TEST.replace("EXPECTED", expected),
        "junit",
        files={"Calc.java": base64.b64encode(JUNIT_CALC.encode()).decode()},
        compile_timeout=60,
        run_timeout=30,
    )
    assert out["status"] == status, out
    report = out["run_result"]["stdout"]
    assert "adds()" in report
    assert ("2 tests successful" in report) == (status == "Success"), report


@pytest.mark.parametrize("expected,failed", [("-3", 0), ("4", 1)])
def test_jest_report(run, available, expected, failed):
    available("jest")
    out = run(
        JEST_TEST.replace("EXPECTED", expected),
        "jest",
        fetch_files=["jest-report.json"],
        run_timeout=30,
    )
    assert out["status"] == ("Success" if failed == 0 else "Failed"), out
    report = json.loads(base64.b64decode(out["files"]["jest-report.json"]))
    assert report["numTotalTests"] == 2
    assert report["numFailedTests"] == failed
    # SandboxFusion's shape (jest-json-reporter's): suites with testFilePath and testResults
    [suite] = report["testResults"]
    assert suite["testFilePath"].endswith(".test.ts")
    cases = {c["title"]: c for c in suite["testResults"]}
    assert cases["small"]["status"] == "passed" and cases["small"]["ancestorTitles"] == ["add"]
    assert cases["negative"]["fullName"] == "add negative"
    assert (cases["negative"]["status"] == "failed") == bool(failed)
    assert bool(cases["negative"]["failureMessages"]) == bool(failed)


@pytest.mark.parametrize("expected,status", [("-3", "Success"), ("4", "Failed")])
def test_go_test_with_testify(run, available, expected, status):
    available("go_test")
    out = run(GO_TEST.replace("EXPECTED", expected), "go_test", compile_timeout=60)
    assert out["status"] == status, out
    stdout = out["run_result"]["stdout"]
    # what `go test FILE` prints: a pass is its `ok` line alone, a failure the test's output,
    # then `FAIL` lines (SandboxFusion's users parse them)
    if status == "Success":
        assert re.fullmatch(r"ok  \tcommand-line-arguments\t\d+\.\d{3}s\n", stdout), stdout
    else:
        assert "--- FAIL: TestAdd" in stdout and "main_test.go:" in stdout, stdout
        assert re.search(r"\nFAIL\tcommand-line-arguments\t\d+\.\d{3}s\nFAIL\n$", stdout), stdout
        assert out["run_result"]["return_code"] == 1


def test_go_test_as_go_test_runs_it(run, available):
    # no tests: `ok` with go test's note; an os.Exit(0) inside a test: a failure, as go test's
    # -test.paniconexit0 makes it (the test binary alone would exit 0)
    available("go_test")
    none = run("package main\n\nfunc helper() int { return 1 }\n", "go_test", compile_timeout=60)
    assert none["status"] == "Success", none
    assert none["run_result"]["stdout"].endswith("s [no tests to run]\n"), none
    code = 'package main\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'
    code += "func TestA(t *testing.T) { os.Exit(0) }\n"
    out = run(code, "go_test", compile_timeout=60)
    assert out["status"] == "Failed", out
    assert "unexpected call to os.Exit(0) during test" in out["run_result"]["stdout"]


CS_IMPLICIT = """class P {
    static async Task<int> Twice(int x) { await Task.Delay(1); return x * 2; }
    static void Main() {
        var xs = new List<int> { 3, 1, 2 };
        Console.WriteLine(string.Join(",", xs.OrderBy(x => x)) + " " + Twice(21).Result);
        Console.WriteLine(Path.GetExtension("a.txt") + " " + (typeof(HttpClient).Name)
                          + " " + Interlocked.Increment(ref counter));
    }
    static int counter;
}
"""


def test_csharp_has_the_implicit_usings_of_a_console_project(run, available):
    # SandboxFusion's `dotnet new console` project has System, System.IO, System.Linq,
    # System.Collections.Generic, System.Net.Http, System.Threading(.Tasks) in scope
    available("csharp")
    out = run(CS_IMPLICIT, "csharp", compile_timeout=60)
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == "1,2,3 42\n.txt HttpClient 1\n"
    # the code's own usings repeat them: no error, no warning
    again = run("using System;\nusing System.Linq;\n" + CS_IMPLICIT, "csharp", compile_timeout=60)
    assert again["status"] == "Success", again
    assert "CS0105" not in again["compile_result"]["stdout"] + again["compile_result"]["stderr"]


def test_csharp_messages_keep_main_cs_lines(run, available):
    available("csharp")
    out = run('class P {\n  static void Main() {\n    int x = "s";\n  }\n}\n', "csharp",
              compile_timeout=60)  # fmt: skip
    assert out["status"] == "Failed"
    said = out["compile_result"]["stdout"] + out["compile_result"]["stderr"]
    assert "main.cs(3,13): error CS0029" in said, said


def test_csharp_define_before_the_usings_still_compiles(run, available):
    # #define must precede every token of a file: the usings go after the code's own
    available("csharp")
    code = (
        "// a comment\n#define LOUD\n\n#undef QUIET\nclass P { static void Main() {\n"
        '#if LOUD\n  Console.WriteLine("loud");\n#endif\n} }\n'
    )
    out = run(code, "csharp", compile_timeout=60)
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == "loud\n"


@pytest.mark.parametrize("expected,status", [("-3", "Success"), ("4", "Failed")])
def test_d_unittest_blocks_run(run, available, expected, status):
    available("D_ut")
    out = run(D_UT.replace("EXPECTED", expected), "D_ut", compile_timeout=60)
    assert out["status"] == status, out
    # D's runtime runs the unittest blocks instead of main (as dmd -unittest on SandboxFusion).
    assert "main ran" not in out["run_result"]["stdout"]
    summary = "1 modules passed unittests" if status == "Success" else "1/1 modules FAILED"
    assert summary in out["run_result"]["stderr"], out


@pytest.mark.parametrize("expected,status", [("-3", "Success"), ("4", "Failed")])
def test_luaunit(run, available, expected, status):
    available("lua")
    out = run(LUAUNIT.replace("EXPECTED", expected), "lua")
    assert out["status"] == status, out
    assert "Ran 2 tests" in out["run_result"]["stdout"]


def test_perl_test_modules(run, available):
    available("perl")
    code = (
        "use Test::More tests => 2;\nuse Test::Deep;\nuse Data::Compare;\n"
        "cmp_deeply([1, {a => 2}], [1, {a => 2}], 'deep');\n"
        "ok(Compare({x => [1]}, {x => [1]}), 'compare');\n"
    )
    out = run(code, "perl")
    assert out["status"] == "Success", out
    assert "ok 2 - compare" in out["run_result"]["stdout"]


def test_sql_returns_query_results(run, available):
    available("sql")
    code = (
        "CREATE TABLE p(name TEXT, age INT);\n"
        "INSERT INTO p VALUES ('ann', 31), ('bob', 27);\n"
        "SELECT name, age FROM p ORDER BY age;\n"
    )
    out = run(code, "sql")
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == "bob|27\nann|31\n"


def test_php_without_opening_tag(run, available):
    available("php")
    out = run('echo "no tag\\n";', "php")
    assert out["run_result"]["stdout"] == "no tag\n", out


def test_bash_has_bc(run, available):
    available("bash")
    assert run("echo '2^100' | bc", "bash")["run_result"]["stdout"].startswith("126765060022")


def test_typescript_runs_without_type_check(run, available):
    """As SandboxFusion's tsx: a type error does not stop the program."""
    available("typescript")
    out = run('const n: number = "4" as any;\nconsole.log(n + 1);', "typescript")
    assert out["run_result"]["stdout"] == "41\n", out


def test_scala_runs_the_named_object(run, available):
    available("scala")
    code = 'object Solution {\n  def main(args: Array[String]): Unit = println("from Solution")\n}'
    out = run(code, "scala", compile_timeout=60)
    assert out["run_result"]["stdout"] == "from Solution\n", out
    missing = run('class A { def f = 1 }\nprintln("x")', "scala", compile_timeout=60)
    assert missing["status"] == "Failed"
    assert "Object name not found." in missing["compile_result"]["stderr"]


def test_r_keeps_its_case_sensitive_name(client):
    names = [row["name"] for row in client.get("/languages").json()]
    assert "R" in names and "r" not in names


def test_second_submission_skips_the_compiler(run, available):
    available("kotlin")
    code = 'fun main() { println("cached " + 41.inc()) }'
    first = run(code, "kotlin", compile_timeout=60)
    second = run(code, "kotlin", compile_timeout=60)
    assert first["run_result"]["stdout"] == second["run_result"]["stdout"] == "cached 42\n"
    assert second["cached_build"] is True
