"""SandboxFusion fidelity: where its clients and tests see the same shapes, prompts and verdicts
from sandlot as from SandboxFusion (issue 14), through a real server."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.repobench import first_code_line
from sandlot.judge.reports import MAX_CASES, jest_cases
from sandlot.languages import LANGUAGES, Registry

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))


def rows_of(name: str) -> list[dict]:
    return DATASETS.get(name).rows


# SandboxFusion's own AutoEval jest test: 11 tests, 2 of which fail.
JEST_TESTS = """
describe('Calculator Tests', () => {
  describe('Addition', () => {
    test('adds 1 + 2 to equal 3', () => { expect(1 + 2).toBe(3); });
    test('adds negative numbers correctly', () => { expect(-1 + (-2)).toBe(-3); });
    test('adding zero returns same number', () => { expect(5 + 0).toBe(5); });
  });
  describe('Multiplication', () => {
    test('multiplies 3 * 4 to equal 12', () => { expect(3 * 4).toBe(12); });
    test('multiplying by zero equals zero', () => { expect(123 * 0).toBe(0); });
    test('multiplying negative numbers', () => { expect(-2 * -3).toBe(6); });
  });
  describe('Division', () => {
    test('divides 10 / 2 to equal 5', () => { expect(10 / 2).toBe(235); });
    test('throws when dividing by zero', () => {
      expect(() => { if (2 / 0 === Infinity) throw new Error('Division by zero'); })
        .toThrow('Division by zero');
    });
    test('division result is not 3', () => { expect(5 / 2).not.toBe(3); });
  });
  describe('String operations', () => {
    test('concatenates strings correctly', () => {
      expect('Hello' + ' ' + 'World').toBe('Hello Worsld');
    });
    test('string length is not 5', () => { expect('test'.length).not.toBe(5); });
  });
});
"""


def submit(client: httpx.Client, **body) -> dict:
    r = client.post("/submit", json=body, timeout=300)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("dataset_type", ["AutoEvalDataset", "AutoEvalV4Dataset"])
def test_jest_cases_in_extra(client: httpx.Client, dataset_type: str) -> None:
    lab = {"programming_language": "javascript", "execution_language": "jest"}
    row = {"id": 0, "content": "", "test": {"code": JEST_TESTS}, "labels": lab}
    out = submit(client, dataset="", id=0, completion="```javascript\nlet a = 1;\n```",
                 config={"dataset_type": dataset_type, "provided_data": row})  # fmt: skip
    assert out["accepted"] is False
    cases = out["extra"]["jest_cases"]
    assert Counter(c["passed"] for c in cases) == {True: 9, False: 2}
    first = next(c for c in cases if c["test"] == "adds 1 + 2 to equal 3")
    assert first["suite"] == "Calculator Tests > Addition"
    assert first["full_name"] == "Calculator Tests Addition adds 1 + 2 to equal 3"
    assert first["file"].endswith(".test.ts") and first["failure_messages"] == []
    failed = next(c for c in cases if c["test"] == "concatenates strings correctly")
    assert "Hello Worsld" in failed["failure_messages"][0]


def test_jest_report_from_the_box_is_read_defensively() -> None:
    # the tests' own process can write jest-report.json: nothing in it breaks the judge
    assert jest_cases(b"[" * 100_000) is None
    assert jest_cases(b"\xff\xfe") is None
    assert jest_cases(b'{"testResults": 5}') is None
    assert jest_cases(b'{"testResults": [1, {"testResults": "x"}, {"testResults": [2]}]}') == []
    many = json.dumps(
        {
            "testResults": [
                {
                    "testFilePath": "t",
                    "testResults": [
                        {"status": "passed", "title": "t", "ancestorTitles": "not a list"}
                    ]
                    * 20_000,
                }
            ]
        }
    )
    cases = jest_cases(many.encode())
    assert cases is not None and len(cases) == MAX_CASES
    assert cases[0] == {"passed": True, "full_name": None, "file": "t", "suite": "", "test": "t",
                        "failure_messages": []}  # fmt: skip


def test_verilog_body_without_endmodule_is_a_compile_error(client: httpx.Client) -> None:
    # as SandboxFusion: the body is not completed, so it does not compile
    body = "\tassign out = sel ? b : a;\n"
    bad = submit(client, dataset="verilogeval_human", id=0, config={},
                 completion=f"```verilog\n{body}```")  # fmt: skip
    assert bad["accepted"] is False
    assert bad["extra"]["verdict"] == "compile_error", bad["extra"]
    good = submit(client, dataset="verilogeval_human", id=0, config={},
                  completion=f"```verilog\n{body}endmodule\n```")  # fmt: skip
    assert good["accepted"] is True, good["extra"]


LCB_STDIN = (
    "t = int(input())\nfor _ in range(t):\n    s = input().strip()\n"
    "    print('NO' if sum(a != b for a, b in zip(s, 'abc')) == 3 else 'YES')\n"
)


@pytest.mark.parametrize(
    ("pid", "completion", "words"),
    [("1", "print('YES')", "'error_message': 'Wrong Answer'"),
     ("1", LCB_STDIN.replace("'YES'", "YES"), "'error_message': 'Runtime Error'"),
     ("1", "while True: pass", "'error_message': 'Time Limit Exceeded'"),
     ("1", "def (:", "'error_message': 'Compilation Error'"),
     ("10", "class Solution:\n    def countSeniors(self, details):\n        return 0\n",
      "'error_message': 'Wrong Answer'")],
)  # fmt: skip
def test_live_code_bench_failure_is_said_in_exec_info(
    client: httpx.Client, pid: str, completion: str, words: str
) -> None:
    # one program runs every case, as SandboxFusion's LCB harness: its stdout says how it failed
    out = submit(client, dataset="live_code_bench_v1", id=pid, config={"run_timeout": 1},
                 completion=f"```python\n{completion}\n```")  # fmt: skip
    assert out["accepted"] is False
    [test] = out["tests"]
    assert words in test["exec_info"]["run_result"]["stdout"], test["exec_info"]
    assert test["exec_info"]["run_result"]["return_code"] == 255
    assert out["test_code"] and out["extracted_code"].startswith(completion[:5])


def test_live_code_bench_stdin_program_may_exit_itself(client: httpx.Client) -> None:
    # a stdin program that ends with sys.exit() after its output is judged on that output
    code = "import sys\n" + LCB_STDIN + "sys.exit(0)\n"
    out = submit(client, dataset="live_code_bench_v1", id="1", config={},
                 completion=f"```python\n{code}```")  # fmt: skip
    assert out["accepted"] is True, out["tests"][0]["exec_info"]


@pytest.mark.parametrize(
    ("dataset", "pid", "completion", "status"),
    [("mbxp_v1_en", 465, "```cpp\n#include <cstdlib>\n#include <stdexcept>\nusing namespace std;\n"
      "int findMinSum(int n) {\n    exit(0);\n}\n```", "Success"),
     ("mbxp_v1_en", 465, "nothing to see", "Failed"),
     ("humanevalds_v1_en", 470, "```julia\nx = 1\n```", "SandboxError")],
)  # fmt: skip
def test_mbxp_results_always_have_their_test(
    client: httpx.Client, dataset: str, pid: int, completion: str, status: str
) -> None:
    # SandboxFusion's MBXP always runs the test (the anti-hack rule rejects after the run) and
    # returns test_code and one test: an exit(0) answer, no code at all, a language not here
    out = submit(client, dataset=dataset, id=pid, completion=completion, config={})
    assert out["accepted"] is False
    assert out["test_code"] and "#<INSERT>" in out["test_code"]
    [test] = out["tests"]
    assert test["passed"] is False and test["exec_info"]["status"] == status, test
    if status == "SandboxError":
        assert "julia" in test["exec_info"]["message"]


@pytest.mark.parametrize(
    ("language", "code", "stdout"),
    [("nodejs", "const _ = require('lodash');\nconsole.log(JSON.stringify(_.chunk([1, 2, 3], 2)));",
      "[[1,2],[3]]\n"),
     ("typescript", "import _ from 'lodash';\nconsole.log(_.sum([1, 2, 3]) as number);", "6\n"),
     ("python", "import requests, bs4, lxml, matplotlib, seaborn, PIL, cryptography, networkx\n"
      "from sortedcontainers import SortedList\n"
      "print(bs4.BeautifulSoup('<p>hi</p>', 'lxml').p.text, SortedList([3, 1])[0])", "hi 1\n"),
     ("java", "import org.javatuples.Pair;\npublic class Main { public static void main(String[] a)"
      " { System.out.println(Pair.with(1, \"x\")); } }", "[1, x]\n")],
)  # fmt: skip
def test_runtime_packages_sandboxfusion_users_expect(
    client: httpx.Client, language: str, code: str, stdout: str
) -> None:
    r = client.post("/run_code", json={"code": code, "language": language, "compile_timeout": 60,
                                       "run_timeout": 30})  # fmt: skip
    out = r.json()
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == stdout


def test_repobench_first_code_line() -> None:
    text = '\n# a comment\n"""\ndoc\n"""\n  x = f(1)  # the line\ny = 2\n'
    assert first_code_line(text, "python") == "  x = f(1)  # the line"
    java = "// c\n/* block\n still */\n\n int a = 1;\n"
    assert first_code_line(java, "java") == " int a = 1;"
    assert first_code_line("# only\n", "python") == "# only"


@pytest.mark.parametrize(("dataset", "good_extra"), [("repobench_c_python", "  "),
                                                     ("repobench_c_java", "")])  # fmt: skip
def test_repobench_next_line_judged_token_wise(
    client: httpx.Client, dataset: str, good_extra: str
) -> None:
    row = rows_of(dataset)[0]
    pid, line = row["id"], row["next_line"]
    good = submit(client, dataset=dataset, id=pid, config={},
                  completion=f"{good_extra}{' '.join(line.split())}\nmore")  # fmt: skip
    assert good["accepted"] is True, good["tests"][0]["exec_info"]
    bad = submit(client, dataset=dataset, id=pid, config={}, completion=line + " + 1")
    assert bad["accepted"] is False and len(bad["tests"]) == 1
