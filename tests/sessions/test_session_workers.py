"""Sessions on a server of two worker processes (`--workers 2`): each worker holds its share of
the sessions and of the live-box uids, and a session is reachable from any connection, whichever
worker the kernel hands it to (the others forward to its owner). Also: whose a request is (its
key's tenant, its client address), across workers and behind a proxy."""

from __future__ import annotations

import contextlib
import json
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.test_lifecycle import until, worker_pids
from tests.api.test_logs import access, log_lines
from tests.conftest import SESSION_UID_BASE, Server, running_server

pytestmark = pytest.mark.root
TIMEOUT = 120  # seconds: a request that hangs fails the test instead


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    # Two sessions a worker: four creates fill both, wherever their connections land.
    env = {"SANDLOT_SESSION_MAX": "4"}
    with running_server("--slots", "2", "--workers", "2", env=env) as srv:
        yield srv


def fresh(srv: Server, method: str, path: str, **kwargs) -> httpx.Response:
    """A request on a new connection: the kernel may give it to either worker."""
    return httpx.request(method, srv.url + path, timeout=TIMEOUT, **kwargs)


def create(srv: Server, language: str = "python") -> str:
    r = fresh(srv, "POST", "/sessions", json={"language": language})
    assert r.status_code == 200, r.text
    return r.json()["id"]


def execute(srv: Server, sid: str, code: str) -> dict:
    r = fresh(srv, "POST", f"/sessions/{sid}/execute", json={"code": code})
    assert r.status_code == 200, r.text
    return r.json()


@contextlib.contextmanager
def on_worker(
    srv: Server, index: int, headers: dict[str, str] | None = None
) -> Iterator[httpx.Client]:
    """A keep-alive connection the kernel gave to worker `index` (it stays there)."""
    for _ in range(200):
        with httpx.Client(base_url=srv.url, timeout=TIMEOUT, headers=headers) as c:
            if c.get("/health").json()["worker"]["index"] == index:
                yield c
                return
    raise AssertionError(f"no connection reached worker {index}")


@pytest.fixture
def four(server: Server) -> Iterator[list[str]]:
    sids = [create(server) for _ in range(4)]
    yield sids
    for sid in sids:
        fresh(server, "DELETE", f"/sessions/{sid}")


def test_sessions_made_on_many_connections_work_from_any(server, four) -> None:
    assert sorted(sid[0] for sid in four) == ["0", "0", "1", "1"]  # both workers hold two
    full = fresh(server, "POST", "/sessions", json={"language": "python"})
    assert full.status_code == 429  # the server's four, not a worker's two
    assert (
        "this server holds its maximum (each of its 2 workers its share)" in full.json()["detail"]
    )
    for _ in range(4):  # /health tells a worker's own share, and says so
        status = fresh(server, "GET", "/health").json()["sessions"]
        assert (status["scope"], status["max"], status["live"]) == ("worker", 2, 2)
    for n, sid in enumerate(four):
        assert execute(server, sid, f"x = {n}")["status"] == "ok"
    for _ in range(3):  # every session, from new connections: its own state
        for n, sid in enumerate(four):
            assert execute(server, sid, "x")["outputs"][0]["data"]["text/plain"] == str(n)
    for index in (0, 1):  # and from a connection of each worker, so half of them forwarded
        with on_worker(server, index) as c:
            for n, sid in enumerate(four):
                r = c.post(f"/sessions/{sid}/execute", json={"code": "x"})
                assert r.json()["outputs"][0]["data"]["text/plain"] == str(n)
                assert [i["id"] for i in c.get("/sessions").json()].count(sid) == 1
                body = {"code": "print(x)", "language": "python", "session_id": sid}
                assert c.post("/run_code", json=body).json()["run_result"]["stdout"] == f"{n}\n"
    listed = [fresh(server, "GET", "/sessions").json() for _ in range(6)]
    assert all(sorted(i["id"] for i in got) == sorted(four) for got in listed)
    for sid in four:
        assert fresh(server, "GET", f"/sessions/{sid}").json()["id"] == sid
        body = {"code": "print(x + 1)", "language": "python", "session_id": sid}
        assert fresh(server, "POST", "/run_code", json=body).json()["run_result"]["stdout"] != ""
        put = fresh(server, "PUT", f"/sessions/{sid}/files/a.txt", content=sid.encode())
        assert put.status_code == 200
        assert fresh(server, "GET", f"/sessions/{sid}/files/a.txt").content == sid.encode()


