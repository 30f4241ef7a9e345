"""`/run_jupyter`: SandboxFusion's contract (its PyPI client, unchanged), rich outputs, and the
limits SandboxFusion does not enforce (cell_timeout, total_timeout, memory_limit_MB)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator

import httpx
import pytest
import sandbox_fusion as sf

from tests.conftest import Server, running_server

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server("--slots", "2", env={"SANDLOT_SESSION_POOL": "2"}) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=300) as c:
        yield c


def jupyter(client: httpx.Client, cells: list[str], **fields) -> dict:
    r = client.post("/run_jupyter", json={"cells": cells, **fields})
    assert r.status_code == 200, r.text
    return r.json()


# -- SandboxFusion's contract ----------------------------------------------------------------


def test_sandbox_fusion_client_run_jupyter(server):
    # SandboxFusion's documented example, through its own client.
    cells = ["a = 123", "a", "print(a)", 'import sys; sys.stderr.write("stderr message")',
             'raise RuntimeError("error message")']  # fmt: skip
    resp = sf.run_jupyter(sf.RunJupyterRequest(cells=cells), endpoint=server.url)
    assert resp.status == sf.RunStatus.Success
    assert [c.display for c in resp.cells][1] == [{"text/plain": "123"}]
    assert resp.cells[2].stdout == "123\n"
    assert resp.cells[3].stderr == "stderr message"
    assert resp.cells[4].error[0]["ename"] == "RuntimeError"
    assert resp.cells[4].error[0]["evalue"] == "error message"
    assert resp.driver.status == sf.CommandRunStatus.Finished


def test_sandbox_fusion_client_run_jupyter_async(server):
    async def go():
        req = sf.RunJupyterRequest(cells=["x = 2", "x ** 10"], cell_timeout=10)
        return await sf.run_jupyter_async(req, endpoint=server.url)

    resp = asyncio.run(go())
    assert resp.status == sf.RunStatus.Success
    assert resp.cells[1].display == [{"text/plain": "1024"}]


def test_response_shape_and_extra_fields(client):
    out = jupyter(client, ["1 + 1", "undefined_name"])
    assert set(out) == {"status", "message", "driver", "cells", "executor_pod_name", "files"}
    ok, bad = out["cells"]
    assert {"stdout", "stderr", "display", "error"} <= set(ok)
    assert ok["execution_count"] == 1 and bad["execution_count"] == 2
    assert ok["status"] == "ok" and ok["kernel_status"] == "idle" and ok["limit"] is None
    assert bad["status"] == "error" and bad["error"][0]["ename"] == "NameError"
    assert isinstance(bad["error"][0]["traceback"], list)


def test_files_in_and_fetch_files_out(client):
    data = base64.b64encode(b"1,2\n3,4\n").decode()
    out = jupyter(
        client,
        ["import csv; rows = list(csv.reader(open('in.csv')))",
         "open('out/sum.txt', 'w').write(str(sum(int(v) for r in rows for v in r)))"],
        files={"in.csv": data, "out/.keep": ""},
        fetch_files=["out/sum.txt", "missing.txt"],
    )  # fmt: skip
    assert out["status"] == "Success"
    assert base64.b64decode(out["files"]["out/sum.txt"]) == b"10"
    assert "missing.txt" not in out["files"]


def test_each_request_gets_a_fresh_kernel(client):
    jupyter(client, ["leak = 'secret'", "open('left.txt', 'w').write('x')"])
    out = jupyter(client, ["'leak' in dir()", "import os; os.path.exists('left.txt')"])
    assert [c["display"] for c in out["cells"]] == [[{"text/plain": "False"}]] * 2


# -- rich outputs ----------------------------------------------------------------------------


def test_matplotlib_figure_is_a_png(client):
    out = jupyter(
        client,
        ["import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"],
        cell_timeout=120,
    )
    (cell,) = out["cells"]
    assert cell["error"] == []
    pngs = [d["image/png"] for d in cell["display"] if "image/png" in d]
    assert len(pngs) == 1
    assert base64.b64decode(pngs[0]).startswith(b"\x89PNG\r\n\x1a\n")


def test_dataframe_value_is_html(client):
    out = jupyter(client, ["import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})"])
    (display,) = out["cells"][0]["display"]
    assert "<table" in display["text/html"]
    assert "a" in display["text/plain"]


# -- failures and limits ---------------------------------------------------------------------


def test_an_error_in_cell_2_leaves_cell_3_running(client):
    out = jupyter(client, ["x = 1", "raise ValueError('boom')", "print(x + 1)"])
    assert out["status"] == "Success"
    assert out["cells"][1]["error"][0]["ename"] == "ValueError"
    assert out["cells"][2]["stdout"] == "2\n" and out["cells"][2]["error"] == []


def test_infinite_loop_stopped_at_cell_timeout(client):
    out = jupyter(client, ["y = 7", "while True: pass", "print(y)"], cell_timeout=2)
    _, loop, after = out["cells"]
    assert loop["limit"] == "time" and loop["status"] == "error"
    assert loop["error"][0]["ename"] == "TimeoutError"
    assert loop["execution_time"] < 30
    assert after["stdout"] == "7\n"  # interrupted, not restarted: the state survived
    assert out["status"] == "Success"


def test_loop_ignoring_interrupts_is_stopped_too(client):
    code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass"
    out = jupyter(client, [code, "print('next')"], cell_timeout=2)
    loop, after = out["cells"]
    assert loop["limit"] == "time" and loop["kernel_status"] == "restarted"
    assert after["stdout"] == "next\n"


def test_total_timeout_stops_the_notebook(client):
    out = jupyter(client, ["import time", "time.sleep(60)", "print('never')"], total_timeout=3)
    assert out["status"] == "Failed"
    assert out["driver"]["status"] == "TimeLimitExceeded"
    assert len(out["cells"]) == 2 and out["cells"][1]["limit"] == "time"


def test_memory_hog_stopped_at_the_limit(client):
    hog = "blocks = []\nwhile True: blocks.append(b'x' * (16 << 20))"
    out = jupyter(client, ["z = 1", hog, "print('alive')"], memory_limit_MB=256, cell_timeout=60)
    _, cell, after = out["cells"]
    assert cell["limit"] == "memory"
    assert cell["error"][0]["ename"] == "MemoryError"
    assert cell["kernel_status"] == "restarted"
    assert after["stdout"] == "alive\n"


def test_output_flood_is_capped(client):
    out = jupyter(client, ["while True: print('x' * 100000)"], cell_timeout=60)
    (cell,) = out["cells"]
    assert cell["truncated"] and cell["limit"] == "output", {
        k: str(v)[:200] for k, v in cell.items()
    }
    assert len(cell["stdout"]) <= 8 << 20


def test_output_is_capped_over_all_the_cells(client):
    cell = "print('z' * (3 << 20))"
    out = jupyter(client, [cell] * 5, cell_timeout=60)
    assert sum(len(c["stdout"]) for c in out["cells"]) <= 8 << 20
    assert out["cells"][-1]["truncated"] and out["cells"][-1]["limit"] == "output"


def test_code_over_the_size_limit_is_413(client):
    r = client.post("/run_jupyter", json={"cells": ["#" * (3 << 20)] * 2})
    assert r.status_code == 413


def test_display_of_nan_json_does_not_break_the_reply(client):
    code = (
        "from IPython.display import display\n"
        "display({'application/json': {'v': float('nan')}}, raw=True)\n1"
    )
    out = jupyter(client, [code])
    assert out["status"] == "Success"


@pytest.mark.parametrize(
    "fields",
    [
        {"cell_timeout": -1},
        {"total_timeout": 0},
        {"total_timeout": 1e9},
        {"memory_limit_MB": 10},
        {"memory_limit_MB": 1 << 30},
        {"kernel": "julia"},
        {"files": {"../x": "eA=="}},
        {"files": {"a": "not base64!"}},
    ],
    ids=lambda f: next(iter(f)) + "=" + str(next(iter(f.values()))),
)
def test_bad_input_is_a_4xx(client, fields):
    r = client.post("/run_jupyter", json={"cells": ["1"], **fields})
    assert 400 <= r.status_code < 500, r.text
    assert "detail" in r.json()


def test_non_finite_timeouts_are_refused(client):
    body = '{"cells": ["1"], "cell_timeout": NaN}'
    r = client.post("/run_jupyter", content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500
