"""The online-judge endpoints on a real server, with real runs in the jail."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import Server, running_server

pytestmark = pytest.mark.root

SUM_TESTS = [{"stdin": f"{a} {b}\n", "expected_stdout": f"{a + b}\n"} for a, b in
             [(1, 2), (10, 20), (-5, 5), (100, 1), (7, 8), (0, 0)]]  # fmt: skip
USER_ROWS = [
    {"id": "sum", "prompt": "Read a and b, print a+b.", "tests": SUM_TESTS},
    {"id": "shout", "prompt": "Print YES.", "tests": [{"stdin": "", "expected_stdout": "yes\n"}],
     "checker": "case"},
    {"id": "third", "prompt": "Print 1/3.",
     "tests": [{"stdin": "", "expected_stdout": "0.333333\n"}],
     "checker": {"mode": "float", "abs_tol": 1e-4}},
    {"id": "add", "prompt": "def add(a, b):\n", "test": "assert add(2, 3) == 5\n"},
    {"id": "big", "prompt": "Print 903952723.", "checker": "sandboxfusion",
     "tests": [{"stdin": "", "expected_stdout": "903952723\n"}]},
]  # fmt: skip
PY_SUM = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
CPP_SUM = (
    '```cpp\n#include <cstdio>\nint main(){long a,b;scanf("%ld %ld",&a,&b);'
    'printf("%ld\\n",a+b);}\n```'
)


@pytest.fixture(scope="module")
def judge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("datasets")
    (folder / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in USER_ROWS))
    (folder / "broken.jsonl").write_text('{"id": 1, "prompt": "p", "test": "x"}\n{"id": 2,\n')
    with running_server("--slots", "2", env={"SANDLOT_DATASET_DIR": str(folder)}) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(judge_server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=judge_server.url, timeout=300) as c:
        yield c


def submit(api: httpx.Client, **body) -> dict:
    r = api.post("/submit", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_list_datasets_and_ids_and_prompts(api: httpx.Client) -> None:
    names = api.get("/list_datasets").json()
    assert {"humaneval_python", "mbpp", "cruxeval", "code_contests", "mine"} <= set(names)
    ids = api.post("/list_ids", json={"dataset": "humaneval", "config": {}}).json()
    assert len(ids) == 164 and ids[0] == "HumanEval/0"
    prompts = api.post("/get_prompts", json={"dataset": "mbpp", "config": {}, "offset": 10,
                                             "limit": 3}).json()  # fmt: skip
    assert [p["id"] for p in prompts] == [11, 12, 13]
    assert "Your code should pass these tests" in prompts[0]["prompt"]
    one = api.post("/get_prompt_by_id", json={"dataset": "humaneval", "id": "HumanEval/2",
                                              "config": {}}).json()  # fmt: skip
    assert one["id"] == "HumanEval/2" and "def truncate_number" in one["prompt"]
    assert one["labels"]["entry_point"] == "truncate_number"
    body = {"dataset": "cruxeval", "limit": 1, "config": {"extra": {"mode": "input"}}}
    crux = api.post("/get_prompts", json=body).json()
    assert len(crux) == 1 and "f(??)" in crux[0]["prompt"]


def test_submit_sandboxfusion_shape(api: httpx.Client) -> None:
    body = (
        "```python\ndef has_close_elements(numbers, threshold):\n    return any("
        "abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
    )
    out = submit(api, dataset="humaneval_python", id="HumanEval/0", completion=body, config={})
    assert out["accepted"] is True and out["extracted_type"] == "fenced"
    assert out["extracted_code"].startswith("def has_close_elements")
    assert "check(has_close_elements)" in out["full_code"] and out["test_code"]
    assert out["tests"][0]["passed"] and out["tests"][0]["exec_info"]["status"] == "Success"
    assert out["extra"]["verdict"] == "accepted" and out["passed"] is None


def test_submit_simple_shape(api: httpx.Client) -> None:
    out = submit(api, dataset="humaneval", problem_id="HumanEval/0", language="python",
                 solution="    return False\n")  # fmt: skip
    assert out["passed"] is False and out["accepted"] is False
    assert out["extra"]["verdict"] == "wrong_answer" and "AssertionError" in out["extra"]["reason"]


def test_unknown_dataset_or_id_is_404_with_what_exists(api: httpx.Client) -> None:
    r = api.post("/submit", json={"dataset": "humaneva", "id": 0, "completion": "x"})
    assert r.status_code == 404 and "did you mean 'humaneval'" in r.json()["detail"]
    r = api.post("/submit", json={"dataset": "mbpp", "id": 9999, "completion": "x"})
    assert r.status_code == 404 and "974 problems" in r.json()["detail"]
    r = api.post("/get_prompt_by_id", json={"dataset": "nope", "id": 1, "config": {}})
    assert r.status_code == 404


def test_completion_without_code_is_rejected_with_the_reason(api: httpx.Client) -> None:
    out = submit(api, dataset="mbpp", id=11, completion="Sorry, I cannot do that.")
    assert out["accepted"] is False and out["extracted_type"] == "empty"
    assert out["extra"]["verdict"] == "no_code" and "no code" in out["extra"]["reason"]
    assert out["tests"] == []


def test_bad_requests_are_4xx(api: httpx.Client) -> None:
    r = api.post("/submit", json={"dataset": "mbpp", "id": 11, "completion": "x",
                                  "config": {"custom_extract_logic": "import os"}})  # fmt: skip
    assert r.status_code == 400 and "never runs client code" in r.json()["detail"]
    r = api.post("/submit", json={"dataset": "mbpp", "completion": "x"})
    assert r.status_code == 422 and "id" in r.json()["detail"]
    r = api.post("/submit", json={"dataset": "cruxeval", "id": "sample_0", "completion": "1",
                                  "config": {"extra": {"mode": "sideways"}}})  # fmt: skip
    assert r.status_code == 400 and "mode" in r.json()["detail"]
    r = api.post("/submit", json={"dataset": "code_contests", "id": 0, "completion": PY_SUM})
    assert r.status_code == 400 and "config.language" in r.json()["detail"]


def test_malformed_user_dataset_names_file_and_line(api: httpx.Client) -> None:
    r = api.post("/list_ids", json={"dataset": "broken", "config": {}})
    assert r.status_code == 422
    assert "broken.jsonl, line 2: not valid JSON" in r.json()["detail"]


def test_provided_data_with_a_sandboxfusion_class(api: httpx.Client) -> None:
    row = {"task_id": "T/1", "prompt": "def twice(x):\n", "test": "def check(f):\n"
           "    assert f(2) == 4\n", "entry_point": "twice"}  # fmt: skip
    cfg = {"dataset_type": "HumanEvalDataset", "provided_data": row}
    out = submit(api, dataset="my_eval", id="T/1", completion="    return 2 * x\n", config=cfg)
    assert out["accepted"] is True
    prompts = api.post("/get_prompts", json={"dataset": "my_eval", "config": {
        "dataset_type": "HumanEvalDataset", "provided_data": [row]}}).json()  # fmt: skip
    assert prompts == [{"id": "T/1", "prompt": "def twice(x):\n", "labels": prompts[0]["labels"]}]


@pytest.mark.parametrize("row", [{}, {"prompt": 5}, {"prompt": "def f():\n", "test": None}])
def test_provided_rows_that_do_not_fit_are_a_400(api: httpx.Client, row: dict) -> None:
    """A caller's row missing a field, or with one of the wrong type, is the request's fault: a
    prompt cannot be built (400); a submission is judged on what the row has, or refused."""
    for dataset in ("humaneval", "my_eval"):
        cfg = {"dataset_type": "HumanEvalDataset", "provided_data": row}
        for route, body in (("/get_prompt_by_id", {"id": 0}), ("/get_prompts", {}),
                            ("/submit", {"id": 0, "completion": "    return 1\n"})):  # fmt: skip
            listed = {**cfg, "provided_data": [row]} if route == "/get_prompts" else cfg
            r = api.post(route, json={"dataset": dataset, "config": listed, **body})
            if route == "/submit" and r.status_code == 200:
                assert r.json()["accepted"] is False
                continue
            assert r.status_code == 400, (route, row, r.text)
            assert "row" in r.json()["detail"], r.text
    assert api.get("/health").json()["status"] == "ok"


def test_get_metrics_pass_at_k(api: httpx.Client) -> None:
    results = [{"id": 1, "accepted": True}, {"id": 1, "accepted": False},
               {"id": 2, "accepted": False}, {"id": 2, "accepted": False}]  # fmt: skip
    body = {"dataset": "mbpp", "results": results, "config": {"extra": {"k_targets": [1, 2]}}}
    out = api.post("/get_metrics", json=body).json()
    assert out == {"pass@1": 0.25, "pass@2": 0.5}
    assert api.post("/get_metrics_function", json={"dataset": "mbpp", "config": {}}).json() == {
        "function": None
    }


def _metrics_function(api: httpx.Client, dataset: str, repeats: int, k_targets: list[int]):
    """get_metrics from the source /get_metrics_function returns, run as SandboxFusion's own
    tests run it: exec'd with `repeats` and `k_targets` defined."""
    r = api.post("/get_metrics_function", json={"dataset": dataset, "config": {}})
    assert r.status_code == 200, r.text
    ctx = {"repeats": repeats, "k_targets": k_targets}
    exec(r.json()["function"], ctx, ctx)
    return ctx["get_metrics"]


