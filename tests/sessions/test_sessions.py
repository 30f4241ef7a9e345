"""Sessions over HTTP: a box that keeps its state across requests (Python kernels and bash),
streaming, files, interrupt and restart, limits, caps, and many at once."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvloop

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


def test_sandlot_installed_where_a_box_mounts_its_own_says_so(monkeypatch) -> None:
    """A checkout under /tmp (every box mounts a /tmp of its own, which hides the session
    agent bound there): sessions are off at start-up, saying why, not 500s at each create."""
    from sandlot.config import Config
    from sandlot.errors import JailUnavailable
    from sandlot.languages import LANGUAGES, Registry
    from sandlot.sessions import manager

    monkeypatch.setattr(manager, "AGENT", "/tmp/checkout/sandlot/sessions/box/agent.py")
    config = Config.load()
    sessions = manager.SessionManager(config, None, Registry(LANGUAGES, config.runtime_dir))  # type: ignore[arg-type]
    with pytest.raises(JailUnavailable, match="a box mounts /tmp of its own over it: install"):
        asyncio.run(sessions.start())


def create(client: httpx.Client, language: str = "python", **fields) -> str:
    r = client.post("/sessions", json={"language": language, **fields})
    assert r.status_code == 200, r.text
    return r.json()["id"]


def execute(client: httpx.Client, sid: str, code: str, **fields) -> dict:
    r = client.post(f"/sessions/{sid}/execute", json={"code": code, **fields})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture
def session(client: httpx.Client) -> Iterator[str]:
    sid = create(client)
    yield sid
    client.delete(f"/sessions/{sid}")


@pytest.fixture
def shell(client: httpx.Client) -> Iterator[str]:
    sid = create(client, "bash")
    yield sid
    client.delete(f"/sessions/{sid}")


# -- python ----------------------------------------------------------------------------------


def test_state_survives_between_executions(client, session):
    assert execute(client, session, "x = 41")["status"] == "ok"
    out = execute(client, session, "x += 1\nx")
    assert out["outputs"] == [
        {"type": "execute_result", "data": {"text/plain": "42"}, "metadata": {},
         "execution_count": 2}
    ]  # fmt: skip
    assert out["execution_count"] == 2 and out["error"] is None


def test_outputs_are_typed_and_in_order(client, session):
    code = "import sys\nprint('a')\nprint('b', file=sys.stderr)\n1/0"
    out = execute(client, session, code)
    assert [o["type"] for o in out["outputs"]] == ["stdout", "stderr", "error"]
    assert out["stdout"] == "a\n" and out["stderr"] == "b\n"
    assert out["status"] == "error" and out["error"]["ename"] == "ZeroDivisionError"


def test_stdout_and_stderr_come_out_in_the_order_written(client, session):
    """Each stream has its own buffer in the kernel, flushed by a timer of its own: written in
    turns, they must still come out in turns (a warning after a print, after it)."""
    code = "import sys\nfor i in range(30):\n    print(i)\n    print(-i, file=sys.stderr)\n"
    runs = []
    for o in execute(client, session, code)["outputs"]:
        if runs and runs[-1][0] == o["type"]:
            runs[-1] = (o["type"], runs[-1][1] + o["text"])
        else:
            runs.append((o["type"], o["text"]))
    assert runs == [(kind, f"{sign}{i}\n") for i in range(30)
                    for kind, sign in (("stdout", ""), ("stderr", "-" if i else ""))]  # fmt: skip


def test_rich_outputs(client, session):
    out = execute(client, session, "import pandas as pd\npd.DataFrame({'a': [1]})")
    assert "text/html" in out["outputs"][0]["data"]


def test_streaming_ndjson(client, session):
    code = "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)"
    events, busy_at_first_line = [], None
    with client.stream(
        "POST", f"/sessions/{session}/execute", json={"code": code},
        headers={"accept": "application/x-ndjson"},
    ) as r:  # fmt: skip
        assert r.headers["content-type"].startswith("application/x-ndjson")
        for line in r.iter_lines():
            events.append(json.loads(line))
            if busy_at_first_line is None:  # lines come as printed, not all at the end
                busy_at_first_line = client.get(f"/sessions/{session}").json()["status"]
    assert busy_at_first_line == "busy"
    assert "".join(e["text"] for e in events[:-1]) == "0\n1\n2\n"
    assert all(e["type"] == "stdout" for e in events[:-1])
    assert events[-1]["type"] == "end" and events[-1]["status"] == "ok"
    assert events[-1]["session_id"] == session


def test_stream_flag_in_the_body(client, session):
    with client.stream(
        "POST", f"/sessions/{session}/execute", json={"code": "print(1)", "stream": True}
    ) as r:
        lines = [json.loads(line) for line in r.iter_lines()]
    assert lines[0] == {"type": "stdout", "text": "1\n"} and lines[-1]["type"] == "end"


def test_timeout_interrupts_and_keeps_state(client, session):
    execute(client, session, "kept = 'yes'")
    out = execute(client, session, "while True: pass", timeout=1)
    assert out["limit"] == "time" and out["error"]["ename"] == "TimeoutError"
    assert not out["kernel_restarted"]
    assert execute(client, session, "kept")["outputs"][0]["data"]["text/plain"] == "'yes'"


def test_interrupt_endpoint(client, session):
    result = {}
    t = threading.Thread(
        target=lambda: result.update(
            execute(client, session, "import time; time.sleep(60)", timeout=120)
        )
    )
    t.start()
    deadline = time.monotonic() + 60
    while client.get(f"/sessions/{session}").json()["status"] != "busy":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client.post(f"/sessions/{session}/interrupt").json() == {"interrupted": True}
    t.join(60)
    assert result["error"]["ename"] == "KeyboardInterrupt"
    assert client.post(f"/sessions/{session}/interrupt").json() == {"interrupted": False}


def test_restart_clears_variables_keeps_files(client, session):
    execute(client, session, "v = 1\nopen('kept.txt', 'w').write('k')")
    info = client.post(f"/sessions/{session}/restart")
    assert info.status_code == 200, info.text
    out = execute(client, session, "import os\nprint('v' in dir(), os.path.exists('kept.txt'))")
    assert out["stdout"] == "False True\n" and out["execution_count"] == 1


def test_memory_limit_restarts_the_kernel(client):
    sid = create(client, memory_limit_MB=256)
    try:
        out = execute(client, sid, "b = []\nwhile True: b.append(b'x' * (16 << 20))", timeout=60)
        assert out["limit"] == "memory" and out["kernel_restarted"]
        assert out["error"]["ename"] == "MemoryError"
        assert execute(client, sid, "print('back')")["stdout"] == "back\n"
    finally:
        client.delete(f"/sessions/{sid}")


def test_output_flood_is_capped(client, session):
    out = execute(client, session, "while True: print('y' * 100000)", timeout=60)
    assert out["truncated"] and out["limit"] == "output"
    assert len(out["stdout"]) <= 8 << 20
    assert execute(client, session, "print('ok')")["stdout"] == "ok\n"


def test_printed_output_is_not_kept_in_the_kernel(client):
    """IPython keeps a copy of every cell's output by default: a session that prints more than
    its memory limit over many cells would be killed for what it printed long ago."""
    sid = create(client, memory_limit_MB=256)
    try:
        for n in range(1, 41):  # 40 x 7 MiB printed, 280 MiB in all
            out = execute(client, sid, "print('x' * (7 << 20))", timeout=60)
            assert out["status"] == "ok" and not out["kernel_restarted"], (n, out["limit"])
            assert out["execution_count"] == n and len(out["stdout"]) == (7 << 20) + 1
    finally:
        client.delete(f"/sessions/{sid}")


# -- bash ------------------------------------------------------------------------------------


def test_bash_keeps_variables_and_cwd(client, shell):
    execute(client, shell, "cd /tmp && mkdir -p w && cd w; n=5")
    out = execute(client, shell, "echo $n $(pwd); ls /nonexistent")
    assert out["stdout"] == "5 /tmp/w\n" and out["exit_code"] == 2
    assert out["status"] == "error" and "nonexistent" in out["stderr"]


def test_bash_timeout_keeps_the_shell(client, shell):
    execute(client, shell, "m=kept")
    out = execute(client, shell, "sleep 60; echo never", timeout=1)
    assert out["limit"] == "time" and out["exit_code"] == 130
    assert "never" not in out["stdout"]
    assert execute(client, shell, "echo $m")["stdout"] == "kept\n"


def test_bash_exit_starts_a_new_shell(client, shell):
    out = execute(client, shell, "exit 3")
    assert out["exit_code"] == 3 and out["kernel_restarted"]
    assert execute(client, shell, "echo fresh")["stdout"] == "fresh\n"


def test_bash_cannot_read_the_agents_commands(client, shell):
    out = execute(client, shell, "cat; echo done")  # its stdin is /dev/null, not the agent's
    assert out["stdout"] == "done\n"


# -- files -----------------------------------------------------------------------------------


def test_files_up_and_down(client, shell):
    r = client.put(f"/sessions/{shell}/files/data/in.txt", content=b"hello\x00world")
    assert r.json() == {"path": "data/in.txt", "size": 11}
    execute(client, shell, "wc -c < data/in.txt > data/out.txt")
    assert client.get(f"/sessions/{shell}/files/data/out.txt").content == b"11\n"


def test_files_given_at_creation(client):
    sid = create(client, files={"a/b.txt": base64.b64encode(b"given").decode()})
    try:
        assert execute(client, sid, "print(open('a/b.txt').read())")["stdout"] == "given\n"
    finally:
        client.delete(f"/sessions/{sid}")


@pytest.mark.parametrize(
    ("path", "status"), [("missing.txt", 404), ("..%2Fetc%2Fpasswd", 400), ("dir", 404)]
)
def test_bad_file_requests(client, shell, path, status):
    execute(client, shell, "mkdir -p dir")
    assert client.get(f"/sessions/{shell}/files/{path}").status_code == status


# -- lifecycle -------------------------------------------------------------------------------


def test_list_get_delete(client):
    sid = create(client, "bash")
    assert sid in [s["id"] for s in client.get("/sessions").json()]
    info = client.get(f"/sessions/{sid}").json()
    assert info["language"] == "bash" and info["status"] == "idle"
    assert info["idle_timeout"] == 300 and info["memory_limit_MB"] == 1024
    assert client.delete(f"/sessions/{sid}").json()["ended"] == "it was deleted"
    gone = client.get(f"/sessions/{sid}")
    assert gone.status_code == 410 and "deleted" in gone.json()["detail"]
    assert client.post(f"/sessions/{sid}/execute", json={"code": "1"}).status_code == 410
    assert sid not in [s["id"] for s in client.get("/sessions").json()]


def test_health_reports_sessions(client, session):
    status = client.get("/health").json()["sessions"]
    assert status["available"] and status["problem"] is None
    assert status["live"] >= 1 and status["max"] == 64 and status["pool_size"] == 2
    assert status["scope"] == "server"  # one worker: its counts are the server's


def test_unknown_session_is_404(client):
    assert client.get("/sessions/nope").status_code == 404
    r = client.post("/run_code", json={"code": "1", "language": "python", "session_id": "nope"})
    assert r.status_code == 404


def test_other_clients_do_not_see_my_sessions(client, server, session):
    other = httpx.Client(
        base_url=server.url, transport=httpx.HTTPTransport(local_address="127.0.0.2")
    )
    with other:
        assert session not in [s["id"] for s in other.get("/sessions").json()]


def test_idle_session_ends(client):
    sid = create(client, "bash", idle_timeout=1)
    deadline = time.monotonic() + 30
    while (r := client.get(f"/sessions/{sid}")).status_code == 200:
        assert time.monotonic() < deadline
        time.sleep(1.5)  # each look counts as activity: look seldom
    assert r.status_code == 410 and "idle" in r.json()["detail"]


def test_run_code_with_session_id(client, session):
    body = {"language": "python", "session_id": session}
    r1 = client.post("/run_code", json={**body, "code": "acc = [1]"}).json()
    r2 = client.post("/run_code", json={**body, "code": "acc.append(2); print(acc); acc"}).json()
    assert r1["status"] == "Success" and r2["session_id"] == session
    assert r2["run_result"]["stdout"] == "[1, 2]\n[1, 2]\n"
    r3 = client.post("/run_code", json={**body, "code": "1/0"}).json()
    assert r3["status"] == "Failed" and r3["run_result"]["return_code"] == 1
    assert "ZeroDivisionError" in r3["run_result"]["stderr"]
    assert "\x1b[" not in r3["run_result"]["stderr"]
    wrong = {"code": "echo", "language": "bash", "session_id": session}
    assert client.post("/run_code", json=wrong).status_code == 400
    with_stdin = {**body, "code": "input()", "stdin": "x"}
    assert client.post("/run_code", json=with_stdin).status_code == 400
    files = {
        **body,
        "code": "open('out.txt', 'w').write(open('in.txt').read().upper())",
        "files": {"in.txt": base64.b64encode(b"abc").decode()},
        "fetch_files": ["out.txt"],
    }
    r4 = client.post("/run_code", json=files).json()
    assert base64.b64decode(r4["files"]["out.txt"]) == b"ABC"


@pytest.mark.parametrize(
    "body",
    [
        {"language": "cpp"},
        {"language": "klingon"},
        {"idle_timeout": -5},
        {"lifetime": 1e12},
        {"memory_limit_MB": 1 << 40},
        {"files": {"/abs": "eA=="}},
    ],
    ids=lambda b: "-".join(f"{k}={v}" for k, v in b.items()),
)
def test_bad_create_is_a_4xx(client, body):
    r = client.post("/sessions", json={"language": "python", **body})
    assert 400 <= r.status_code < 500, r.text


def test_code_over_the_size_limit_is_413(client, session):
    big = "#" * (5 << 20)
    assert client.post(f"/sessions/{session}/execute", json={"code": big}).status_code == 413
    body = {"code": big, "language": "python", "session_id": session}
    assert client.post("/run_code", json=body).status_code == 413
    assert execute(client, session, "print('fine')")["stdout"] == "fine\n"


def test_code_escaping_to_a_larger_op_still_runs(client, session):
    code = "# " + "\x01" * (3 << 20) + "\nprint('ok')"  # each byte 6 once escaped as JSON
    assert execute(client, session, code)["stdout"] == "ok\n"


def test_non_finite_numbers_are_a_4xx(client, session):
    for path, body in (
        ("/sessions", '{"language": "python", "memory_limit_MB": NaN}'),
        ("/sessions", '{"language": "bash", "idle_timeout": Infinity}'),
        (f"/sessions/{session}/execute", '{"code": "1", "timeout": NaN}'),
    ):
        r = client.post(path, content=body, headers={"content-type": "application/json"})
        assert 400 <= r.status_code < 500, f"{path} {body}: {r.status_code} {r.text}"


def test_bad_execute_is_a_4xx(client, session):
    for body in ({"code": "1", "timeout": -1}, {"code": "1", "timeout": 1e9}, {}):
        r = client.post(f"/sessions/{session}/execute", json=body)
        assert 400 <= r.status_code < 500, r.text


def test_client_disconnect_interrupts(client, server, session):
    execute(client, session, "state = 'intact'")
    loop = {"code": "while True: pass", "timeout": 120}
    with (
        httpx.Client(base_url=server.url, timeout=1.5) as impatient,
        pytest.raises(httpx.ReadTimeout),
    ):
        impatient.post(f"/sessions/{session}/execute", json=loop)
    deadline = time.monotonic() + 30
    while client.get(f"/sessions/{session}").json()["status"] == "busy":
        assert time.monotonic() < deadline, "the abandoned execution still runs"
        time.sleep(0.1)
    assert execute(client, session, "state")["outputs"][0]["data"]["text/plain"] == "'intact'"


def test_stream_disconnect_interrupts(client, session):
    code = "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)"
    with client.stream(
        "POST", f"/sessions/{session}/execute", json={"code": code, "stream": True, "timeout": 120}
    ) as r:
        next(r.iter_lines())
    deadline = time.monotonic() + 30
    while client.get(f"/sessions/{session}").json()["status"] == "busy":
        assert time.monotonic() < deadline, "the abandoned stream still runs"
        time.sleep(0.1)
    assert execute(client, session, "print('next')")["stdout"] == "next\n"


# -- many at once ----------------------------------------------------------------------------


@pytest.mark.slow  # fifty kernels to start on two cores
def test_fifty_live_sessions_hold_their_own_state(client):
    n = 50

    def one(i: int) -> str:
        sid = create(client, "python" if i % 5 else "bash")
        code = f"v={i}" if i % 5 == 0 else f"v = {i}\nopen('mine.txt', 'w').write('{i}')"
        assert execute(client, sid, code)["status"] == "ok"
        return sid

    with ThreadPoolExecutor(max_workers=10) as pool:
        sids = list(pool.map(one, range(n)))
    try:
        assert len(set(sids)) == n

        def check(i: int) -> None:
            if i % 5 == 0:
                assert execute(client, sids[i], "echo $v; ls")["stdout"] == f"{i}\n"
            else:
                out = execute(client, sids[i], "print(v, open('mine.txt').read())")
                assert out["stdout"] == f"{i} {i}\n"

        with ThreadPoolExecutor(max_workers=10) as pool:
            list(pool.map(check, range(n)))
    finally:
        with ThreadPoolExecutor(max_workers=10) as pool:
            list(pool.map(lambda s: client.delete(f"/sessions/{s}"), sids))


def test_an_interrupt_sent_as_the_execution_starts_is_not_lost():
    """An interrupt that comes between an execution taking the session and its op reaching the
    agent (a client that interrupts at once, one that hangs up) must not overtake the op: the
    agent would drop it as idle, then run the execution to its end. In process, where that
    moment can be hit exactly: right after `execute` returns, before its pump has run."""
    from sandlot.config import Config
    from sandlot.service import Service
    from sandlot.tenancy import LOCAL, Owner

    config = Config.load(slots=1, uid_base=64600, session_uid_base=64700, session_max=2,
                         session_pool=0, state_dir="/run/sandlot-test-interrupt")  # fmt: skip
    service = Service(config)
    service.start()

    async def scenario() -> list[dict]:
        await service.open_sessions()
        try:
            session = await service.require_sessions().create("python", Owner(LOCAL, "me"))
            execution = await session.execute("import time; time.sleep(120)", timeout=300)
            assert session.interrupt()
            async with asyncio.timeout(60):
                return [event async for event in execution]
        finally:
            await service.close_sessions()

    try:
        got = uvloop.run(scenario())  # the server's event loop
    finally:
        service.close()
    assert [e["ename"] for e in got if e["type"] == "error"] == ["KeyboardInterrupt"]
    assert got[-1]["type"] == "end" and got[-1]["status"] == "error"
