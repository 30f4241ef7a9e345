"""verl, unchanged, against sandlot: its own `sandbox_fusion` reward code (from the `verl` package
on PyPI, installed without its dependencies by `make setup`) at its default fan-out, and
`sandlot.rl`'s scores, which must equal verl's sample for sample."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest

from sandlot import rl
from tests import rl_samples
from tests.conftest import ROOT

pytestmark = [pytest.mark.root, pytest.mark.slow]  # verl's fan-out, 330 runs

VERL_FAN_OUT = 64  # reward.sandbox_fusion.max_concurrent's default


@pytest.fixture(scope="module")
def verl() -> ModuleType:
    """verl's `verl/utils/reward_score/sandbox_fusion` package, loaded from its files: importing
    it through `verl` would pull in torch and ray, which its reward code does not use."""
    try:
        dist = importlib.metadata.distribution("verl")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("verl is not installed: `make setup` installs it (pip install --no-deps verl)")
    root = Path(str(dist.locate_file("verl/utils/reward_score/sandbox_fusion")))
    spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", root / "__init__.py", submodule_search_locations=[str(root)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _extra_samples() -> list[tuple[str, str, object]]:
    """The odd ones a trainer meets: no code block, a bare fence, ground truth that is not JSON,
    counts that differ, MBPP-style asserts."""
    tests = rl_samples.code_contests_tests(17)
    right = rl_samples.CODE_CONTESTS[17][0]
    asserts = {"assert_case": ["assert f(1) == 2", "assert f(2) == 3", "assert f(3) == 5"]}
    return [
        ("codecontests", right, tests),  # no fence at all
        ("codecontests", f"```\n{right}\n```", tests),  # a bare fence
        ("codecontests", f"```py\n{right}\n```", tests),  # a tag other than python
        ("codecontests", rl_samples.fence(right), "{not json"),
        ("codecontests", rl_samples.fence(right), {"inputs": ["1"], "outputs": []}),
        ("apps", rl_samples.fence("def f(x):\n    return x + 1"), json.dumps(asserts)),
    ]


def _verl_scores(verl: ModuleType, url: str, samples: list) -> list[float]:
    semaphore = threading.Semaphore(VERL_FAN_OUT)

    def one(sample: tuple[str, str, object]) -> float:
        _, completion, tests = sample
        truth = tests if isinstance(tests, str) else json.dumps(tests)
        score, _ = verl.compute_score(url + "/run_code", semaphore, 1024, completion, truth,
                                      continuous=True)  # fmt: skip
        return score

    with ThreadPoolExecutor(4) as pool:  # reward workers side by side, as verl runs them
        return list(pool.map(one, samples))


def test_compute_score_equals_verls_sandbox_fusion_reward(server, verl) -> None:
    samples = [*rl_samples.samples(cases_per_problem=12), *_extra_samples()]
    expected = _verl_scores(verl, server.url, samples)
    assert 0 < sum(expected) < len(samples)  # right and wrong ones among them
    one_by_one = [rl.compute_score(source, completion, truth, sandbox_url=server.url)
                  for source, completion, truth in samples]  # fmt: skip
    assert one_by_one == expected
    sources, completions, truths = zip(*samples, strict=True)
    batched = rl.compute_score_batch(list(sources), list(completions), list(truths),
                                     sandbox_url=f"{server.url}/run_code")  # fmt: skip
    assert batched == expected


def test_compute_score_takes_the_server_from_the_environment(server, monkeypatch) -> None:
    source, completion, truth = rl_samples.samples(cases_per_problem=3)[0]
    monkeypatch.setenv("SANDBOX_FUSION_URL", server.url)
    assert rl.compute_score(source, completion, truth) == 1.0
    monkeypatch.delenv("SANDBOX_FUSION_URL")
    with pytest.raises(ValueError, match="SANDBOX_FUSION_URL"):
        rl.compute_score(source, completion, truth)


def _rl_script(server_url: str, script: str) -> subprocess.CompletedProcess[str]:
    """`script` in a Python of its own, warning of every unclosed socket, with `sample` (a
    right solution) and `url` given."""
    source, completion, truth = rl_samples.samples(cases_per_problem=3)[0]
    prologue = (
        "import json, os, sys\nfrom sandlot import rl\n"
        "sample, url = json.load(sys.stdin)\n"
        "score = lambda: rl.compute_score(*sample, sandbox_url=url)\n"
    )
    return subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", prologue + script],
        input=json.dumps([[source, completion, truth], server_url]), capture_output=True,
        text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


def test_its_kept_clients_are_closed_at_exit(server) -> None:
    """compute_score keeps its client for the process's life (a trainer calls it per sample),
    and closes it at exit: no unclosed socket is left to the garbage collector."""
    done = _rl_script(server.url, "print(score())\n")
    assert done.stdout == "1.0\n", done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr


def test_a_forked_worker_gets_a_client_and_lock_of_its_own(server) -> None:
    """A trainer that forks its reward workers: the child must not write on the parent's
    connections, nor wait forever on a lock a parent's thread held at the fork."""
    done = _rl_script(server.url, """
import threading
assert score() == 1.0
parent = rl._client(url)
inside, fork_done = threading.Event(), threading.Event()
def busy():  # another thread inside compute_score when the fork comes
    with rl._lock:
        inside.set()
        fork_done.wait()
threading.Thread(target=busy).start()
inside.wait()
pid = os.fork()
if pid == 0:
    os._exit(0 if score() == 1.0 and rl._client(url) is not parent else 3)
fork_done.set()
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
assert score() == 1.0 and rl._client(url) is parent
print("both scored")
""")  # fmt: skip
    assert done.stdout == "both scored\n", done.stderr