def _sf_result(pid: int | str, accepted: bool, test_info: dict | None = None):
    from sandbox_fusion.models import EvalResult, EvalTestCase, RunCodeResponse, RunStatus

    info = RunCodeResponse(status=RunStatus("Success"), message="")
    return EvalResult(id=pid, accepted=accepted, extracted_code="", full_code="",
                      tests=[EvalTestCase(passed=accepted, exec_info=info,
                                          test_info=test_info or {})])  # fmt: skip


def test_get_metrics_function_gives_pass_at_k_per_category(api: httpx.Client) -> None:
    """SandboxFusion's EvoEval and MHPP tests exec this source and call get_metrics on the
    client's EvalResults: pass@k per category (EvoEval's from the id, MHPP's from the first
    test's difficulty_type), k above the repeats left out."""
    evo = _metrics_function(api, "evoeval", 2, [1, 2, 10])
    results = [_sf_result(f"EvoEval_{cat}_EvoEval/{n}", ok) for cat, n, ok in (
        ("combine", 1, True), ("combine", 1, True), ("combine", 2, True), ("combine", 2, False),
        ("subtle", 3, False), ("subtle", 3, False))]  # fmt: skip
    assert evo(results) == pytest.approx(
        {
            "combine/Pass@k=1": 0.75,
            "combine/Pass@k=2": 1.0,
            "subtle/Pass@k=1": 0.0,
            "subtle/Pass@k=2": 0.0,
        }
    )
    mhpp = _metrics_function(api, "mhpp", 1, [1, 10])
    shaped = [_sf_result(0, True, {"difficulty_type": "ShortCase"}),
              _sf_result(1, False, {"difficulty_type": "Distraction"})]  # fmt: skip
    assert mhpp(shaped) == {"ShortCase/Pass@k=1": 1.0, "Distraction/Pass@k=1": 0.0}


