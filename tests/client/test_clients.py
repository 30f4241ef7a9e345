"""Clients against a real server: the PyPI `sandbox-fusion` client unchanged, and sandlot's own."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading

import pytest
import sandbox_fusion as sf

from sandlot.client import AsyncClient, Client, ServerError

pytestmark = pytest.mark.root

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


class CuttableProxy:
    """A TCP relay to a real server, standing for a second server that can go down mid-run:
    `cut()` resets every connection and refuses new ones, as a crashed host would."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.is_cut = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return  # cut
            up = socket.create_connection(self.target)
            with self.lock:
                if self.is_cut:  # accepted as it was cut: an open relay would outlive the test
                    down.close()
                    up.close()
                    return
                self.conns += [down, up]
            for a, b in ((down, up), (up, down)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)

    def cut(self) -> None:
        with self.lock:
            self.is_cut = True
        # A thread blocked in accept() keeps the socket listening after close(): shutdown
        # wakes it, so nothing connects after the cut.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for s in self.conns:
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.shutdown(socket.SHUT_RDWR)  # wakes the relay threads; the client sees it gone
                s.close()


def test_sandlot_client_drains_a_server_that_goes_down_mid_run(server):
    """Two URLs, one of which dies while runs are in flight on it: every run still succeeds,
    retried on the other, and the dead one gets no new requests."""
    proxy = CuttableProxy(server.url)

    async def go() -> list[str]:
        async with AsyncClient([proxy.url, server.url], cooldown=60, timeout=60) as sb:
            runs = [
                asyncio.ensure_future(
                    sb.run_code(f"import time; time.sleep(1); print({i})", "python")
                )
                for i in range(6)
            ]
            await asyncio.sleep(0.5)  # every run is in flight, half of them through the proxy
            assert sum(sb.servers.outstanding().values()) == 6
            assert sb.servers.outstanding()[proxy.url] == 3
            proxy.cut()
            out = [(r.stdout or "") for r in await asyncio.gather(*runs)]
            assert not sb.servers.is_up(proxy.url)
            more = await asyncio.gather(
                *(sb.run_code("print('after')", "python") for _ in range(4))
            )
            assert [r.stdout for r in more] == ["after\n"] * 4
            return out

    assert asyncio.run(go()) == [f"{i}\n" for i in range(6)]
