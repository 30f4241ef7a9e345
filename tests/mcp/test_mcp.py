"""sandlot's MCP server, driven by the official SDK's client against a real server: over
streamable HTTP (`/mcp`, behind API keys) and over stdio (`sandlot mcp`, bridged to the server
or serving a local jail). Every tool, a session kept across calls, progress, cancellation, a
large output, a file round trip, each tool's bad inputs, and the attacks of issue 42.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.types import EmbeddedResource, ImageContent

from tests.conftest import (
    ROOT,
    SESSION_UIDS,
    STATE_ROOT,
    UID_BASE,
    Server,
    running_server,
    sandlot_processes,
)
from tests.mcp_client import call, ok, over_http, over_stdio, text

pytestmark = pytest.mark.root

KEY_A = "key-alpha-0123456789abcdef"
KEY_B = "key-bravo-0123456789abcdef"
OWNER = 65151  # owns the repositories under coder_roots (git runs as the owner, never root)
CALC_BUGGY = "def add(a, b):\n    return a - b\n"
CALC_RIGHT = "def add(a, b):\n    return a + b\n"
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
HAS_CLOSE = (
    "    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
    "            if i != j and abs(a - b) < threshold:\n                return True\n"
    "    return False\n"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(repo), *args],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture(scope="module")
def roots() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="sandlot-mcp-roots-"))
    top.chmod(0o755)
    os.chown(top, OWNER, OWNER)
    yield top
    shutil.rmtree(top)


def make_repo(roots: Path, name: str) -> Path:
    """A git repository of OWNER's under `roots` whose one test fails (add subtracts)."""
    repo = roots / name
    repo.mkdir()
    (repo / "calc.py").write_text(CALC_BUGGY)
    (repo / "test_calc.py").write_text(CALC_TEST)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    for path in (repo, *repo.rglob("*")):
        os.chown(path, OWNER, OWNER, follow_symlinks=False)
    return repo


@pytest.fixture(scope="module")
def llm():
    from tests.fake_llm import serve

    with serve() as fake:
        yield fake


@pytest.fixture(scope="module")
def repo_cache() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sandlot-mcp-repos-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def keyed(roots: Path, llm, repo_cache: Path) -> Iterator[Server]:
    env = {
        "SANDLOT_API_KEYS": f"{KEY_A},{KEY_B}", "SANDLOT_CODER_ROOTS": str(roots),
        "SANDLOT_REPO_DIR": str(repo_cache),
        "SANDLOT_CODER_JOBS": "1", "SANDLOT_MCP_IDLE_TIMEOUT": "4",
        "SANDLOT_UID_BASE": str(UID_BASE + 4), "OPENAI_API_KEY": "sk-test-0123456789abcdef",
        "OPENAI_API_BASE": llm.base, "SANDLOT_CODER_MODEL": "openai/fake-coder",
    }  # fmt: skip
    with running_server("--slots", "2", env=env) as srv:
        yield srv


def run(body) -> object:  # an async test body, run to its end
    return anyio.run(body)