@pytest.mark.parametrize(("dataset", "pid", "category"),
                         [("evoeval", "EvoEval_combine_EvoEval/0", "combine"),
                          ("mhpp", 1, "Distraction")])  # fmt: skip
def test_get_metrics_function_reads_what_submit_answers(
    api: httpx.Client, dataset: str, pid: int | str, category: str
) -> None:
    from sandbox_fusion.models import EvalResult

    answer = submit(api, dataset=dataset, id=pid, completion="```python\nx = 1\n```")
    metrics = _metrics_function(api, dataset, 1, [1])
    assert metrics([EvalResult(**answer)]) == {f"{category}/Pass@k=1": 0.0}
    assert (
        api.post("/get_metrics_function", json={"dataset": "evoevl", "config": {}}).status_code
        == 404
    )


# -- stdin/stdout judging ----------------------------------------------------------------------


def test_stdio_accepted_in_python_and_cpp(api: httpx.Client) -> None:
    out = submit(api, dataset="mine", id="sum", completion=PY_SUM)
    assert out["accepted"] and len(out["tests"]) == 6
    assert all(t["verdict"] == "accepted" for t in out["tests"])
    assert out["tests"][0]["test_info"]["input"]["stdin"] == "1 2\n"
    out = submit(api, dataset="mine", id="sum", completion=CPP_SUM, config={"language": "cpp"})
    assert out["accepted"] and out["extra"]["language"] == "cpp"
    # compiled once: every case ran against the one build
    compiled = [t["exec_info"]["compile_result"] for t in out["tests"]]
    assert sum(not t["exec_info"]["cached_build"] for t in out["tests"]) <= 2, compiled


