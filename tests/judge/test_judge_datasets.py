"""Verdicts on the shipped data, through a real server: every correct reference solution is
accepted and every deliberately broken one rejected. Where a reference is known to fail, the
test names the row and why.

Each dataset goes through `POST /evaluate` in one request, which judges its samples concurrently
across the server's slots; HumanEval runs each task as one program (prompt, solution, tests and
`check(entry_point)`).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.datasets import row_id
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server

pytestmark = [pytest.mark.root, pytest.mark.slow]

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))

# humanevalds_v1_en's placeholders that exit with 0 before the tests run.
EXIT_PLACEHOLDERS = (161, 162, 628, 629, 788, 789, 949, 950, 1109, 1110, 1434, 1435, 1595, 1596,
                     1756, 1757, 1912, 1913, 2072, 2073)  # fmt: skip
# Reference solutions that fail on the data as shipped, and why (checked by the tests below).
KNOWN_BAD = {
    # MBPP's setup code builds Node objects before the reference code defines class Node.
    # SandboxFusion runs setup first too (as does the original harness), so it rejects them too.
    ("mbpp", 367): "NameError: name 'Node' is not defined",
    ("mbpp", 927): "NameError: name 'Node' is not defined",
    # MBXP/HumanEvalDS rows whose "reference" is the placeholder `exit(0)`: SandboxFusion's
    # anti-hack rule rejects an early exit(0) in python and cpp code, and so do we.
    ("mbxp_v1_en", 465): "early exit",
    ("mbxp_v1_en", 466): "early exit",
    ("humanevalds_v1_en", 1): "early exit",
    ("humanevalds_v1_en", 2): "early exit",
    ("humanevalds_v1_en", 1270): "early exit",
    ("humanevalds_v1_en", 1271): "early exit",
    # Placeholders that exit with 0 before the tests run: the run has no seal.
    **{("humanevalds_v1_en", i): "exited early" for i in EXIT_PLACEHOLDERS},
    **{
        ("mbxp_v1_en", i): "exited early"
        for i in (1772, 1773, 2230, 2231, 3148, 3149, 3606, 3607, 4064, 4065)
    },
    # Scala placeholders `sys.exit()` in MBXP's `object Main extends App` tests, now sealed
    # (SandboxFusion accepts them).
    ("mbxp_v1_en", 4522): "exited early",
    ("mbxp_v1_en", 4523): "exited early",
    # Icarus Verilog 11 (Debian 12) cannot elaborate these testbenches' casts.
    ("verilogeval_human", 144): "cast operation is not yet supported",
    ("verilogeval_human", 150): "cast operation is not yet supported",
    # shadow HumanEval's tests have defects of their own (SandboxFusion cannot load the table).
    ("shadow_humaneval_python", 1): "IndentationError",  # the test does not parse
    ("shadow_humaneval_python", 12): "NameError: name 'x' is not defined",
    ("shadow_humaneval_python", 32): "missing 1 required positional argument",
    ("shadow_humaneval_python", 33): "name 'sort_third' is not defined",
    ("shadow_humaneval_python", 37): "AssertionError",  # test expects another problem's answer
    # Julia has no Debian 12 package; the server reports it as not installed.
    ("humanevalds_v1_en", 470): "'julia' is not installed",
    ("humanevalds_v1_en", 471): "'julia' is not installed",
}


COMPILE_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=900) as c:
        yield c


def evaluate(api: httpx.Client, dataset: str, samples: list[dict], **config) -> dict:
    # A reference is judged on its code, not on the test machine's load: a g++ compile given the
    # default 10 s was once cut off at a load average of 8 (HumanEval-X CPP/19, compile_error).
    config.setdefault("compile_timeout", COMPILE_TIMEOUT)
    r = api.post("/evaluate", json={"dataset": dataset, "samples": samples, "config": config,
                                    "k": [1]})  # fmt: skip
    assert r.status_code == 200, r.text[:2000]
    return r.json()


def references(dataset: str, mode: str = "output") -> list[dict]:
    spec = DATASETS.spec(dataset)
    return [
        {"id": row_id(row, spec), "completion": reference(spec.family, row, mode)}
        for row in DATASETS.get(dataset).rows
    ]


def rejected(out: dict) -> dict:
    return {r["id"]: r for r in out["results"] if not r["accepted"]}


def assert_all_accepted_but_known(dataset: str, out: dict) -> None:
    failed = {int(k) if str(k).isdigit() else k: v for k, v in rejected(out).items()}
    expected = {pid for (ds, pid) in KNOWN_BAD if ds == dataset}
    assert set(failed) == expected, {k: (v["verdict"], (v["reason"] or "")[-300:])
                                     for k, v in failed.items() if k not in expected}  # fmt: skip
    for pid in expected:
        assert KNOWN_BAD[(dataset, pid)] in failed[pid]["reason"], failed[pid]


def test_humaneval_canonical_164_of_164(api: httpx.Client) -> None:
    out = evaluate(api, "humaneval", references("humaneval_python"))
    assert out["accepted"] == 164, rejected(out)
    assert out["pass_at_k"] == {"pass@1": 1.0}


def test_humaneval_pass_body_0_of_164(api: httpx.Client) -> None:
    samples = [{"id": s["id"], "completion": "    pass\n"} for s in references("humaneval_python")]
    out = evaluate(api, "humaneval", samples)
    assert out["accepted"] == 0
    assert {r["verdict"] for r in out["results"]} <= {"wrong_answer", "runtime_error"}


def test_mbpp_972_of_974(api: httpx.Client) -> None:
    out = evaluate(api, "mbpp", references("mbpp"))
    assert_all_accepted_but_known("mbpp", out)
    assert out["accepted"] == 972


def test_mbpp_sanitized_427_of_427(api: httpx.Client) -> None:
    out = evaluate(api, "mbpp_sanitized", references("mbpp_sanitized"))
    assert out["accepted"] == 427, rejected(out)


def test_mbpp_wrong_solutions_rejected(api: httpx.Client) -> None:
    # every reference answers the task after it: 0 accepted (none of the tests coincide)
    refs = references("mbpp")
    pairs = zip(refs[:200], refs[1:201], strict=True)  # noqa: RUF007 (first 200 only)
    shifted = [{"id": a["id"], "completion": b["completion"]} for a, b in pairs]
    assert evaluate(api, "mbpp", shifted)["accepted"] == 0


@pytest.mark.parametrize("mode", ["output", "input"])
def test_cruxeval_800_of_800(api: httpx.Client, mode: str) -> None:
    out = evaluate(api, "cruxeval", references("cruxeval", mode), extra={"mode": mode})
    assert out["accepted"] == 800, list(rejected(out).items())[:5]


def test_cruxeval_wrong_outputs_rejected(api: httpx.Client) -> None:
    rows = DATASETS.get("cruxeval").rows
    samples = [{"id": r["id"], "completion": f"[ANSWER]{r['output']} + 1[/ANSWER]"}
               for r in rows]  # fmt: skip
    assert evaluate(api, "cruxeval", samples, extra={"mode": "output"})["accepted"] == 0


@pytest.mark.parametrize("language", ["python", "cpp", "java", "js", "rust", "go"])
def test_humaneval_x_references_accepted_stubs_rejected(api: httpx.Client, language: str) -> None:
    dataset = f"humaneval_x_{language}"
    refs = references(dataset)
    out = evaluate(api, dataset, refs)
    assert out["accepted"] == len(refs), rejected(out)
    # Wrong but well-defined bodies (a C++ function that just ends is undefined behaviour,
    # which -O2 may turn into anything, "passing" included).
    stubs = {"python": "    pass\n", "java": "}\n}\n", "go": "    panic(0)\n}\n",
             "cpp": "    return {};\n}\n"}  # fmt: skip
    stub = stubs.get(language, "}\n")
    out = evaluate(api, dataset, [{"id": s["id"], "completion": stub} for s in refs])
    assert out["accepted"] == 0


def test_aider_tables_references_accepted_stubs_rejected(api: httpx.Client) -> None:
    for dataset in ("aider_benchmark_v1", "aider_polyglot_python"):
        refs = references(dataset)
        assert evaluate(api, dataset, refs)["accepted"] == len(refs)
        spec = DATASETS.spec(dataset)
        stubs = [{"id": row_id(r, spec), "completion": "```python\n"
                  + __import__("json").loads(r["labels"])["reference"] + "\n```"}
                 for r in DATASETS.get(dataset).rows]  # fmt: skip
        assert evaluate(api, dataset, stubs)["accepted"] == 0


def test_multiple_java_javatuples_on_the_class_path(api: httpx.Client) -> None:
    # MultiPL-E's Java prompts import org.javatuples; these tasks take or return a Pair.
    names = {"HumanEval_8_sum_product", "HumanEval_20_find_closest_elements",
             "HumanEval_87_get_row", "HumanEval_107_even_odd_palindrome",
             "HumanEval_112_reverse_delete", "HumanEval_155_even_odd_count"}  # fmt: skip
    rows = [r for r in DATASETS.get("multiple_java").rows if r["name"] in names]
    assert all("Pair" in r["prompt"] for r in rows)
    samples = [{"id": r["name"], "completion": r["gpt_solution"]} for r in rows]
    assert evaluate(api, "multiple_java", samples)["accepted"] == len(names)


def test_aider_polyglot_all_languages(api: httpx.Client) -> None:
    # java: JUnit 5 + Debian's AssertJ; cpp: Debian's Catch2 v2; every disabled test enabled
    rows = DATASETS.get("aider_polyglot").rows
    refs = [{"id": f"{r['language']}/{r['exercise']}",
             "completion": reference("aider", r)} for r in rows]  # fmt: skip
    out = evaluate(api, "aider_polyglot", refs)
    assert out["accepted"] == 26, rejected(out)
    stubs = [{"id": f"{r['language']}/{r['exercise']}", "completion": "\n".join(
              f"```\n{v}\n```" for k, v in r["solution_files"].items() if not k.endswith(".toml"))}
             for r in rows]  # fmt: skip
    out = evaluate(api, "aider_polyglot", stubs)
    assert out["accepted"] == 0
    # References broken only for cases past the first test, which Exercism leaves disabled
    # (@Disabled in java, #if EXERCISM_RUN_ALL_TESTS in cpp): rejected, so every test ran.
    broken = {"java": ('if (number.startsWith("0"))', "if (false)"),
              "cpp": ("result[0] < '2' || ", "")}  # fmt: skip
    samples = []
    for r in rows:
        if r["exercise"] == "phone-number" and r["language"] in broken:
            old, new = broken[r["language"]]
            completion = reference("aider", r)
            assert old in completion
            samples.append({"id": f"{r['language']}/phone-number",
                            "completion": completion.replace(old, new)})  # fmt: skip
    out = evaluate(api, "aider_polyglot", samples)
    assert len(out["results"]) == 2
    assert out["accepted"] == 0, out["results"]


@pytest.mark.parametrize(
    "dataset",
    ["palmath", "evoeval", "ncb_python_en", "ncb_python_zh", "ncb_java_en", "ncb_java_zh",
     "mbxp_v1_en", "humanevalds_v1_en", "verilogeval_human", "verilogeval_machine",
     "shadow_humaneval_python"],
)  # fmt: skip
def test_sandboxfusion_tables_with_references(api: httpx.Client, dataset: str) -> None:
    out = evaluate(api, dataset, references(dataset))
    assert_all_accepted_but_known(dataset, out)


@pytest.mark.parametrize(
    ("dataset", "rows"),
    [("humaneval", "humaneval_python"), ("mbpp", "mbpp"), ("mbpp_sanitized", "mbpp_sanitized"),
     ("evoeval", "evoeval"), ("shadow_humaneval_python", "shadow_humaneval_python")],
)  # fmt: skip
@pytest.mark.parametrize(
    "extra", [{"split": False}, {"strict": True}], ids=["one_process", "strict"]
)
def test_python_references_keep_their_verdicts_in_one_process_and_under_strict(
    api: httpx.Client, dataset: str, rows: str, extra: dict
) -> None:
    """The answer in the tests' process (`config.extra.split` false, as SandboxFusion runs it),
    or `config.extra.strict` (plain data only), changes no reference solution's verdict: the
    other tests of this file judge them split, the default."""
    out = evaluate(api, dataset, references(rows), extra=extra)
    assert_all_accepted_but_known(dataset, out)


def test_verilog_empty_modules_rejected(api: httpx.Client) -> None:
    samples = [{"id": s["id"], "completion": "```verilog\nendmodule\n```"}
               for s in references("verilogeval_human")[:40]]  # fmt: skip
    out = evaluate(api, "verilogeval_human", samples)
    assert out["accepted"] == 0


def test_humanevalds_v2_positive_and_negative_controls(api: httpx.Client) -> None:
    out = evaluate(api, "humanevalds_v2_en", references("humanevalds_v2_en"))
    verdicts = {int(r["id"]): r for r in out["results"]}
    # ids >= 10000 are SandboxFusion's deliberately wrong solutions: all rejected
    assert not any(r["accepted"] for i, r in verdicts.items() if i >= 10000)
    # ids < 10000 are correct; swift (4) is not installed on this machine kind
    assert {i for i, r in verdicts.items() if r["accepted"]} == {0, 1, 2, 3}
    assert "'swift' is not" in verdicts[4]["reason"]
    # C# (0, 10000): the reference is a whole program (usings, class, method); 10000 returns
    # false, which only a Debug.Assert that fails the run can catch
    assert verdicts[10000]["verdict"] == "wrong_answer"
    assert "Assertion failed." in verdicts[10000]["reason"]


MIN_COST = """\
        public static int MinCost(List<List<int>> cost, int m, int n)
        {
            var dp = new int[m + 1, n + 1];
            for (int i = 0; i <= m; i++)
                for (int j = 0; j <= n; j++)
                {
                    int best = i == 0 && j == 0 ? 0 : int.MaxValue;
                    if (i > 0) best = Math.Min(best, dp[i - 1, j]);
                    if (j > 0) best = Math.Min(best, dp[i, j - 1]);
                    if (i > 0 && j > 0) best = Math.Min(best, dp[i - 1, j - 1]);
                    dp[i, j] = best + cost[i][j];
                }
            return dp[m, n];
        }
