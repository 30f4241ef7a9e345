"""Every shipped row of MBXP and its kin (all languages), as a named table and as a
`dataset_type: MBXPDataset` row, gets the same verdict, and only the real references pass
(issue 45: the tables' other rows are exit placeholders, deliberate negatives, empty references
or languages this machine cannot install; sandlot/judge/data/README.md names each)."""

from __future__ import annotations

import json

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry

pytestmark = pytest.mark.slow

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
TABLES = ("mbxp_v1_en", "mbxp_v2_en", "humanevalds_v1_en", "humanevalds_v2_en", "oodtest_v1_zh")
ACCEPTED = {
    ("mbxp_v1_en", 1), ("mbxp_v1_en", 2),  # python
    ("mbxp_v1_en", 1314), ("mbxp_v1_en", 1315),  # java
    ("mbxp_v1_en", 2692), ("mbxp_v1_en", 2693),  # kotlin
    ("humanevalds_v2_en", 0), ("humanevalds_v2_en", 1),  # csharp, java
    ("humanevalds_v2_en", 2), ("humanevalds_v2_en", 3),  # bash, racket
}  # fmt: skip
ROWS = [(table, row) for table in TABLES for row in DATASETS.get(table).rows]


@pytest.fixture(scope="module")
def api(server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=300) as c:
        yield c


@pytest.mark.parametrize(("table", "row"), ROWS, ids=[f"{t}-{r['id']}" for t, r in ROWS])
def test_a_row_gets_one_verdict_in_both_forms(api: httpx.Client, table: str, row: dict) -> None:
    completion = reference("insert", row) or ""
    provided = {k: v for k, v in row.items() if k != "__line__"}
    named = api.post("/submit", json={"dataset": table, "id": row["id"], "completion": completion})
    sent = api.post("/submit", json={
        "dataset": "my_mbxp", "id": row["id"], "completion": completion,
        "config": {"dataset_type": "MBXPDataset", "provided_data": provided},
    })  # fmt: skip
    want = (table, row["id"]) in ACCEPTED
    language = json.loads(row["labels"]) if isinstance(row["labels"], str) else row["labels"]
    for out in (named.json(), sent.json()):
        assert out["accepted"] is want, (language["programming_language"], out.get("extra"))
