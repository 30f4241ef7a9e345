"""SandboxFusion fidelity: where its clients and tests see the same shapes, prompts and verdicts
from sandlot as from SandboxFusion (issue 14), through a real server."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest

from sandlot.judge.reports import MAX_CASES, jest_cases

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
