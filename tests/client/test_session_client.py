"""sandlot.client's sessions for an agent loop, sync and async in pairs, the verl example, and
`run_jupyter` through the client, against a real server."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from sandlot.client import AsyncClient, Client, ServerError, ToolSessions, feedback
from sandlot.wire.sessions import ExecuteResponse
from tests.conftest import Server, running_server

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    env = {"SANDLOT_SESSION_POOL": "1", "SANDLOT_SESSION_MAX": "3"}
    with running_server("--slots", "1", env=env) as srv:
        yield srv


def test_session_sync(server):
    with Client(server.url) as sb:
        with sb.session("python", files={"in.txt": "given"}) as s:
            assert s.run("x = 20").status == "ok"
            out = s.run("x += 1\nx * 2")
            assert feedback(out) == "42\n"
            assert s.run("print(open('in.txt').read())").stdout == "given\n"
            s.upload("up.bin", b"\x00\x01")
            s.run("open('down.txt', 'w').write(str(len(open('up.bin', 'rb').read())))")
            assert s.download("down.txt") == b"2"
            *outputs, end = s.stream("print('a'); print('b')")
            assert "".join(o["text"] for o in outputs) == "a\nb\n" and end["type"] == "end"
            assert s.info().execution_count == 5
            assert s.interrupt() is False
            s.restart()
            assert "NameError" in feedback(s.run("x"))
        with pytest.raises(ServerError) as gone:
            s.info()
        assert gone.value.status_code == 410


def test_session_async(server):
    async def go() -> None:
        async with AsyncClient(server.url) as sb:
            async with await sb.session("bash") as s:
                await s.run("n=7")
                assert (await s.run("echo $n")).stdout == "7\n"
                await s.upload("f.txt", "text")
                assert await s.download("f.txt") == b"text"
                events = [e async for e in s.stream("echo one; echo two >&2")]
                assert {e["type"] for e in events} == {"stdout", "stderr", "end"}
                assert events[-1]["type"] == "end"
                assert (await s.info()).language == "bash"
                assert await s.interrupt() is False
                await s.restart()
                assert (await s.run("echo ${n:-unset}")).stdout == "unset\n"
            with pytest.raises(ServerError):
                await s.info()

    asyncio.run(go())


def test_feedback_text():
    out = ExecuteResponse(
        session_id="s",
        status="error",
        outputs=[
            {"type": "stdout", "text": "partial\n"},
            {"type": "display_data", "data": {"text/plain": "<Figure>", "image/png": "iVBO"}},
            {
                "type": "error",
                "ename": "ValueError",
                "evalue": "bad",
                "traceback": ["\x1b[31mValueError\x1b[39m: bad"],
            },
        ],
        limit="time",
        kernel_restarted=True,
    )
    text = feedback(out)
    assert text == (
        "partial\n[display: image/png]\nValueError: bad\n[stopped: time limit]\n"
        "[the kernel was restarted: variables are lost]\n"
    )
    long = ExecuteResponse(session_id="s", status="ok",
                           outputs=[{"type": "stdout", "text": "x" * 10000}])  # fmt: skip
    cut = feedback(long, max_chars=100)
    assert len(cut) < 200 and "9900 characters cut" in cut


def test_tool_sessions_one_per_trajectory(server):
    async def go() -> None:
        async with AsyncClient(server.url) as sb:
            tools = ToolSessions(sb, timeout=30)
            await tools.create("a")
            assert await tools.execute("a", "v = 'from a'") == ""
            assert await tools.execute("b", "v = 'from b'") == ""  # made on first use
            assert await tools.execute("a", "v") == "'from a'\n"
            assert await tools.execute("b", "v") == "'from b'\n"
            sid = tools.sessions["a"].id
            await tools.release("a")
            assert httpx.get(f"{server.url}/sessions/{sid}").status_code == 410
            await tools.close()
            assert tools.sessions == {}

    asyncio.run(go())


def test_create_waits_out_a_full_server(server):
    with Client(server.url) as sb:
        held = [sb.session("bash") for _ in range(3)]
        closing = threading.Event()

        def close_one() -> None:
            closing.set()
            held[0].close()

        threading.Timer(1.0, close_one).start()
        with sb.session("bash") as late:  # 429 at first: retried after Retry-After
            assert closing.is_set(), "created while the server was full"
            assert late.run("echo in").stdout == "in\n"
        for s in held:
            s.close()


def test_run_jupyter_through_the_client(server):
    with Client(server.url) as sb:
        out = sb.run_jupyter(["a = 2", "a ** 5"], files={"x.txt": "1"}, fetch_files=["x.txt"])
    assert out.status == "Success" and out.cells[1].display == [{"text/plain": "32"}]
    assert out.files == {"x.txt": "MQ=="}

    async def go():
        async with AsyncClient(server.url) as sb:
            return await sb.run_jupyter(["print('hi')"])

    assert asyncio.run(go()).cells[0].stdout == "hi\n"


@dataclass
class _ToolResponse:
    text: str | None = None


class _BaseTool:
    def __init__(self, config: dict, tool_schema: object) -> None:
        self.config = config
        self.tool_schema = tool_schema


@pytest.fixture
def verl_stub(monkeypatch):
    """verl's BaseTool and ToolResponse, as far as the example uses them (verl is not
    installed here: it needs torch and a GPU stack)."""
    base_tool = types.ModuleType("verl.tools.base_tool")
    base_tool.BaseTool = _BaseTool
    schemas = types.ModuleType("verl.tools.schemas")
    schemas.ToolResponse = _ToolResponse
    modules = {
        "verl": types.ModuleType("verl"),
        "verl.tools": types.ModuleType("verl.tools"),
        "verl.tools.base_tool": base_tool,
        "verl.tools.schemas": schemas,
    }
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)


def test_verl_example_keeps_state_across_turns(server, verl_stub):
    spec = importlib.util.spec_from_file_location("verl_tool", ROOT / "examples" / "verl_tool.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    async def go() -> list[str]:
        tool = example.SandlotSessionTool({"sandlot_url": server.url, "timeout": 20}, None)
        iid, _ = await tool.create()
        seen = []
        for code in ("import math\nr = 2", "math.pi * r ** 2", "undefined"):
            response, _, _ = await tool.execute(iid, {"code": code})
            seen.append(response.text)
        await tool.release(iid)
        await tool.sessions.client.close()
        return seen

    first, second, third = asyncio.run(go())
    assert first == "" and second.startswith("12.566")
    assert "NameError" in third


def test_snapshot_fork_and_restore_sync(server):
    with Client(server.url) as sb, sb.session("python") as s:
        s.run("x = 1\nopen('f.txt', 'w').write('kept')")
        snap = s.snapshot()
        assert snap.holds.names == 1 and snap.holds.not_copied == []
        kids = s.fork(2)
        assert [k.run("x += 1\nx").stdout for k in kids] == ["", ""]
        assert [feedback(k.run("x")) for k in kids] == ["2\n", "2\n"]
        assert feedback(s.run("x")) == "1\n"  # the parent's is its own
        for kid in kids:
            kid.close()
        assert snap.id in [n.id for n in sb.snapshots()]
        with sb.from_snapshot(snap) as restored:
            assert restored.language == "python"
            assert feedback(restored.run("x, open('f.txt').read()")) == "(1, 'kept')\n"
        sb.delete_snapshot(snap)
        assert sb.snapshots() == []
        with pytest.raises(ServerError) as gone:
            sb.from_snapshot(snap.id)
        assert gone.value.status_code == 404


def test_snapshot_fork_and_restore_async_and_tool_sessions(server):
    async def go() -> None:
        async with AsyncClient(server.url) as sb:
            async with await sb.session("bash") as s:
                await s.run("export N=5")
                (kid,) = await s.fork(1)
                assert (await kid.run("echo $N")).stdout == "5\n"
                await kid.close()
                snap = await s.snapshot()
            tools = ToolSessions(sb, language="bash", timeout=30)
            await tools.create("set-up", snapshot=snap)
            assert await tools.execute("set-up", "echo $N") == "5\n"
            await tools.execute("set-up", "export N=6")
            await tools.fork("set-up", ["a", "b"])
            assert [await tools.execute(k, "echo $N") for k in ("a", "b")] == ["6\n", "6\n"]
            await tools.close()
            await sb.delete_snapshot(snap)

    asyncio.run(go())


def test_verl_example_starts_every_trajectory_from_a_snapshot(server, verl_stub):
    spec = importlib.util.spec_from_file_location("verl_tool", ROOT / "examples" / "verl_tool.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    with Client(server.url) as sb, sb.session("python") as setup:
        setup.run("data = [3, 1, 2]")
        snap = setup.snapshot()

    async def go() -> list[str]:
        seen = []
        plain = {"sandlot_url": server.url, "timeout": 20}
        for config, kwargs in (
            ({**plain, "snapshot": snap.id}, {}),  # every trajectory from the tool's config
            (plain, {"create_kwargs": {"snapshot": snap.id}}),  # or from the sample's
            (plain, {}),  # control: neither, a fresh session
        ):
            tool = example.SandlotSessionTool(config, None)
            iid, _ = await tool.create(**kwargs)
            response, _, _ = await tool.execute(iid, {"code": "sorted(data)"})
            seen.append(response.text)
            await tool.release(iid)
            await tool.sessions.client.close()
        return seen

    first, second, control = asyncio.run(go())
    assert first == second == "[1, 2, 3]\n" and "NameError" in control
    with Client(server.url) as sb:
        sb.delete_snapshot(snap)
