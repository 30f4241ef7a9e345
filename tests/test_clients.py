"""Clients against a real server: the PyPI `sandbox-fusion` client unchanged, and sandlot's own."""

from __future__ import annotations

import asyncio

import pytest
import sandbox_fusion as sf

from sandlot.client import AsyncClient, Client, ServerError

MAPPING = sf.SummaryMapping(
    Success="ok",
    Failed="failed",
    CompileFailed="compile_failed",
    CompileTimeout="compile_timeout",
    RunFailed="run_failed",
    RunTimeout="run_timeout",
)
CASES = [  # (code, language, run_timeout, expected summary)
    ('print("hi")', "python", 10, "ok"),
    ("raise SystemExit(1)", "python", 10, "run_failed"),
    ("import time; time.sleep(10)", "python", 0.5, "run_timeout"),
    ('#include <cstdio>\nint main(){puts("hi");}', "cpp", 10, "ok"),
    ("int main( {", "cpp", 10, "compile_failed"),
    ("int main(){for(;;);}", "cpp", 0.5, "run_timeout"),
]


@pytest.mark.parametrize("code,language,timeout,summary", CASES)
def test_sandbox_fusion_client_sync(server, code, language, timeout, summary):
    request = sf.RunCodeRequest(code=code, language=language, run_timeout=timeout)
    result = sf.run_code(request, endpoint=server.url, max_attempts=1)
    assert sf.summary_run_code_result(result, MAPPING) == summary
    if summary == "ok":
        assert result.run_result.stdout == "hi\n"


def test_sandbox_fusion_client_async_stdin_and_files(server):
    request = sf.RunCodeRequest(
        code="print(input() + open('f.txt').read())",
        language="python",
        stdin="a",
        files={"f.txt": "Yg=="},
        fetch_files=["f.txt"],
    )
    result = asyncio.run(sf.run_code_async(request, endpoint=server.url, max_attempts=1))
    assert result.status == sf.RunStatus.Success
    assert result.run_result.stdout == "ab\n"
    assert result.files == {"f.txt": "Yg=="}
    assert sf.summary_run_code_result(result, MAPPING) == "ok"


def test_sandbox_fusion_client_concurrent(server):
    sf.set_endpoint(server.url)
    requests = [sf.RunCodeRequest(code=f"print({i})", language="python") for i in range(6)]
    results = sf.run_concurrent(sf.run_code, args=[[r] for r in requests], concurrency=4)
    assert [r.run_result.stdout for r in results] == [f"{i}\n" for i in range(6)]


def test_sandlot_client_sync(server):
    with Client(server.url) as sb:
        assert sb.ping()
        out = sb.run_code("print(open('d.txt').read())", "python", files={"d.txt": "data"})
        assert out.status == "Success" and out.stdout == "data\n"
        assert sb.health()["status"] == "ok"
        assert any(row["name"] == "python" for row in sb.languages())
        with pytest.raises(ServerError) as err:
            sb.run_code("x", "cobol")
        assert err.value.status_code == 400 and "supports" in err.value.detail


def test_sandlot_client_async(server):
    async def go() -> list[str]:
        async with AsyncClient(server.url) as sb:
            assert await sb.ping()
            results = await asyncio.gather(
                *(sb.run_code(f"console.log({i})", "js") for i in range(4))
            )
            return [r.stdout or "" for r in results]

    assert asyncio.run(go()) == ["0\n", "1\n", "2\n", "3\n"]
