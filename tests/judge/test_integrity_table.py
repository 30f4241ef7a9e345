"""The integrity classes: every shipped dataset says how far its verdicts can be trusted, in
/v1/datasets, and `strict` refuses the unsealed ones unless the request opts in."""

from __future__ import annotations

import httpx
import pytest

from sandlot.convert import dataset_infos
from sandlot.judge import Datasets, Judge, integrity_rows
from sandlot.judge.families import FAMILIES, reference
from sandlot.judge.integrity import (
    BIGCODEBENCH_PYTHON,
    LANGUAGE_ROWS,
    NONE,
    SPLIT_NATIVE,
    UNSEALED,
    ByLanguage,
    Level,
    lookup,
    of_job,
    weakest,
)
from sandlot.judge.plans import JudgeConfig
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))


def no_executor():
    raise AssertionError("listing integrity runs nothing")


@pytest.fixture(scope="module")
def infos() -> dict[str, dict]:
    judge = Judge(DATASETS, no_executor)
    return {d.name: d.model_dump() for d in dataset_infos(judge)}


def test_every_shipped_dataset_has_a_class_for_each_of_its_languages(infos) -> None:
    assert set(infos) == set(DATASETS.names())
    for name, info in infos.items():
        assert info["languages"], name
        levels = [Level(i["integrity"]) for i in info["languages"].values()]
        assert info["integrity"] == weakest(levels).value, name
        for lang, integrity in info["languages"].items():
            assert integrity["sealed_by"], (name, lang)


def test_the_classes_of_a_few_families_are_what_they_are(infos) -> None:
    assert infos["code_contests"]["integrity"] == "output-checked"
    assert infos["verilogeval_human"]["integrity"] == "split"
    assert infos["humanevalds_v1_en"]["languages"]["julia"]["integrity"] == "unsealed"
    assert infos["humaneval_python"]["integrity"] != "unsealed"
    # a dataset of several languages lists each, and is as strong as its weakest
    assert {"python", "cpp", "java"} <= set(infos["mbxp_v1_en"]["languages"])


def test_lookup_goes_from_the_most_specific_row_to_the_default() -> None:
    humaneval, multiple = FAMILIES["humaneval"].integrity, FAMILIES["multiple"].integrity
    python = LANGUAGE_ROWS.rows["python"]
    assert lookup("python", NONE, humaneval) is python
    bigcodebench = DATASETS.spec("bigcodebench").integrity
    assert lookup("python", bigcodebench, humaneval) is BIGCODEBENCH_PYTHON
    assert lookup("no-such-language", NONE, humaneval) is UNSEALED
    # a layer's row for the language, then its row for any, then the next layer's
    layer = ByLanguage({"python": BIGCODEBENCH_PYTHON, "*": UNSEALED})
    assert lookup("python", layer) is BIGCODEBENCH_PYTHON
    assert lookup("ruby", layer, humaneval) is UNSEALED
    # a split row holds for programs built apart; a one-program job gets the language's own row
    assert lookup("cpp", NONE, multiple) is SPLIT_NATIVE["cpp"]
    cpp = LANGUAGE_ROWS.rows["cpp"]
    assert (
        of_job("cpp", NONE, multiple, sealed=True, stdio=False, split=True) is SPLIT_NATIVE["cpp"]
    )
    assert of_job("cpp", NONE, multiple, sealed=True, stdio=False, split=False) is cpp


def test_every_row_is_reached_from_a_family_dataset_or_language_and_listed_once() -> None:
    """The docs' table lists every row the lookup can reach: the languages' own, then each
    family's and shipped dataset's."""
    listed = list(integrity_rows())
    keys = [(who, language) for who, language, _ in listed]
    assert len(keys) == len(set(keys))
    assert ("*", "*", UNSEALED) in listed
    assert ("bigcodebench", "python", BIGCODEBENCH_PYTHON) in listed
    for family in FAMILIES.values():
        for language, row in family.integrity.items():
            assert (family.name, language, row) in listed


@pytest.mark.root
def test_v1_datasets_over_http_and_strict_refuses_an_unsealed_family(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=300) as api:
        listed = {d["name"]: d for d in api.get("/v1/datasets").json()}
        assert listed["verilogeval_human"]["integrity"] == "split"
        assert listed["humaneval_python"]["languages"]["python"]["integrity"] == "split"
        assert listed["humanevalds_v1_en"]["integrity"] == "unsealed"  # its julia rows
        # a julia row: refused under strict whether or not julia is installed here
        body = {"dataset": "humanevalds_v1_en", "id": 470, "completion": "```julia\nx\n```"}
        refused = api.post("/submit", json={**body, "config": {"extra": {"strict": True}}})
        assert refused.status_code == 400, refused.text
        assert "allow_unsealed" in refused.json()["detail"]
        opted = {"extra": {"strict": True, "allow_unsealed": True}}
        judged = api.post("/submit", json={**body, "config": opted})
        assert judged.status_code == 200, judged.text
        assert judged.json()["extra"]["integrity"] == "unsealed"
        # not strict: judged, and the result says how far to trust it
        plain = api.post("/submit", json=body).json()
        assert plain["extra"]["integrity"] == "unsealed" and not plain["accepted"]


@pytest.mark.parametrize("name", ["verilogeval_human", "verilogeval_machine", "repobench_c_python",
                                  "repobench_c_java"])  # fmt: skip
def test_a_verdict_read_outside_the_box_keeps_its_class_per_job(name: str) -> None:
    """Verilog's summary line and RepoBench's compared line carry no seal by design: a job of
    theirs is not downgraded to "no place for the seal" (which `strict` would refuse)."""
    judge = Judge(DATASETS, no_executor)
    spec = DATASETS.spec(name)
    listed = judge.dataset_integrity(name)
    for row in DATASETS.get(name).rows[:5]:
        job = judge.assemble(spec, row, reference(spec.family, row) or "", JudgeConfig()).job
        assert job is not None, row
        level = judge.integrity(spec, job, split=True).level
        assert level is not Level.UNSEALED and level == weakest(
            [i.level for i in listed.values()]
        ), (name, level)