@pytest.mark.parametrize("via", [0, 1])
def test_lines_of_another_workers_session_stream_through(server, four, via) -> None:
    """Each line is relayed as it comes: the second waits for a file written after the first
    arrived. A client that goes away mid-stream interrupts the execution in the owner."""
    sid = next(s for s in four if not s.startswith(f"{via}-"))
    code = (
        "import os, time\nprint('first', flush=True)\n"
        "while not os.path.exists('go'): time.sleep(0.02)\nprint('second')"
    )
    with on_worker(server, via) as c:
        with c.stream("POST", f"/sessions/{sid}/execute", json={"code": code, "stream": True}) as r:
            assert r.headers["content-type"].startswith("application/x-ndjson")
            lines = r.iter_lines()
            assert json.loads(next(lines)) == {"type": "stdout", "text": "first\n"}
            fresh(server, "PUT", f"/sessions/{sid}/files/go", content=b"")
            events = [json.loads(line) for line in lines if line]
        assert events[0] == {"type": "stdout", "text": "second\n"}
        assert events[-1]["type"] == "end" and events[-1]["session_id"] == sid
        forever = "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)"
        body = {"code": forever, "stream": True}
        with c.stream("POST", f"/sessions/{sid}/execute", json=body) as r:
            next(r.iter_lines())
    until(lambda: fresh(server, "GET", f"/sessions/{sid}").json()["status"] == "idle",
          "the abandoned execution was interrupted")  # fmt: skip


def test_attack_sessions_in_two_workers_never_share_a_uid(server, four) -> None:
    """Each session learns its uid; one looks for the other's processes and signals every
    process its uid may (kill -1); the other goes on untouched."""
    a = next(s for s in four if s.startswith("0-"))
    b = next(s for s in four if s.startswith("1-"))
    uid = "import os\nos.getuid()"
    ua, ub = (int(execute(server, s, uid)["outputs"][0]["data"]["text/plain"]) for s in (a, b))
    # Each worker's range (2 sessions + 2 notebooks a worker here), one after the other.
    assert ua in range(SESSION_UID_BASE, SESSION_UID_BASE + 4)
    assert ub in range(SESSION_UID_BASE + 4, SESSION_UID_BASE + 8)
    ps = subprocess.run(["ps", "-eo", "uid="], capture_output=True, text=True).stdout.split()
    assert str(ua) in ps and str(ub) in ps  # each box runs as its own uid on the host too
    execute(server, b, "open('secret', 'w').write('b only')\nimport subprocess\n"
                       "p = subprocess.Popen(['sleep', '300'])")  # fmt: skip
    look = (
        f"import os\nprint(sum(os.stat('/proc/' + p).st_uid == {ub} for p in os.listdir('/proc')"
        " if p.isdigit()))"
    )
    assert execute(server, a, look)["stdout"] == "0\n"  # no process of b's uid is visible
    # kill -1: every process a's uid may signal, its own kernel among them (a ends with it).
    kill = "import subprocess\nsubprocess.run(['kill', '-9', '-1'])"
    fresh(server, "POST", f"/sessions/{a}/execute", json={"code": kill})
    after = execute(server, b, "p.poll(), open('secret').read()")
    assert after["outputs"][0]["data"]["text/plain"] == "(None, 'b only')"