@pytest.mark.parametrize(
    ("code", "language", "config", "verdict"),
    [
        ("print(int(input().split()[0]) * 2)", "python", {}, "wrong_answer"),
        ("import time\ntime.sleep(5)", "python", {"run_timeout": 1}, "time_limit_exceeded"),
        ("import sys\nsys.exit(3)", "python", {}, "runtime_error"),
        ("int main( { return 0; }", "cpp", {}, "compile_error"),
        ("x = bytearray(400 << 20)\nprint(len(x))", "python", {"memory_limit_MB": 128},
         "memory_limit_exceeded"),
        ("import sys\nsys.stdout.write('x' * (20 << 20))", "python", {}, "output_limit_exceeded"),
    ],
)  # fmt: skip
def test_stdio_verdicts(api: httpx.Client, code: str, language: str, config: dict,
                        verdict: str) -> None:  # fmt: skip
    out = submit(api, dataset="mine", id="sum", completion=f"```{language}\n{code}\n```",
                 config={"language": language, **config})  # fmt: skip
    assert out["accepted"] is False
    assert out["extra"]["verdict"] == verdict, out["extra"]
    assert out["tests"][0]["verdict"] == verdict
    # stop at the first failure (the default): not every case ran
    assert out["extra"]["cases_run"] < out["extra"]["cases_total"] or verdict == "compile_error"


def test_stdio_run_all_cases_gives_a_verdict_per_case(api: httpx.Client) -> None:
    code = "```python\na, b = map(int, input().split())\nprint(a + b if a != 10 else 0)\n```"
    out = submit(api, dataset="mine", id="sum", completion=code,
                 config={"extra": {"run_all_cases": True}})  # fmt: skip
    verdicts = [t["verdict"] for t in out["tests"]]
    assert verdicts == ["accepted", "wrong_answer", *["accepted"] * 4]
    assert out["extra"]["cases_run"] == 6 and out["accepted"] is False
    assert "line 1: expected '30', got '0'" in out["tests"][1]["test_info"]["reason"]


@pytest.mark.slow  # a server of its own, and slow cases by design
def test_a_stdin_problem_takes_one_place_in_line(tmp_path) -> None:
    """A stdin problem of 40 slow cases against a line of 2: its cases wait in one lane, so
    small /run_code requests sent while it runs are all answered (no 504) and before it ends;
    the submission itself is not refused either. Each case in a lane of its own (chunks of
    `slots * 2`) would fill that line and refuse both."""
    tests = [{"stdin": f"{n}\n", "expected_stdout": f"{n}\n"} for n in range(40)]
    (tmp_path / "slow.jsonl").write_text(json.dumps({"id": "echo", "prompt": "p", "tests": tests}))
    env = {"SANDLOT_DATASET_DIR": str(tmp_path), "SANDLOT_QUEUE_SIZE": "2"}
    with running_server("--slots", "2", env=env) as srv, \
            httpx.Client(base_url=srv.url, timeout=300) as c:  # fmt: skip
        done: dict[str, float] = {}

        def judge() -> None:
            code = "```python\nimport time\ntime.sleep(0.1)\nprint(input())\n```"
            out = submit(c, dataset="slow", id="echo", completion=code)
            assert out["accepted"] and out["extra"]["cases_run"] == 40, out["extra"]
            done["judge"] = time.monotonic()

        thread = threading.Thread(target=judge)
        thread.start()
        while c.get("/health").json()["busy"] < 2:
            time.sleep(0.05)
        statuses = []
        for n in range(10):
            r = c.post("/run_code", json={"code": f"print({n})", "language": "python"})
            statuses.append(r.status_code)
        small_done = time.monotonic()
        thread.join()
        assert statuses == [200] * 10
        assert small_done < done["judge"]  # order of events, not a timing


def test_checkers_from_the_row_and_from_the_request(api: httpx.Client) -> None:
    assert submit(api, dataset="mine", id="shout", completion="```python\nprint('YES')\n```")[
        "accepted"
    ]
    assert submit(api, dataset="mine", id="third", completion="```python\nprint(1/3)\n```")[
        "accepted"
    ]
    strict = {"extra": {"checker": "exact"}}
    out = submit(api, dataset="mine", id="third", completion="```python\nprint(1/3)\n```",
                 config=strict)  # fmt: skip
    assert out["accepted"] is False and out["extra"]["checker"] == "exact"


def test_strict_takes_no_integer_within_a_tolerance(api: httpx.Client) -> None:
    # SandboxFusion's checker compares numbers within a relative 1e-5, integers too: an answer
    # one off a nine-digit integer passes it. Under strict an integer is equal only to itself.
    off_by_one = "```python\nprint(903952722)\n```"
    out = submit(api, dataset="mine", id="big", completion=off_by_one)
    assert out["accepted"] is True  # SandboxFusion's verdict, kept by default
    strict = {"extra": {"strict": True}}
    out = submit(api, dataset="mine", id="big", completion=off_by_one, config=strict)
    assert out["accepted"] is False and out["extra"]["verdict"] == "wrong_answer"
    for right in ("903952723", "+0903952723", "903952723.0"):
        good = f"```python\nprint('{right}')\n```"
        assert submit(api, dataset="mine", id="big", completion=good, config=strict)["accepted"]


