"""What a dataset's runs may use beyond the server's defaults (issue 45, item 6): a dataset spec's
`needs` (every CPU of the jail's, more processes and threads), set from what its reference
solutions need, through a real server. aider polyglot's exercises may assert two cores (Go) or
start a thousand threads (Java): both pass on `/submit` there, while `/run_code` keeps the slot's
one CPU and the server's pids.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.families import reference
from sandlot.judge.plans import Needs
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server

pytestmark = [pytest.mark.root, pytest.mark.slow]

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
TWO_CORES = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs a machine of 2 CPUs")


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=900) as c:
        yield c


def test_the_aider_dataset_says_what_its_runs_need() -> None:
    assert DATASETS.spec("aider_polyglot").params["needs"] == Needs(any_cpu=True, pids=2048)
    assert "needs" not in DATASETS.spec("humaneval_x_go").params


def wordy(check: str) -> str:
    """go/wordy's reference, answering only when `check` holds (and wrong otherwise)."""
    text = reference("aider", DATASETS.get("aider_polyglot").get("go/wordy"))
    text = text.replace("func Answer(q string) (a int, ok bool) {",
                        f"func Answer(q string) (a int, ok bool) {{\n\tif !({check}) {{\n"
                        "\t\treturn 0, false\n\t}", 1)  # fmt: skip
    return text.replace('import (\n\t"strconv"', 'import (\n\t"runtime"\n\t"strconv"', 1)


@TWO_CORES
def test_a_go_exercise_that_asserts_two_cores_passes_on_the_judge(api: httpx.Client) -> None:
    body = {"dataset": "aider_polyglot", "id": "go/wordy", "config": {"compile_timeout": 300}}
    out = api.post("/submit", json={**body, "completion": wordy("runtime.NumCPU() >= 2")}).json()
    assert out["accepted"], out["extra"]
    # control: the same answer wanting more CPUs than the machine has is rejected
    many = f"runtime.NumCPU() >= {(os.cpu_count() or 1) + 1}"
    assert not api.post("/submit", json={**body, "completion": wordy(many)}).json()["accepted"]


@TWO_CORES
def test_run_code_keeps_the_slots_one_cpu(api: httpx.Client) -> None:
    code = (
        'package main\nimport (\n"fmt"\n"runtime"\n)\n'
        "func main() { fmt.Println(runtime.NumCPU()) }\n"
    )
    out = api.post("/run_code", json={"code": code, "language": "go", "compile_timeout": 300})
    assert out.json()["stdout"].strip() == "1", out.text


# In an instance initializer, once: a static one would deadlock (the threads' lambdas wait for
# the class's initialization, which waits for them).
THREADS = """
    private static boolean sandlotStarted;

    {
        if (!sandlotStarted) {
            sandlotStarted = true;
            sandlotThreads();
        }
    }

    private static void sandlotThreads() {
        java.util.List<Thread> sandlotThreads = new java.util.ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            Thread t = new Thread(() -> {
                try { Thread.sleep(1500); } catch (InterruptedException e) { }
            });
            t.start();
            sandlotThreads.add(t);
        }
        for (Thread t : sandlotThreads) {
            try { t.join(); } catch (InterruptedException e) { }
        }
    }
"""


def test_a_java_exercise_that_starts_a_thousand_threads_passes_on_the_judge(
    api: httpx.Client,
) -> None:
    row = DATASETS.get("aider_polyglot").get("java/wordy")
    text = reference("aider", row)
    opening = text.index("{", text.index("class ")) + 1
    busy = text[:opening] + THREADS + text[opening:]
    out = api.post("/submit", json={"dataset": "aider_polyglot", "id": "java/wordy",
                                    "completion": busy}).json()  # fmt: skip
    assert out["accepted"], (
        out["extra"],
        out["tests"][0]["exec_info"]["run_result"]["stderr"][-600:],
    )


def test_run_code_keeps_the_servers_pids(api: httpx.Client) -> None:
    # the same thousand threads in a program of /run_code's: past the server's pids
    main = (
        "    public static void main(String[] a) {\n        sandlotThreads();\n"
        '        System.out.println("done");\n    }\n'
    )
    code = f"public class Main {{\n{THREADS}\n{main}}}\n"
    out = api.post("/run_code", json={"code": code, "language": "java", "compile_timeout": 300,
                                      "run_timeout": 60}).json()  # fmt: skip
    assert out["status"] == "Failed" and "done" not in out["stdout"], out
    assert "unable to create native thread" in out["stderr"], out["stderr"][-500:]