def test_a_forged_client_address_is_not_believed(server, four) -> None:
    """Only a worker (holding the server's secret) may say for which client it asks; and only
    root reaches the workers' sockets."""
    peers = Path(server.state_dir) / f"{server.proc.pid}-peers"
    info = peers.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700)
    assert sorted(p.name for p in peers.iterdir()) == ["0.sock", "1.sock"]
    headers = {"x-sandlot-client": "203.0.113.9", "x-sandlot-peer": "guess"}
    got = fresh(server, "GET", "/sessions", headers=headers).json()
    assert sorted(i["id"] for i in got) == sorted(four)  # still ours: the header was ignored
    # Forwarded (so logged by both workers) or not, the log has the client's own address.
    with on_worker(server, 0) as c:
        for n, sid in enumerate(four):
            c.get(f"/sessions/{sid}", headers={**headers, "X-Request-ID": f"forged-{n}"})

    def logged() -> list[dict]:
        return [x for x in log_lines(server) if x["logger"] == "sandlot.access"
                and x["request_id"].startswith("forged-")]  # fmt: skip

    until(lambda: len(logged()) == 6, "every access line written")  # a line follows its answer
    assert sorted(x["worker"] for x in logged()) == [0, 0, 0, 0, 1, 1]
    assert {x["client"] for x in logged()} == {"127.0.0.1"}
    made_up = ["01-" + four[0][2:], "7-" + four[0][2:], four[0].upper(), "1-" + "0" * 32]
    for sid in made_up:  # not an id a worker gives out: unknown, wherever it lands
        assert fresh(server, "GET", f"/sessions/{sid}").status_code == 404


def test_a_killed_worker_ends_its_sessions_with_410(server) -> None:
    keep = [create(server) for _ in range(4)]
    mine = {sid[0]: sid for sid in keep}
    pids = worker_pids(server)
    busy: list[object] = []

    def stream() -> None:  # an execution of the session that is killed with its worker
        body = {"code": "import time\ntime.sleep(600)", "stream": True}
        try:
            with httpx.stream("POST", f"{server.url}/sessions/{mine['1']}/execute", json=body,
                              timeout=TIMEOUT) as r:  # fmt: skip
                busy.append(list(r.iter_lines()))
        except httpx.HTTPError as exc:
            busy.append(exc)

    t = threading.Thread(target=stream)
    t.start()
    until(lambda: fresh(server, "GET", f"/sessions/{mine['1']}").json().get("status") == "busy",
          "the execution started")  # fmt: skip
    subprocess.run(["kill", "-9", str(pids[1])], check=True)
    t.join(TIMEOUT)
    assert not t.is_alive() and busy  # the stream ended, it did not hang
    for _ in range(6):  # from either worker, dying or restarted: gone, and why
        r = fresh(server, "GET", f"/sessions/{mine['1']}")
        assert r.status_code == 410, r.text
        assert "server process that held it" in r.json()["detail"]
    until(lambda: worker_pids(server, 10).get(1) not in (None, pids[1]), "worker 1 restarted")
    with on_worker(server, 1) as c:  # the new worker 1 knows its predecessor's ids are gone
        r = c.get(f"/sessions/{mine['1']}")
        assert r.status_code == 410 and "server process that held it" in r.json()["detail"]
    assert execute(server, mine["0"], "1 + 1")["outputs"][0]["data"]["text/plain"] == "2"
    for sid in keep:
        fresh(server, "DELETE", f"/sessions/{sid}")
    again = [create(server) for _ in range(2)]  # the restarted worker makes sessions again
    assert all(execute(server, sid, "2 + 2")["status"] == "ok" for sid in again)
    for sid in again:
        fresh(server, "DELETE", f"/sessions/{sid}")


def test_the_per_client_cap_and_the_tenants_hold_across_workers() -> None:
    """The cap counts a client's sessions in every worker; a request forwarded to the worker
    that holds a session carries its key, so another key's is not found there either."""
    keys = ["a-" + "1" * 30, "b-" + "2" * 30]
    env = {"SANDLOT_SESSION_MAX": "4", "SANDLOT_SESSION_PER_CLIENT": "2",
           "SANDLOT_API_KEYS": ",".join(keys)}  # fmt: skip
    a, b = ({"Authorization": f"Bearer {k}"} for k in keys)
    with running_server("--slots", "2", "--workers", "2", env=env) as srv:
        sids = []
        for index in (0, 1):  # one in each worker
            with on_worker(srv, index, a) as c:
                sids.append(c.post("/sessions", json={"language": "bash"}).json()["id"])
        assert sorted(sid[0] for sid in sids) == ["0", "1"]
        for index in (0, 1):
            with on_worker(srv, index, a) as c:
                r = c.post("/sessions", json={"language": "bash"})
                assert r.status_code == 429 and "this client" in r.json()["detail"]
                assert {s["id"] for s in c.get("/sessions").json()} == set(sids)
            with on_worker(srv, index, b) as c:  # another key: its own client, and blind to a's
                assert c.get("/sessions").json() == []
                for sid in sids:  # from each worker, the session in it and the other's
                    for method, path in (("GET", ""), ("POST", "/interrupt"), ("DELETE", "")):
                        r = c.request(method, f"/sessions/{sid}{path}")
                        assert r.status_code == 404, (index, sid, method, r.text)
                made = c.post("/sessions", json={"language": "bash"})
                assert made.status_code == 200, made.text
                assert c.delete(f"/sessions/{made.json()['id']}").status_code == 200
        for sid in sids:
            assert fresh(srv, "DELETE", f"/sessions/{sid}", headers=a).status_code == 200