def test_custom_checker_runs_in_the_jail(api: httpx.Client) -> None:
    # testlib-style: input, the program's output, the expected answer; exit 0 accepts.
    checker = (
        "import sys\n"
        "inp, out, ans = (open(n).read().split() for n in ('input.txt', 'output.txt', "
        "'answer.txt'))\n"
        "sys.exit(0 if int(out[0]) == int(ans[0]) else 1)\n"
    )
    cfg = {"extra": {"checker": {"mode": "custom", "code": checker, "language": "python"}}}
    out = submit(api, dataset="mine", id="sum", completion=PY_SUM, config=cfg)
    assert out["accepted"] is True and out["extra"]["checker"] == "custom"
    bad = "```python\nprint(0)\n```"
    out = submit(api, dataset="mine", id="sum", completion=bad, config=cfg)
    assert out["accepted"] is False and "checker: wrong answer" in out["extra"]["reason"]


def test_code_contests_row_is_judged_on_its_cases(api: httpx.Client) -> None:
    out = submit(api, dataset="code_contests", id=0, completion="```python\nprint(0)\n```",
                 config={"language": "python"})  # fmt: skip
    assert out["accepted"] is False and out["extra"]["verdict"] == "wrong_answer"
    assert out["extra"]["cases_total"] > 30 and out["extra"]["checker"] == "sandboxfusion"


def test_user_program_dataset(api: httpx.Client) -> None:
    assert submit(api, dataset="mine", id="add", completion="    return a + b\n")["accepted"]
    assert not submit(api, dataset="mine", id="add", completion="    return a - b\n")["accepted"]


def test_evaluate_batch_with_pass_at_k(api: httpx.Client) -> None:
    good, bad = "    return a + b\n", "    return a * b\n"
    samples = [{"id": "add", "completion": c} for c in (good, bad, bad, good)]
    r = api.post("/evaluate", json={"dataset": "mine", "samples": samples, "k": [1, 2, 4]})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["accepted"] == 2 and out["samples"] == 4 and out["problems"] == 1
    assert out["pass_at_k"]["pass@1"] == pytest.approx(0.5)
    assert out["pass_at_k"]["pass@4"] == 1.0
    assert [x["sample"] for x in out["results"]] == [0, 1, 2, 3]
    unknown = {"dataset": "mine", "samples": [{"id": "nope", "completion": "x"}]}
    r = api.post("/evaluate", json=unknown)
    assert r.status_code == 404


def test_sandboxfusion_client_submit(judge_server: Server) -> None:
    from sandbox_fusion import SubmitRequest, TestConfig
    from sandbox_fusion import submit as sf_submit

    result = sf_submit(
        SubmitRequest(dataset="mbpp", id=11, completion="```python\ndef remove_Occ(s, ch):\n"
                      "    return s.replace(ch, '', 1)[::-1].replace(ch, '', 1)[::-1]\n```",
                      config=TestConfig()),
        endpoint=judge_server.url,
    )  # fmt: skip
    assert result.accepted is True and result.extracted_type == "fenced"
    assert result.tests[0].exec_info.status == "Success"


def test_sandboxfusion_client_prompts(judge_server: Server) -> None:
    from sandbox_fusion import (
        GetPromptByIdRequest,
        GetPromptsRequest,
        TestConfig,
        get_prompt_by_id,
        get_prompts,
    )

    prompts = get_prompts(GetPromptsRequest(dataset="mhpp", config=TestConfig(), limit=2),
                          endpoint=judge_server.url)  # fmt: skip
    assert len(prompts) == 2 and "\n    e.g. assert " in prompts[0].prompt  # SandboxFusion's
    req = GetPromptByIdRequest(dataset="humaneval_python", id="HumanEval/5", config=TestConfig())
    one = get_prompt_by_id(req, endpoint=judge_server.url)
    assert one.id == "HumanEval/5" and "def intersperse" in one.prompt


def test_mhpp_judges_the_asserts(api: httpx.Client) -> None:
    out = submit(api, dataset="mhpp", id=1, completion="```python\ndef table_tennis_results("
                 "marks):\n    return 0\n```")  # fmt: skip
    assert out["accepted"] is False and out["extra"]["verdict"] == "wrong_answer"
    assert "assert table_tennis_results" in out["full_code"]