"""


def test_mbxp_v2_csharp(api: httpx.Client) -> None:
    # 0's reference is `Environment.Exit(0)` before any test (SandboxFusion, with no C# anti-hack
    # rule, accepts it), 10000's `return 0`: both rejected, for those reasons
    out = evaluate(api, "mbxp_v2_en", references("mbxp_v2_en"))
    verdicts = {int(r["id"]): r for r in out["results"]}
    assert not verdicts[0]["accepted"] and not verdicts[10000]["accepted"]
    assert verdicts[0]["verdict"] == "wrong_answer"
    assert "exited early" in verdicts[0]["reason"]
    assert "test case 0 failed to pass" in verdicts[10000]["reason"]
    # a correct MinCost as the prompt asks (a whole program, with a Main of its own) and as a
    # bare method: accepted both ways, under either id (both rows have the same tests)
    main = (
        "        public static void Main(string[] args)\n        {\n            Console."
        "WriteLine(MinCost(new List<List<int>> { new List<int> { 1 } }, 0, 0));\n        }\n"
    )
    whole = (
        "```csharp\nusing System;\nusing System.Collections.Generic;\n\nnamespace Solution"
        f"\n{{\n    public class Program\n    {{\n{MIN_COST}\n{main}    }}\n}}\n```"
    )
    bare = f"Here it is:\n```csharp\n{MIN_COST}```\n"
    samples = [{"id": i, "completion": c} for i in (0, 10000) for c in (whole, bare)]
    out = evaluate(api, "mbxp_v2_en", samples)
    assert out["accepted"] == 4, [(r["verdict"], r["reason"]) for r in out["results"]]


LCB = {
    "1": "t = int(input())\nfor _ in range(t):\n    s = input().strip()\n"
         "    print('NO' if sum(a != b for a, b in zip(s, 'abc')) == 3 else 'YES')\n",
    "10": "class Solution:\n    def countSeniors(self, details):\n"
          "        return sum(int(d[11:13]) > 60 for d in details)\n",
    "191": "n = int(input())\ns = input().strip()\nt, a = s.count('T'), s.count('A')\n"
           "print('T' if t > a else 'A' if a > t else ('A' if s[-1] == 'T' else 'T'))\n",
}  # fmt: skip


def test_live_code_bench_solutions_accepted_placeholders_rejected(api: httpx.Client) -> None:
    good = [{"id": k, "completion": f"```python\n{v}```"} for k, v in LCB.items()]
    assert evaluate(api, "live_code_bench_v1", good)["accepted"] == 3
    # the table's own "canonical_solution" is a placeholder that exits 0 at once
    hack = [{"id": k, "completion": "```python\nimport sys; sys.exit(0)\n```"} for k in LCB]
    out = evaluate(api, "live_code_bench_v1", hack)
    assert out["accepted"] == 0


@pytest.mark.parametrize("body", ["    import sys; sys.exit(0)\n", "    import os; os._exit(0)\n",
                                  "    raise SystemExit\n"])  # fmt: skip
def test_exiting_before_the_tests_is_no_pass(api: httpx.Client, body: str) -> None:
    samples = [{"id": s["id"], "completion": body} for s in references("humaneval_python")[:20]]
    out = evaluate(api, "humaneval", samples)
    assert out["accepted"] == 0
    assert all("exited early" in r["reason"] or r["verdict"] != "wrong_answer"
               for r in out["results"])  # fmt: skip


@pytest.mark.parametrize(
    ("dataset", "at_least"),
    [("multiple_js", 25), ("multiple_cpp", 20), ("multiple_rs", 20), ("multiple_rb", 25),
     ("multiple_lua", 25), ("multiple_go", 10), ("multiple_java", 25), ("multiple_cs", 14),
     ("multiple_mbpp_cs", 20)],
)  # fmt: skip
def test_multiple_gpt_answers_mostly_accepted(api: httpx.Client, dataset: str,
                                              at_least: int) -> None:  # fmt: skip
    # MultiPL-E has no reference solutions; SandboxFusion's GPT answers are 70-90% right.
    # C#: 16 and 23 of these 30, fewer because many tests compare lists with Equals (by
    # reference, false under .NET too) and mcs lacks local functions and all past C# 7.2.
    rows = DATASETS.get(dataset).rows[:30]
    samples = [{"id": r["name"], "completion": r["gpt_solution"]} for r in rows]
    assert evaluate(api, dataset, samples)["accepted"] >= at_least
    # the bare prompt with nothing added never passes
    stubs = [{"id": r["name"], "completion": "\n"} for r in rows[:10]]
    assert evaluate(api, dataset, stubs)["accepted"] == 0


@pytest.mark.parametrize("dataset", ["multiple_cs", "multiple_mbpp_cs"])
def test_multiple_csharp_stubs_fail_their_assertions(api: httpx.Client, dataset: str) -> None:
    # A body returning the default value compiles and runs: only failing Debug.Asserts, or the
    # crashes the default null causes, reject it (mono alone exited 0 on a failed assertion).
    rows = DATASETS.get(dataset).rows[:30]
    samples = [{"id": r["name"], "completion": "        return default;\n"} for r in rows]
    out = evaluate(api, dataset, samples)
    assert out["accepted"] == 0
    verdicts = [r["verdict"] for r in out["results"]]
    assert set(verdicts) <= {"wrong_answer", "runtime_error", "compile_error"}, verdicts
    # mbpp_67_bell_number's test has a literal too large for a long: it never compiles
    assert verdicts.count("compile_error") <= 1
    assert verdicts.count("wrong_answer") >= 8  # 9 and 13 of these 30
    assert all("Assertion failed." in r["reason"] for r in out["results"]
               if r["verdict"] == "wrong_answer")  # fmt: skip


@pytest.mark.parametrize(
    ("dataset", "body"),
    [("multiple_cs", "        System.Environment.Exit(0);\n        return default;\n"),
     ("multiple_java", "        System.exit(0);\n        throw new RuntimeException();\n"),
     ("multiple_cpp", "    exit(0);\n"),
     ("multiple_rs", "    std::process::exit(0)\n"),
     ("multiple_scala", "        sys.exit(0)\n"),
     ("multiple_js", "  process.exit(0);\n}\n"),
     ("multiple_ts", "  process.exit(0);\n}\n"),
     ("multiple_php", "    exit(0);\n}\n"),
     ("multiple_pl", "    exit(0);\n}\n"),
     ("multiple_r", "\n  quit(status = 0)\n}\n"),
     ("multiple_rkt", "  (exit 0))\n"),
     # luaunit refuses os.exit during a test unless the suite is unregistered first
     ("multiple_lua", "    lu.unregisterCurrentSuite()\n    os.exit(0)\nend\n"),
     ("multiple_rb", "  exit!(0)\nend\n"),
     ("multiple_d", "{\n    import core.stdc.stdlib : exit;\n    exit(0);\n    assert(0);\n}\n")],
)  # fmt: skip
def test_multiple_early_exit_is_no_pass(api: httpx.Client, dataset: str, body: str) -> None:
    # MultiPL-E tests are one main of assertions (or a framework's run): leaving with status 0
    # before its end passed every test until the run had to write its seal there
    rows = DATASETS.get(dataset).rows[:10]
    out = evaluate(api, dataset, [{"id": r["name"], "completion": body} for r in rows])
    assert out["accepted"] == 0
    assert all("exited early" in r["reason"] for r in out["results"]), out["results"]


@pytest.mark.parametrize(
    ("language", "statement"),
    [("cpp", "    exit(0);\n"), ("java", "        System.exit(0);\n"),
     ("rust", "    std::process::exit(0);\n"), ("js", "  process.exit(0);\n")],
)  # fmt: skip
def test_humaneval_x_early_exit_is_no_pass(api: httpx.Client, language: str,
                                           statement: str) -> None:  # fmt: skip
    # the reference solution, after an exit that skips every test
    dataset = f"humaneval_x_{language}"
    samples = [{"id": s["id"], "completion": statement + s["completion"]}
               for s in references(dataset)[:10]]  # fmt: skip
    out = evaluate(api, dataset, samples)
    assert out["accepted"] == 0
    assert all("exited early" in r["reason"] for r in out["results"]), out["results"]