def test_forwarded_for_is_believed_only_from_a_named_proxy():
    """The control of test_security_sessions' forged headers: a peer in `forwarded_allow_ips`
    (127.0.0.1 here, as nginx in front would be) is believed, for the cap, the listing and the
    log; a peer outside it is not. (A server of its own: the other module's keeps a kernel.)"""
    env = {"SANDLOT_FORWARDED_ALLOW_IPS": "127.0.0.1", "SANDLOT_SESSION_PER_CLIENT": "1"}
    elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")
    with running_server("--slots", "1", env=env) as srv, \
            httpx.Client(base_url=srv.url, timeout=300) as proxy, \
            httpx.Client(base_url=srv.url, timeout=300, transport=elsewhere) as direct:  # fmt: skip
        seven, eight = ({"X-Forwarded-For": f"203.0.113.{n}"} for n in (7, 8))
        a = proxy.post("/sessions", json={"language": "bash"},
                       headers={**seven, "X-Request-ID": "via-proxy"})  # fmt: skip
        b = proxy.post("/sessions", json={"language": "bash"}, headers=eight)
        assert a.status_code == b.status_code == 200, (a.text, b.text)
        assert access(srv, "via-proxy")["client"] == "203.0.113.7"
        again = proxy.post("/sessions", json={"language": "bash"}, headers=seven)
        assert again.status_code == 429, again.text
        assert [s["id"] for s in proxy.get("/sessions", headers=seven).json()] == [a.json()["id"]]
        assert [s["id"] for s in proxy.get("/sessions", headers=eight).json()] == [b.json()["id"]]
        assert proxy.get("/sessions").json() == []  # the proxy's own address holds none
        # 127.0.0.2 is no proxy of this server's: its header is its own word, not believed.
        assert direct.get("/sessions", headers=seven).json() == []
        direct.post("/run_code", json={"code": "print(1)", "language": "python"},
                    headers={**seven, "X-Request-ID": "not-a-proxy"})  # fmt: skip
        assert access(srv, "not-a-proxy")["client"] == "127.0.0.2"
        for sid, headers in ((a.json()["id"], seven), (b.json()["id"], eight)):
            assert proxy.delete(f"/sessions/{sid}", headers=headers).status_code == 200


def test_a_fork_counts_the_clients_sessions_in_every_worker() -> None:
    """A fork runs in the worker that holds its session, and the cap it is admitted by counts
    the client's sessions in the others too (as a new session's does): no way past it by
    forking where the client holds fewer."""
    key = {"Authorization": "Bearer " + "f" * 32}
    env = {"SANDLOT_SESSION_PER_CLIENT": "2", "SANDLOT_API_KEYS": key["Authorization"][7:]}
    with running_server("--slots", "2", "--workers", "2", env=env) as srv:
        sids = []
        for index in (0, 1):  # one in each worker
            with on_worker(srv, index, key) as c:
                sids.append(c.post("/sessions", json={"language": "bash"}).json()["id"])
        with on_worker(srv, 0, key) as c:
            r = c.post(f"/sessions/{sids[1]}/fork", json={"count": 1})
            assert r.status_code == 429 and "this client" in r.json()["detail"], r.text
            assert len(c.get("/sessions").json()) == 2
            # control: with one of them gone, the fork is made
            assert c.delete(f"/sessions/{sids[0]}").status_code == 200
            r = c.post(f"/sessions/{sids[1]}/fork", json={"count": 1})
            assert r.status_code == 200, r.text
            for sid in [sids[1], *(s["id"] for s in r.json()["sessions"])]:
                assert c.delete(f"/sessions/{sid}").status_code == 200