def test_verl_at_its_default_fan_out_sees_no_error(server, verl) -> None:
    """verl's own check_correctness, one /run_code per case, 64 in flight: every one of ~330
    cases gets an answer (verl counts any non-504 error as a failed case, silently)."""
    semaphore = threading.Semaphore(VERL_FAN_OUT)
    table = rl_samples.CODE_CONTESTS
    jobs = [(table[p][0], rl_samples.code_contests_tests(p)) for p in (3, 14, 17)]

    def one(job: tuple[str, dict]) -> tuple[list, list]:
        code, tests = job
        return verl.utils.check_correctness(server.url + "/run_code", tests, code, timeout=10,
                                            concurrent_semaphore=semaphore)  # fmt: skip

    with ThreadPoolExecutor(len(jobs)) as pool:
        outcomes = list(pool.map(one, jobs))
    metadata = [m for _, meta in outcomes for m in meta]
    assert len(metadata) > 300
    problems = [m for m in metadata if m["status"] != "success"]
    assert problems == []
    assert all(r is True for results, _ in outcomes for r in results)


# Where sandlot's score differs from verl's on purpose: (name, data source, completion, ground
# truth, verl's score, sandlot's). docs/rl.md states each one, by its name.
EARLY_EXIT_ASSERTS = {"assert_case": ["assert f(1) == 2", "assert f(2) == 3"]}
DIFFERENCES = [
    (name, "apps", rl_samples.fence(f"import os, sys\ndef f(x):\n    {exit_call}"),
     json.dumps(EARLY_EXIT_ASSERTS), 1.0, 0.0)
    for name, exit_call in (("sys.exit(0)", "sys.exit(0)"), ("os._exit(0)", "os._exit(0)"))
]  # fmt: skip


@pytest.mark.parametrize("difference", DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_where_scores_differ_from_verls_it_is_on_purpose_and_documented(
    server, verl, difference
) -> None:
    name, source, completion, truth, verl_score, sandlot_score = difference
    assert _verl_scores(verl, server.url, [(source, completion, truth)]) == [verl_score]
    assert rl.compute_score(source, completion, truth, sandbox_url=server.url) == sandlot_score
    page = (ROOT / "docs" / "rl.md").read_text()
    differences = page.split("## Where sandlot's scores differ from verl's", 1)
    assert len(differences) == 2 and f"`{name}`" in differences[1], name
