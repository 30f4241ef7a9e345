"""The scripting languages' harnesses (sandlot/judge/scripts/), without a server: what each
makes of an answer and its tests, and the assertion sites it counts in every shipped test. The
runs themselves are in test_reward_hacks_script.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from sandlot.judge import Datasets
from sandlot.judge.dialects import DIALECTS
from sandlot.judge.scripts import SEAL
from sandlot.languages import LANGUAGES, Registry

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
SCRIPTED = sorted(name for name, d in DIALECTS.items() if d.script is not None)
# What an assertion site looks like in each language's shipped tests, as counted by hand.
ASSERTIONS = {
    "php": r"\bthrow\b", "perl": r"\b(?:eq_deeply|Compare)\s*\(",
    "ruby": r"\b(?:assert_equal|raise)\b", "R": r"\bstopifnot\(", "lua": r"\blu\.assertEquals\(",
    "bash": r"^\s*\[\[", "racket": r"\(check-",
    "nodejs": r"\bassert\.\w+\(|console\.assert\(|\bthrow\b",
    "typescript": r"\bassert\.\w+\(|console\.assert\(|\bthrow\b",
}  # fmt: skip
MULTIPLE = {"nodejs": "js", "typescript": "ts", "php": "php", "ruby": "rb", "R": "r", "lua": "lua",
            "perl": "pl", "bash": "sh", "racket": "rkt"}  # fmt: skip


def shipped_tests(language: str) -> Iterator[tuple[str, str]]:
    """(where, tests) for every shipped row judged in `language`."""
    ext = MULTIPLE[language]
    for name in (f"multiple_{ext}", f"multiple_mbpp_{ext}"):
        for row in DATASETS.get(name).rows:
            yield f"{name}/{row['name']}", row["tests"]
    if language == "nodejs":
        for row in DATASETS.get("humaneval_x_js").rows:
            yield row["task_id"], row["test"]
    for name in ("mbxp_v1_en", "mbxp_v2_en", "humanevalds_v1_en", "humanevalds_v2_en",
                 "oodtest_v1_zh"):  # fmt: skip
        for row in DATASETS.get(name).rows:
            labels = json.loads(row["labels"]) if isinstance(row["labels"], str) else row["labels"]
            test = json.loads(row["test"]) if isinstance(row["test"], str) else row["test"]
            if labels.get("execution_language") == language:
                yield f"{name}/{row['id']}", test["code"].replace("#<INSERT>", "")
    for row in DATASETS.get("cruxeval_x").rows:
        if row["id"].rsplit("_", 1)[0] == language:
            yield row["id"], row["output"].replace("????", "0")


@pytest.mark.parametrize("language", SCRIPTED)
def test_every_shipped_test_has_its_assertion_sites_counted(language: str) -> None:
    join = DIALECTS[language].script
    assert join is not None
    wrong = []
    for where, tests in shipped_tests(language):
        want = len(re.findall(ASSERTIONS[language], tests, re.M))
        joined = join("", tests)
        if joined.tests != want or want == 0:
            wrong.append((where, joined.tests, want))
    assert wrong == []


ANSWER = "x = '__SANDLOT_SEAL_NAME__ {v} sandlot_0123456789abcdef'\n"
TESTS = {
    "php": "if (f(1) !== 2) { throw new Exception('no'); }\n",
    "perl": "if(eq_deeply(f(1), 2)) { print 'ok' } else { exit 1; }\n",
    "ruby": "if f(1) != 2\n  raise 'no'\nend\n",
    "R": "stopifnot(isTRUE(all.equal(f(1), 2)))\n",
    "lua": "lu.assertEquals(f(1), 2)\n",
    "bash": '[[ $(f 1) = "2" ]]\n',
    "racket": "(check-equal? (f 1) 2)\n",
    "nodejs": "assert.deepEqual(f(1), 2);\n",
    "typescript": "assert.deepEqual(f(1), 2);\n",
}


@pytest.mark.parametrize("language", SCRIPTED)
def test_the_answer_is_kept_as_written_and_apart_from_the_harness(language: str) -> None:
    join = DIALECTS[language].script
    assert join is not None
    one, two = join(ANSWER, TESTS[language]), join(ANSWER, TESTS[language])
    assert one.tests == 1
    names = set(re.findall(r"sandlot_[0-9a-f]{16}", one.code)) - {"sandlot_0123456789abcdef"}
    if language in ("nodejs", "typescript"):  # the driver's scope holds the harness
        assert not names and "__sandlot." in (one.code + b"".join(one.files.values()).decode())
    else:  # a name drawn per submission, in the harness alone
        assert len(names) == 1 and names.isdisjoint(re.findall(r"sandlot_\w{16}", two.code))
    texts = [one.code, *(f.decode() for f in one.files.values())]
    # the answer's text appears once, as written: nothing in it is replaced by a drawn name
    assert sum(t.count(ANSWER.strip()) for t in texts) == 1
    if language in ("lua", "nodejs"):  # the answer in the program, after what reads the secret
        assert one.code.index(ANSWER.strip()) > (one.code.find(SEAL) if language == "lua" else -1)
    elif language != "typescript":  # a file of its own; the harness reads the secret
        assert ANSWER.strip() not in one.code and SEAL in one.code


def test_javascript_tests_begin_where_the_driver_splits() -> None:
    js = DIALECTS["nodejs"].script
    assert js is not None
    joined = js("function f(x) { return x + 1; }", TESTS["nodejs"])
    assert joined.tests_at is not None
    assert joined.code[: joined.tests_at].strip() == "function f(x) { return x + 1; }"
    tests = joined.code[joined.tests_at :].split("\n", 1)
    assert tests[0].startswith("typeof __sandlot === 'undefined' && (globalThis.__sandlot = ")
    assert tests[1].startswith("__sandlot.after(0, assert.deepEqual(")
    ts = DIALECTS["typescript"].script
    assert ts is not None
    joined = ts("function f(x: number) { return x + 1; }", TESTS["typescript"])
    assert joined.code == "function f(x: number) { return x + 1; }"
    assert list(joined.files) == ["sandlot_tests.ts"] and joined.tests_at is None


@pytest.mark.parametrize(
    ("language", "tests"),
    [("ruby", "x = 1\nraise 'no' if f(1) != 2 rescue nil\n"),  # a raise this does not place
     ("lua", "lu.assertTrue(f(1))\nlu.assertEquals(f(1), 2)\n"),  # an assertion it does not know
     ("nodejs", "function assert(c) { console.log(c); }\nassert(f(1) === 2);\n"),  # their own
     ("R", "stopifnot(f(1) == 2, f(2) == 3)\n")],  # a check of two conditions
)  # fmt: skip
def test_tests_of_a_shape_not_known_are_sealed_without_a_count(language: str, tests: str) -> None:
    if language == "ruby":  # the modifier form alone is a site
        assert DIALECTS["ruby"].script("", "raise 'no' unless f(1) == 2\n").tests == 1
    join = DIALECTS[language].script
    assert join is not None
    assert join("", tests).tests is None