def wait_until(check, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def session_boxes() -> list[str]:
    return sandlot_processes(SESSION_UIDS)


# --- every tool, over HTTP ----------------------------------------------------------------------


TOOLS = {
    "run_code", "run_tests", "judge", "languages", "datasets", "prompt", "session_create",
    "session_run", "session_upload", "session_download", "session_close", "session_snapshot",
    "session_fork", "route", "repo_test", "code", "repo_grade",
}  # fmt: skip


def test_tools_are_typed_described_and_annotated(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and tool.annotations is not None, tool.name
                assert tool.annotations.read_only_hint is not None, tool.name
                assert tool.annotations.open_world_hint is not None, tool.name
                assert tool.output_schema is not None, tool.name
                for name, prop in tool.input_schema.get("properties", {}).items():
                    if name not in ("max_attempts",):
                        assert prop.get("description"), f"{tool.name}.{name}"
            assert tools["languages"].annotations.read_only_hint is True
            assert tools["session_close"].annotations.destructive_hint is True
            assert tools["code"].annotations.open_world_hint is True
            code_args = tools["code"].input_schema["properties"]
            assert {"setup", "allow_test_changes"} <= set(code_args)  # as POST /code takes them

    run(body)


def test_run_code_run_tests_and_the_catalogue(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            res = await call(s, "run_code", language="python", code="print(6 * 7)")
            assert not res.is_error and "42" in text(res) and "Success" in text(res)
            out = res.structured_content
            assert out["status"] == "Success" and out["stdout"] == "42\n"
            assert out["exit_code"] == 0 and out["run_result"]["cpu_time"] > 0
            out = await ok(s, "run_code", language="cpp", code="int main(){return 3;}")
            assert out["status"] == "Failed" and out["exit_code"] == 3
            res = await call(s, "run_code", language="python", code="while True: pass",
                             run_timeout=1)  # fmt: skip
            assert "time limit" in text(res) or "wall_time" in text(res)
            cases = [{"input": "add(1, 2)", "expected": "3"}, {"input": "add(2, 2)",
                     "expected": "5"}]  # fmt: skip
            res = await call(
                s,
                "run_tests",
                language="python",
                code="def add(a, b):\n    return a + b\n",
                test_cases=cases,
            )
            assert "1/2 passed" in text(res) and res.structured_content["passed"] is False
            assert [t["passed"] for t in res.structured_content["tests"]] == [True, False]
            names = [r["name"] for r in (await ok(s, "languages"))["languages"]]
            assert "python" in names and "cpp" in names
            assert "humaneval_python" in (await ok(s, "datasets"))["datasets"]
            prompt = await ok(s, "prompt", dataset="humaneval_python", problem_id="HumanEval/0")
            assert "has_close_elements" in prompt["prompt"]
            verdict = await ok(s, "judge", dataset="humaneval_python", problem_id="HumanEval/0",
                               completion=f"```python\n{HAS_CLOSE}```")  # fmt: skip
            assert verdict["accepted"] is True
            res = await call(s, "judge", dataset="humaneval_python", problem_id="HumanEval/0",
                             completion="    return True\n")  # fmt: skip
            assert res.structured_content["accepted"] is False and "rejected" in text(res)
            routed = await ok(s, "route", request="fix the bug in my repo's parser")
            assert routed["route"] == "coder" and routed["tool"].startswith("code")
            routed = await ok(s, "route", request="run this untrusted snippet safely")
            assert routed["route"] == "sandbox" and "run_code" in routed["tool"]

    run(body)


ACCEPT = "application/json, text/event-stream"


def raw_connection(c: httpx.Client) -> dict[str, str]:
    """An initialized MCP connection over plain HTTP: the headers its calls carry."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}  # fmt: skip
    r = c.post("/mcp", json=init)
    assert r.status_code == 200, r.text
    conn = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    r = c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
               headers=conn)  # fmt: skip
    assert r.status_code == 202
    return conn


def messages(r: httpx.Response) -> list[dict]:
    """The JSON-RPC messages of an answer: its JSON body, or its SSE stream's events."""
    if r.headers["content-type"].startswith("application/json"):
        return [r.json()]
    assert r.headers["content-type"].startswith("text/event-stream"), r.headers
    return [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]


def tool_call(request_id: int, name: str, meta: dict | None = None, **arguments) -> dict:
    params: dict = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_call_that_asks_no_progress_is_answered_as_json_with_the_streams_result(
    keyed: Server,
) -> None:
    auth = {"Authorization": f"Bearer {KEY_A}", "Accept": ACCEPT}
    with httpx.Client(base_url=keyed.url, headers=auth, timeout=120) as c:
        conn = raw_connection(c)
        code = "import sys; print(6 * 7); print('e', file=sys.stderr)"
        plain = c.post("/mcp", json=tool_call(1, "run_code", language="python", code=code),
                       headers=conn)  # fmt: skip
        assert plain.status_code == 200 and plain.headers["content-type"] == "application/json"
        # control: the same call with a progress token is answered as a stream, as before
        streamed = c.post("/mcp", json=tool_call(2, "run_code", {"progressToken": "p"},
                                                 language="python", code=code),
                          headers=conn)  # fmt: skip
        assert streamed.headers["content-type"].startswith("text/event-stream")
        [as_json], events = messages(plain), messages(streamed)
        assert as_json["id"] == 1 and events[-1]["id"] == 2
        a, b = as_json["result"], events[-1]["result"]
        assert not a.get("isError") and not b.get("isError")
        untimed = [re.sub(r"[\d.]+ s\b", "", json.dumps(r["content"])) for r in (a, b)]
        assert untimed[0] == untimed[1] and "Success" in untimed[0]
        times = ("run_result", "compile_result")
        same = {k: v for k, v in a["structuredContent"].items() if k not in times}
        assert same == {k: v for k, v in b["structuredContent"].items() if k not in times}
        assert same["stdout"] == "42\n" and same["stderr"] == "e\n"
        # a tool error and a catalogue call come back as JSON too
        bad = c.post("/mcp", json=tool_call(3, "run_code", language="cobol-9", code="x"),
                     headers=conn)  # fmt: skip
        [err] = messages(bad)
        assert bad.headers["content-type"] == "application/json" and err["result"]["isError"]
        listed = c.post("/mcp", json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
                        headers=conn)  # fmt: skip
        assert listed.headers["content-type"] == "application/json"
        assert {t["name"] for t in messages(listed)[0]["result"]["tools"]} == TOOLS
        # the long tools stay a stream without a token (heartbeats keep proxies from cutting)
        long = c.post("/mcp", json=tool_call(5, "repo_test", repo="/nonexistent"), headers=conn)
        assert long.headers["content-type"].startswith("text/event-stream")
        assert messages(long)[-1]["result"]["isError"]
        c.delete("/mcp", headers=conn)


def test_progress_arrives_on_a_stream_when_a_token_asks_for_it(keyed: Server) -> None:
    auth = {"Authorization": f"Bearer {KEY_A}", "Accept": ACCEPT}
    with httpx.Client(base_url=keyed.url, headers=auth, timeout=120) as c:
        conn = raw_connection(c)
        created = messages(c.post("/mcp", json=tool_call(1, "session_create"),
                                  headers=conn))  # fmt: skip
        session = created[-1]["result"]["structuredContent"]["id"]
        code = (
            "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.3)"
        )
        r = c.post("/mcp", json=tool_call(2, "session_run", {"progressToken": 7},
                                          session_id=session, code=code),
                   headers=conn)  # fmt: skip
        events = messages(r)
        notes = [e["params"] for e in events if e.get("method") == "notifications/progress"]
        assert notes and all(n["progressToken"] == 7 for n in notes)
        assert "tick 2" in "".join(n.get("message", "") for n in notes)
        assert events[-1]["id"] == 2 and "tick 2" in json.dumps(events[-1]["result"])
        c.delete("/mcp", headers=conn)


def test_attack_another_key_cannot_reach_a_session_through_a_json_answer(keyed: Server) -> None:
    with (
        httpx.Client(base_url=keyed.url, timeout=120,
                     headers={"Authorization": f"Bearer {KEY_A}", "Accept": ACCEPT}) as a,
        httpx.Client(base_url=keyed.url, timeout=120,
                     headers={"Authorization": f"Bearer {KEY_B}", "Accept": ACCEPT}) as b,
    ):  # fmt: skip
        conn_a = raw_connection(a)
        created = messages(a.post("/mcp", json=tool_call(1, "session_create"),
                                  headers=conn_a))  # fmt: skip
        session = created[-1]["result"]["structuredContent"]["id"]
        up = tool_call(2, "session_upload", session_id=session, path="s.txt", content="secret")
        down = tool_call(3, "session_download", session_id=session, path="s.txt")
        assert not messages(a.post("/mcp", json=up, headers=conn_a))[0]["result"].get("isError")
        conn_b = raw_connection(b)  # now: the server ends a connection idle for 4 s
        stolen = b.post("/mcp", json=down, headers=conn_b)
        assert stolen.status_code == 200 and stolen.headers["content-type"] == "application/json"
        [answer] = messages(stolen)
        assert answer["result"]["isError"] and "secret" not in stolen.text, answer
        # A's connection id is useless with B's key
        assert b.post("/mcp", json=up, headers=conn_a).status_code == 404
        # control: the owner reads its file back, as JSON
        mine = a.post("/mcp", json=down, headers=conn_a)
        assert mine.headers["content-type"] == "application/json" and "secret" in mine.text
        a.delete("/mcp", headers=conn_a)
        b.delete("/mcp", headers=conn_b)


def test_a_large_output_is_cut_with_a_note(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            res = await call(s, "run_code", language="python", code="print('x' * 300000)")
            assert not res.is_error
            said = text(res)
            assert len(said) < 30_000 and "characters cut" in said and "note:" in said
            out = res.structured_content
            assert len(out["stdout"]) < 30_000 and any("stdout" in n for n in out["notes"])
            assert out["run_result"]["stdout"] is None  # said once, at the top

    run(body)


def test_run_code_files_come_back_as_embedded_resources(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            code = "open('out.txt','w').write(open('in.txt').read().upper())\n" \
                   "open('raw.bin','wb').write(bytes(range(256)))"  # fmt: skip
            res = await call(
                s,
                "run_code",
                language="python",
                code=code,
                files={"in.txt": "hello"},
                fetch_files=["out.txt", "raw.bin"],
            )
            resources = {b.resource.uri: b.resource for b in res.content
                         if isinstance(b, EmbeddedResource)}  # fmt: skip
            assert resources["sandlot://run/out.txt"].text == "HELLO"
            assert len(resources["sandlot://run/raw.bin"].blob) == 344  # base64 of 256 bytes
            assert res.structured_content["files"] == {}  # not in the JSON again

    run(body)


# --- sessions -----------------------------------------------------------------------------------


def test_a_session_keeps_state_across_calls_streams_progress_and_round_trips_files(
    keyed: Server,
) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            sid = (await ok(s, "session_create"))["id"]
            seen: list[str] = []

            async def progress(done: float, total: float | None, message: str | None) -> None:
                seen.append(message or "")

            code = "import time\nx = 41\nfor i in range(3):\n    print('tick', i, flush=True)" \
                   "\n    time.sleep(0.3)"  # fmt: skip
            res = await s.call_tool("session_run", {"session_id": sid, "code": code},
                                    progress_callback=progress)  # fmt: skip
            assert not res.is_error and "tick 2" in text(res)
            assert sum("tick" in m for m in seen) >= 2, seen  # outputs came while it ran
            res = await call(s, "session_run", session_id=sid, code="x + 1")
            assert "42" in text(res)
            data = bytes(range(256)) * 4
            import base64

            await ok(s, "session_upload", session_id=sid, path="d/blob.bin",
                     content=base64.b64encode(data).decode(), encoding="base64")  # fmt: skip
            await ok(s, "session_upload", session_id=sid, path="notes.txt", content="héllo")
            await ok(
                s,
                "session_run",
                session_id=sid,
                code="open('b.txt','w').write("
                "str(len(open('d/blob.bin','rb').read())) + open('notes.txt').read())",
            )
            res = await call(s, "session_download", session_id=sid, path="b.txt")
            block = next(b for b in res.content if isinstance(b, EmbeddedResource))
            assert block.resource.text == "1024héllo"
            res = await call(s, "session_download", session_id=sid, path="d/blob.bin")
            block = next(b for b in res.content if isinstance(b, EmbeddedResource))
            assert base64.b64decode(block.resource.blob) == data
            res = await call(
                s,
                "session_run",
                session_id=sid,
                code=(
                    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')"
                    "\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()"
                ),
            )
            if not res.is_error and "ModuleNotFoundError" not in text(res):
                assert any(isinstance(b, ImageContent) for b in res.content), text(res)
            bash = (await ok(s, "session_create", language="bash"))["id"]
            await ok(s, "session_run", session_id=bash, code="cd /tmp && export V=7")
            res = await call(s, "session_run", session_id=bash, code="echo $V; pwd")
            assert "7\n/tmp" in text(res)
            await ok(s, "session_close", session_id=bash)
            await ok(s, "session_close", session_id=sid)
            res = await call(s, "session_run", session_id=sid, code="x")
            assert res.is_error and "ended" in text(res)

    run(body)


def test_cancelling_a_run_interrupts_it_and_the_session_goes_on(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            sid = (await ok(s, "session_create"))["id"]
            await ok(s, "session_run", session_id=sid, code="y = 5")
            with anyio.move_on_after(3):
                await s.call_tool("session_run", {"session_id": sid, "timeout_s": 300,
                                                  "code": "while True: pass"})  # fmt: skip
            # an uninterrupted loop would hold the kernel for its 300 s: a bound far below that
            with anyio.fail_after(60):
                res = await call(s, "session_run", session_id=sid, code="y * 2")
            assert "10" in text(res), text(res)  # the loop was interrupted: state kept
            await ok(s, "session_close", session_id=sid)

    run(body)


# --- bad inputs, each tool: a tool error that says what to change -------------------------------


BAD = [
    ("run_code", {"language": "klingon", "code": "x"}, "supports: "),
    ("run_code", {"language": "python", "code": "x", "run_timeout": -1}, "run_timeout"),
    ("run_code", {"language": "python", "code": "x", "run_timeout": 1e9}, "maximum"),
    ("run_code", {"language": "python", "code": "x", "files": {"../x": "y"}}, ".."),
    ("run_code", {"language": "python"}, "code"),
    ("run_tests", {"language": "python", "code": "x", "test_cases": []}, "test_cases"),
    ("run_tests", {"language": "python", "code": "x", "test_cases": [{"input": "1"}]},
     "expected"),
    ("judge", {"dataset": "nope", "problem_id": 1, "completion": "x"}, "nope"),
    ("prompt", {"dataset": "humaneval_python", "problem_id": "HumanEval/99999"}, "99999"),
    ("session_create", {"language": "cobol"}, "language"),
    ("session_create", {"idle_timeout": 1e9}, "idle_timeout"),
    ("session_run", {"session_id": "not-a-session", "code": "1"}, "no session"),
    ("session_upload", {"session_id": "nope", "path": "a", "content": "%%",
                        "encoding": "base64"}, "base64"),
    ("session_download", {"session_id": "nope", "path": "a"}, "no session"),
    ("session_close", {"session_id": "nope"}, "no session"),
    ("route", {"request": "   "}, "empty"),
    ("repo_test", {"repo": "/etc"}, "outside"),
    ("code", {"repo": "/etc", "message": "do it"}, "outside"),
    ("code", {"repo": "/etc"}, "message"),
    ("repo_grade", {"repo": "/etc", "base": "main"}, "outside"),
    ("repo_grade", {"base": "main"}, "exactly one of `repo`"),
    ("repo_grade", {"repo": "/etc", "tarball": "AAAA", "base": "main"}, "exactly one of `repo`"),
]  # fmt: skip


def test_bad_inputs_are_tool_errors_that_say_what_to_change(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            for tool, arguments, hint in BAD:
                res = await s.call_tool(tool, arguments)
                said = text(res)
                assert res.is_error, (tool, arguments, said)
                assert hint in said, (tool, arguments, said)
                assert "Traceback" not in said

    run(body)
    assert keyed.alive()


# --- repository grading (repo_grade: POST /repo/grade's use case) -------------------------------

GRADE_SETUP = "mkdir -p .venv && echo ready > .venv/marker"  # no network needed; TEST checks it
GRADE_TEST = "test -f .venv/marker && python -m pytest -q -p no:cacheprovider"
F2P = "test_calc.py::test_add"
CHEAT = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n"


def patch_of(repo: Path, name: str, content: str) -> str:
    """The unified diff that makes `name` hold `content`; the working tree is left as it was."""
    before = (repo / name).read_text()
    (repo / name).write_text(content)
    try:
        return git(repo, "diff") + "\n"
    finally:
        (repo / name).write_text(before)


def tarball_of(repo: Path) -> str:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        tar.add(repo, arcname=".")
    return base64.b64encode(data.getvalue()).decode()


@pytest.mark.slow
def test_repo_grade_resolves_a_fix_and_does_not_count_a_test_edit(
    keyed: Server, roots: Path
) -> None:
    repo = make_repo(roots, "graded")
    fix, cheat = patch_of(repo, "calc.py", CALC_RIGHT), patch_of(repo, "test_calc.py", CHEAT)
    task = {"base": "main", "fail_to_pass": [F2P], "setup": GRADE_SETUP, "test": GRADE_TEST}

    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            seen: list[str] = []

            async def progress(done: float, total: float | None, message: str | None) -> None:
                seen.append(message or "")

            res = await s.call_tool("repo_grade", {"repo": str(repo), "patch": fix, **task},
                                    progress_callback=progress)  # fmt: skip
            out, said = res.structured_content, text(res)
            assert not res.is_error and out["resolved"] is True, said
            assert out["fail_to_pass"] == {F2P: "passed"} and said.startswith("resolved"), said
            assert out["tamper"]["test_files_touched"] == [] and seen, (out, seen)
            # The cheat edits the failing test, not the code: the base's test is graded.
            out = await ok(s, "repo_grade", repo=str(repo), patch=cheat, **task)
            assert out["status"] == "unresolved" and out["fail_to_pass"] == {F2P: "failed"}
            tamper = out["tamper"]
            assert tamper["test_files_touched"] == ["test_calc.py"] and not tamper["counted"]
            # The control: allowed to change tests, the same cheat counts (so the rule is
            # what bit), and the tool says so.
            res = await call(s, "repo_grade", repo=str(repo), patch=cheat,
                             allow_test_changes=True, **task)  # fmt: skip
            assert res.structured_content["tamper"]["counted"] is True, text(res)
            assert "test_calc.py" in text(res) and "counted" in text(res)
            # A tarball of the repository, as POST /repo/grade takes it, grades the same.
            out = await ok(s, "repo_grade", tarball=tarball_of(repo), patch=fix, **task)
            assert out["resolved"] is True, out

    try:
        run(body)
        assert (repo / "calc.py").read_text() == CALC_BUGGY  # the user's tree is untouched
    finally:
        shutil.rmtree(repo)


@pytest.mark.slow
def test_attack_a_second_key_does_not_share_the_first_keys_environment(
    keyed: Server, roots: Path
) -> None:
    repo = make_repo(roots, "tenants")
    task = {
        "repo": str(repo),
        "base": "main",
        "patch": patch_of(repo, "calc.py", CALC_RIGHT),
        "fail_to_pass": [F2P],
        "setup": GRADE_SETUP + " # tenants",
        "test": GRADE_TEST,
    }

    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as a, over_http(keyed.url, KEY_B) as b:
            first = await ok(a, "repo_grade", **task)
            again = await ok(a, "repo_grade", **task)
            assert first["resolved"] and not first["setup"]["cached"], first
            assert again["setup"]["cached"], again  # the control: the key's own is reused
            other = await ok(b, "repo_grade", **task)
            # Another key sets its own up: it neither reads nor writes the first key's.
            assert other["resolved"] and not other["setup"]["cached"], other

    try:
        run(body)
    finally:
        shutil.rmtree(repo)


@pytest.mark.slow
def test_code_with_setup_is_proved_on_the_keys_own_environment(
    keyed: Server, roots: Path, llm
) -> None:
    """`setup` and `allow_test_changes` reach the `code` tool's proof as they reach POST
    /code's, for the calling key: the environment it set up is the one that key's repo_grade
    finds, and not another key's."""
    from sandlot.coder.install import AiderMissing, find_aider
    from tests.fake_llm import Reply, whole_file

    try:
        find_aider()
    except AiderMissing:
        pytest.skip("aider not installed (sandlot setup --with-aider)")
    repo = make_repo(roots, "phased")
    coded = {"repo": str(repo), "message": "make add() add", "setup": GRADE_SETUP,
             "test_cmd": GRADE_TEST, "max_attempts": 1}  # fmt: skip
    graded = {"repo": str(repo), "base": "main", "setup": GRADE_SETUP, "test": GRADE_TEST,
              "patch": patch_of(repo, "calc.py", CALC_RIGHT), "fail_to_pass": [F2P]}  # fmt: skip

    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as a, over_http(keyed.url, KEY_B) as b:
            llm.queue(Reply(whole_file("test_calc.py", CHEAT)))
            out = await ok(a, "code", files=["test_calc.py"], allow_test_changes=True, **coded)
            assert out["proof"]["tamper"]["counted"] is True, out["proof"]  # as allowed
            llm.queue(Reply(whole_file("calc.py", CALC_RIGHT)))
            out = await ok(a, "code", files=["calc.py"], **coded)
            proof = out["proof"]
            assert out["status"] == "passed" and proof["resolved"], out
            mine = (await ok(a, "repo_grade", **graded))["setup"]
            assert mine["cached"] and mine["key"] == proof["setup"]["key"], (mine, proof)
            theirs = (await ok(b, "repo_grade", **graded))["setup"]
            assert not theirs["cached"] and theirs["key"] != mine["key"], theirs

    try:
        run(body)
    finally:
        shutil.rmtree(repo)


# --- attacks ------------------------------------------------------------------------------------


def test_attack_a_second_key_cannot_see_or_drive_the_first_keys_sessions(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as a, over_http(keyed.url, KEY_B) as b:
            sid = (await ok(a, "session_create"))["id"]
            await ok(a, "session_upload", session_id=sid, path="secret.txt", content="s3cret")
            for tool, extra in (("session_run", {"code": "print(open('secret.txt').read())"}),
                                ("session_download", {"path": "secret.txt"}),
                                ("session_upload", {"path": "secret.txt", "content": "x"}),
                                ("session_close", {})):  # fmt: skip
                res = await b.call_tool(tool, {"session_id": sid, **extra})
                assert res.is_error and "no session" in text(res), (tool, text(res))
                assert "s3cret" not in text(res)
            res = await call(a, "session_run", session_id=sid, code="open('secret.txt').read()")
            assert "s3cret" in text(res)  # the control: its owner still has it, unchanged
            await ok(a, "session_close", session_id=sid)

    run(body)


def test_snapshot_and_fork_branch_a_session_and_stay_the_keys_own(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as a, over_http(keyed.url, KEY_B) as b:
            sid = (await ok(a, "session_create"))["id"]
            await ok(a, "session_run", session_id=sid, code="x = 41\nimport threading\n"
                     "lock = threading.Lock()")  # fmt: skip
            res = await call(a, "session_snapshot", session_id=sid)
            assert not res.is_error and "lock" in text(res)  # what it could not copy, named
            snap = res.structured_content["id"]
            forked = await ok(a, "session_fork", session_id=sid, count=2)
            kids = [s["id"] for s in forked["sessions"]]
            for kid in kids:
                assert "42" in text(await call(a, "session_run", session_id=kid, code="x + 1"))
            restored = (await ok(a, "session_create", snapshot=snap))["id"]
            assert "41" in text(await call(a, "session_run", session_id=restored, code="x"))
            # another key: the session and the snapshot do not exist
            for tool, args in (("session_fork", {"session_id": sid}),
                               ("session_snapshot", {"session_id": sid}),
                               ("session_create", {"snapshot": snap})):  # fmt: skip
                res = await b.call_tool(tool, args)
                assert res.is_error and "no " in text(res), (tool, text(res))
            for done in (sid, *kids, restored):
                await ok(a, "session_close", session_id=done)

    run(body)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip


def test_attack_an_mcp_connection_id_is_useless_with_another_key(keyed: Server) -> None:
    init = INIT
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=keyed.url, timeout=30) as c:
        r = c.post("/mcp", json=init, headers=accept)
        assert r.status_code == 401  # no key: nothing
        r = c.post("/mcp", json=init, headers={**accept, "Authorization": f"Bearer {KEY_A}"})
        assert r.status_code == 200, r.text
        conn = r.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        as_b = {**accept, "Authorization": f"Bearer {KEY_B}", "mcp-session-id": conn,
                "mcp-protocol-version": "2025-11-25"}  # fmt: skip
        assert c.post("/mcp", json=ping, headers=as_b).status_code == 404
        as_a = {**as_b, "Authorization": f"Bearer {KEY_A}"}
        assert c.post("/mcp", json=ping, headers=as_a).status_code == 200  # the control
        c.delete("/mcp", headers=as_a)


def test_attack_no_repository_outside_coder_roots(keyed: Server, roots: Path) -> None:
    outside = Path(tempfile.mkdtemp(prefix="sandlot-mcp-outside-"))
    inside = make_repo(roots, "inside")
    link = roots / "link-out"
    link.symlink_to(outside)
    try:
        (outside / "test_x.py").write_text("def test_x():\n    assert True\n")

        async def body() -> None:
            async with over_http(keyed.url, KEY_A) as s:
                for repo in (str(outside), str(link), f"{inside}/../../..", "/"):
                    for tool, more in (("repo_test", {}), ("code", {"message": "x"}),
                                       ("repo_grade", {"base": "main"})):  # fmt: skip
                        res = await s.call_tool(tool, {"repo": repo, **more})
                        assert res.is_error and "outside" in text(res), (tool, repo, text(res))
                seen: list[str] = []

                async def progress(done: float, total: float | None, message: str | None) -> None:
                    seen.append(message or "")

                res = await s.call_tool("repo_test", {"repo": str(inside), "cmd": "pytest -q"},
                                        progress_callback=progress)  # fmt: skip
                said = text(res)  # the control: inside, the tests run (and fail: add subtracts)
                assert res.structured_content["passed"] is False and "1 failed" in said, said
                assert seen and seen[0].startswith("tests running"), seen

        run(body)
    finally:
        link.unlink()
        shutil.rmtree(outside)
        shutil.rmtree(inside)


def test_attack_huge_arguments_and_deep_json_are_refused_cleanly(keyed: Server) -> None:
    accept = {"Accept": "application/json, text/event-stream",
              "Authorization": f"Bearer {KEY_A}"}  # fmt: skip
    with httpx.Client(base_url=keyed.url, timeout=60) as c:
        huge = (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code",'
            b'"arguments":{"language":"python","code":"' + b"x" * (200 << 20) + b'"}}}'
        )
        r = c.post("/mcp", content=huge, headers={**accept, "Content-Type": "application/json"})
        assert r.status_code == 413, r.text[:300]
        deep = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + b"[" * 100_000 \
               + b"]" * 100_000 + b"}"  # fmt: skip
        r = c.post("/mcp", content=deep, headers={**accept, "Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
        # Deep arguments in a call on a live connection: a tool error, and the server goes on.
        r = c.post("/mcp", json=INIT, headers=accept)
        live = {
            **accept,
            "mcp-session-id": r.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
            "Content-Type": "application/json",
        }
        c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
               headers=live)  # fmt: skip
        args = b'{"language":"python","code":"1","files":' + b'{"a":' * 5000 + b"1" \
            + b"}" * 5000 + b"}"  # fmt: skip
        deep_call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":' \
            b'"run_code","arguments":' + args + b"}}"  # fmt: skip
        r = c.post("/mcp", content=deep_call, headers=live)
        assert r.status_code < 500 and "Traceback" not in r.text, r.text[:300]
        assert '"isError":true' in r.text.replace(" ", "") or r.status_code >= 400, r.text[:300]
        c.delete("/mcp", headers=live)

    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            res = await call(s, "run_code", language="python", code="x" * (20 << 20))
            assert res.is_error and "bytes" in text(res)
            assert "42" in text(await call(s, "run_code", language="python", code="print(42)"))

    run(body)
    assert keyed.alive()


def test_attack_a_client_that_vanishes_mid_run_leaves_nothing_behind(keyed: Server) -> None:
    """It opens two sessions, starts an endless cell and goes away without a word (no DELETE):
    once its connection idles out (mcp_idle_timeout) its sessions and their boxes are gone."""

    async def body() -> None:
        async with over_http(keyed.url, KEY_A, terminate_on_close=False) as s:
            await ok(s, "session_create", language="bash")
            sid = (await ok(s, "session_create"))["id"]
            with anyio.move_on_after(2):
                await s.call_tool("session_run", {"session_id": sid, "code": "while 1: pass"})

    before = len(session_boxes())
    run(body)
    assert wait_until(lambda: session_boxes() == [], timeout=60), session_boxes()
    assert before >= 0


def test_an_orderly_goodbye_ends_the_sessions_at_once(keyed: Server) -> None:
    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s:
            await ok(s, "session_create")
            assert session_boxes()

    run(body)
    assert wait_until(lambda: session_boxes() == [], timeout=15), session_boxes()


# --- stdio --------------------------------------------------------------------------------------


def stdio_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDLOT_")}
    env.pop("SANDBOX_FUSION_URL", None)
    return {**env, **extra}


def test_stdio_bridges_to_a_server_with_its_key(keyed: Server) -> None:
    async def body() -> None:
        env = stdio_env(SANDBOX_FUSION_URL=keyed.url, SANDLOT_API_KEY=KEY_B)
        async with over_stdio(env=env) as s:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS  # over the bridge too
            out = await ok(s, "run_code", language="python", code="print(sum(range(10)))")
            assert out["stdout"] == "45\n"
            sid = (await ok(s, "session_create"))["id"]
            await ok(s, "session_run", session_id=sid, code="z = 3")
            assert "9" in text(await call(s, "session_run", session_id=sid, code="z * z"))

    run(body)
    assert wait_until(lambda: session_boxes() == [], timeout=15)  # ended with the bridge


def test_stdio_without_a_key_is_refused_by_the_server_which_says_why(keyed: Server) -> None:
    said: list[str] = []

    async def body() -> None:
        try:
            async with over_stdio("--server", keyed.url, env=stdio_env()):
                pass
        except BaseException as exc:  # the SDK's error, perhaps in a group
            said.append(repr(exc))

    run(body)
    assert said and "needs an API key" in said[0], said


def test_stdio_serves_a_local_jail_as_root() -> None:
    state = f"{STATE_ROOT}/mcp-stdio"
    env = stdio_env(SANDLOT_STATE_DIR=state, SANDLOT_UID_BASE=str(UID_BASE + 8),
                    SANDLOT_SLOTS="1", SANDLOT_SESSION_POOL="0",
                    SANDLOT_SESSION_UID_BASE=str(SESSION_UIDS.start + 100))  # fmt: skip

    async def body() -> None:
        async with over_stdio(env=env) as s:
            out = await ok(s, "run_code", language="python", code="print('local')")
            assert out["stdout"] == "local\n"
            sid = (await ok(s, "session_create"))["id"]
            await ok(s, "session_run", session_id=sid, code="w = 'kept'")
            assert "kept" in text(await call(s, "session_run", session_id=sid, code="w"))

    run(body)
    assert wait_until(lambda: session_boxes() == [] and sandlot_processes() == [], timeout=20)
    assert not Path(state).exists() or not any(Path(state).iterdir())


def test_stdio_neither_root_nor_server_says_how() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "sandlot", "mcp"], cwd=ROOT, env=stdio_env(),
        capture_output=True, text=True, timeout=60, user=65534, group=65534,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert "as root" in done.stderr and "--server" in done.stderr
    assert "SANDBOX_FUSION_URL" in done.stderr and "Traceback" not in done.stderr


# --- an agent loop, its model the fake LLM --------------------------------------------------------


@pytest.mark.slow
def test_an_agent_loop_routes_runs_opens_a_session_tests_and_gets_a_proven_fix(
    keyed: Server, roots: Path, llm
) -> None:
    """A minimal agent: it asks the model (the fake OpenAI-compatible server) for its next
    step, calls the tool the model names over MCP, and feeds the result back; Aider, called by
    the `code` tool, asks the same model for its edit."""
    from sandlot.coder.install import AiderMissing, find_aider
    from tests.fake_llm import Reply, whole_file

    try:
        find_aider()
    except AiderMissing:
        pytest.skip("aider not installed (sandlot setup --with-aider)")
    repo = make_repo(roots, "agent")

    def step(tool: str, **arguments: object) -> Reply:
        return Reply(json.dumps({"tool": tool, "arguments": arguments}))

    llm.queue(
        step("route", request="fix the failing test in my repo", repo=str(repo)),
        step("run_code", language="python", code="print(2 + 3)"),
        step("session_create"),
        step("repo_test", repo=str(repo), cmd="python -m pytest -q"),
        step("code", repo=str(repo), message="make add() add", files=["calc.py"],
             test_cmd="python -m pytest -q"),
        Reply(whole_file("calc.py", CALC_RIGHT)),  # Aider's turn
        Reply(json.dumps({"done": "fixed and proven"})),
    )  # fmt: skip
    transcript: list[dict[str, object]] = []

    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s, httpx.AsyncClient(timeout=300) as model:
            messages = [{"role": "user", "content": "the tests in my repo fail; fix them"}]
            for _ in range(10):
                r = await model.post(llm.base + "/chat/completions", json={
                    "model": "fake-agent", "messages": messages})  # fmt: skip
                decision = json.loads(r.json()["choices"][0]["message"]["content"])
                if "done" in decision:
                    return
                res = await s.call_tool(decision["tool"], decision["arguments"])
                transcript.append(
                    {
                        "tool": decision["tool"],
                        "error": res.is_error,
                        "out": res.structured_content,
                        "text": text(res),
                    }
                )
                messages += [{"role": "assistant", "content": json.dumps(decision)},
                             {"role": "user", "content": text(res)}]  # fmt: skip

    run(body)
    by_tool = {t["tool"]: t for t in transcript}
    assert [t["tool"] for t in transcript] == [
        "route", "run_code", "session_create", "repo_test", "code"]  # fmt: skip
    assert not any(t["error"] for t in transcript), transcript
    assert by_tool["route"]["out"]["route"] == "coder"
    assert by_tool["run_code"]["out"]["stdout"] == "5\n"
    assert by_tool["repo_test"]["out"]["passed"] is False
    fixed = by_tool["code"]["out"]
    assert fixed["status"] == "passed", by_tool["code"]["text"]
    assert fixed["attempts"][-1]["tests"]["passed"] is True  # proven by its tests in the box
    assert git(repo, "show", f"{fixed['branch']}:calc.py") + "\n" == CALC_RIGHT
    assert (repo / "calc.py").read_text() == CALC_BUGGY  # on a branch; the checkout untouched
    shutil.rmtree(repo)


@pytest.mark.slow
def test_a_cancelled_code_task_leaves_nothing_running(keyed: Server, roots: Path, llm) -> None:
    """The model takes its time; the client cancels: Aider is killed at once, and neither a
    worktree nor a branch is left in the repository; the server takes the next task."""
    from sandlot.coder.install import AiderMissing, find_aider
    from tests.fake_llm import Reply, whole_file

    try:
        find_aider()
    except AiderMissing:
        pytest.skip("aider not installed (sandlot setup --with-aider)")
    repo = make_repo(roots, "cancelled")
    llm.queue(Reply(whole_file("calc.py", CALC_RIGHT), delay=40))

    def aiders() -> list[str]:
        out = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
        return [line for line in out.splitlines() if "aider" in line and "--message-file" in line]

    asked = len(llm.requests)

    async def body() -> None:
        async with over_http(keyed.url, KEY_A) as s, anyio.create_task_group() as tasks:

            async def cancel_once_the_model_is_asked() -> None:
                with anyio.move_on_after(120):
                    while len(llm.requests) == asked:
                        await anyio.sleep(0.2)
                tasks.cancel_scope.cancel()

            tasks.start_soon(cancel_once_the_model_is_asked)
            arguments = {"repo": str(repo), "message": "make add() add", "files": ["calc.py"],
                         "test_cmd": "pytest -q"}  # fmt: skip
            await s.call_tool("code", arguments)

    run(body)
    assert len(llm.requests) > asked  # Aider was at work, waiting for the model
    assert wait_until(lambda: aiders() == [], timeout=20), aiders()
    assert wait_until(lambda: "sandlot/coder" not in git(repo, "branch", "-a"), timeout=20)
    assert git(repo, "worktree", "list").count("\n") == 0  # the repository's own only
    assert (repo / "calc.py").read_text() == CALC_BUGGY
    shutil.rmtree(repo)


# --- gpt-oss's python tool, as vLLM's --tool-server calls it -------------------------------------


def test_gpt_oss_python_tool_keeps_a_live_session_per_conversation(keyed: Server) -> None:
    """A stand-in for vLLM's MCPToolServer: the SSE transport at `<tool-server>/sse`, the tool
    namespace from the server's name, a new connection per request of a conversation carrying
    `x-session-id`, `call_tool("python", {"code": ...})`, the first text block read back."""
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    tool_server = keyed.url.removeprefix("http://") + "/python"  # --tool-server HOST:PORT/python

    async def turn(conversation: str, code: str, key: str = KEY_A) -> str:
        headers = {"x-session-id": conversation, "Authorization": f"Bearer {key}"}
        async with sse_client(f"http://{tool_server}/sse", headers=headers) as streams, \
                ClientSession(*streams) as session:  # fmt: skip
            init = await session.initialize()
            assert init.server_info.name == "python" and "stateful" in init.instructions
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == ["python"]
            result = await session.call_tool("python", {"code": code})
            return result.content[0].text

    async def body() -> None:
        assert await turn("conv-1", "x = 40\nprint('set')") == "set\n"
        assert await turn("conv-1", "x + 2") == "42\n"  # a new connection, the same kernel
        assert "NameError" in await turn("conv-2", "x")  # another conversation: its own
        assert "NameError" in await turn("conv-1", "x", key=KEY_B)  # another key: its own
        said = await turn("conv-1", "1/0")
        assert "ZeroDivisionError" in said

    run(body)
    r = httpx.get(keyed.url + "/python/sse", timeout=10)
    assert r.status_code == 401  # no key, no tool
