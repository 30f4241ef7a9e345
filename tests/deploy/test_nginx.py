"""The shipped nginx config (deploy/nginx.conf) with Debian's nginx on loopback in front of two
sandlot replicas: load spread over both, /health through it, a dead replica failed over."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, Server, free_port, running_server

pytestmark = pytest.mark.root

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CONF = ROOT / "deploy" / "nginx.conf"


def config_for(upstreams: list[int], port: int) -> str:
    """The shipped file with its upstream ports and listening port replaced, nothing else."""
    text = CONF.read_text()
    lines = "".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;\n"
                    for p in upstreams)  # fmt: skip
    text, n = re.subn(r"(        server 127\.0\.0\.1:\d+ [^\n]*\n)+", lines, text)
    assert n == 1
    return text.replace("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{port};")


@contextlib.contextmanager
def nginx(config: str, tmp: Path) -> Iterator[str]:
    tmp.chmod(0o755)  # nginx's workers drop to an unprivileged user and buffer bodies here
    (tmp / "nginx.conf").write_text(config)
    port = int(re.search(r"listen 127\.0\.0\.1:(\d+);", config).group(1))  # type: ignore[union-attr]
    proc = subprocess.Popen([NGINX, "-p", str(tmp), "-c", str(tmp / "nginx.conf"),
                             "-g", "daemon off;"], stderr=subprocess.PIPE)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(url + "/nginx_status", timeout=2)
                break
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


def client_logged(replicas: list[Server], request_id: str) -> str:
    """The client address the replica that served a request logged for it."""
    for _ in range(50):
        for srv in replicas:
            srv.log.seek(0)
            for line in srv.log.read().decode().splitlines():
                entry = json.loads(line)
                if entry["logger"] == "sandlot.access" and entry["request_id"] == request_id:
                    return entry["client"]
        time.sleep(0.1)
    raise AssertionError(f"no replica logged {request_id}")


def test_shipped_config_is_valid(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    r = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(CONF)],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr


def test_two_replicas_behind_nginx(tmp_path: Path) -> None:
    def env(pod: str) -> dict[str, str]:  # what the config says each replica sets
        return {"SANDLOT_FORWARDED_ALLOW_IPS": "127.0.0.1", "MY_POD_NAME": pod}

    with running_server("--slots", "1", env=env("replica-a")) as a, \
            running_server("--slots", "1", env=env("replica-b")) as b:  # fmt: skip
        config = config_for([a.port, b.port], free_port())
        with nginx(config, tmp_path) as url, httpx.Client(base_url=url, timeout=120) as c:
            assert c.get("/health").json()["status"] == "ok"
            # A client's address reaches the replica from nginx's header, never from its own.
            elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")
            with httpx.Client(base_url=url, timeout=120, transport=elsewhere) as remote:
                headers = {"X-Forwarded-For": "203.0.113.9", "X-Request-ID": "through-nginx"}
                assert remote.get("/languages", headers=headers).status_code == 200
            assert client_logged([a, b], "through-nginx") == "127.0.0.2"
            assert c.get("/nginx_status").status_code == 200

            def run(n: int) -> httpx.Response:
                return c.post("/run_code", json={"code": f"print({n})", "language": "python"})

            with ThreadPoolExecutor(6) as pool:
                answers = list(pool.map(run, range(24)))
            assert [r.status_code for r in answers] == [200] * 24
            assert [r.json()["stdout"] for r in answers] == [f"{n}\n" for n in range(24)]
            pods = Counter(r.json()["executor_pod_name"] for r in answers)
            assert set(pods) == {"replica-a", "replica-b"}

            items = [
                {
                    "code": "print(input())",
                    "test_cases": [{"stdin": str(n), "expected_stdout": str(n)} for n in range(5)],
                }
            ]
            r = c.post("/run_batch", json={"items": items})
            assert r.status_code == 200 and r.json()["results"][0]["passed"]

            a.stop()  # a replica goes away: its share fails over to the other
            after = [run(n) for n in range(6)]
            assert [r.status_code for r in after] == [200] * 6
            assert {r.json()["executor_pod_name"] for r in after} == {"replica-b"}
