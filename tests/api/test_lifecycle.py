"""The server's life: SIGTERM drains and finishes runs in flight, a grace period bounds it, a
kill -9 leaves nothing the next start does not clean, and `--workers N` shares the slots."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from sandlot.api.server import SIGNAL_BURST
from sandlot.jail import placement
from tests.conftest import (
    SESSION_UID_BASE,
    UID_BASE,
    Server,
    assert_nothing_left,
    running_server,
    serve_fails,
)

pytestmark = pytest.mark.root

KEY = "lifecycle-" + "c3" * 12
SLEEP = "import time; time.sleep({}); print('done')"


def post_in_thread(url: str, code: str, **fields) -> tuple[threading.Thread, list]:
    """POST /run_code from a thread; the list gets the response, or the exception."""
    answer: list = []

    def go() -> None:
        try:
            answer.append(
                httpx.post(
                    url + "/run_code",
                    timeout=120,
                    json={"code": code, "language": "python", **fields},
                )
            )
        except httpx.HTTPError as exc:  # fmt: skip
            answer.append(exc)

    t = threading.Thread(target=go)
    t.start()
    return t, answer


def until(check: Callable[[], bool], what: str, tries: int = 200) -> None:
    for _ in range(tries):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def busy(srv: Server) -> bool:
    return httpx.get(srv.url + "/health", timeout=5).json()["busy"] >= 1


@pytest.fixture
def started() -> Iterator[Callable[..., Server]]:
    """Servers the test stops itself; each is checked to have left nothing behind."""
    servers: list[Server] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Server:
        srv = Server(*args, env=env)
        servers.append(srv)
        srv.wait_ready()
        return srv

    yield start
    for srv in servers:
        srv.stop()
        assert_nothing_left(srv)


def test_sigterm_finishes_a_run_in_flight_then_exits(started) -> None:
    srv = started("--slots", "1")
    t, answer = post_in_thread(srv.url, SLEEP.format(1.5))
    until(lambda: busy(srv), "the run holds the slot")
    srv.proc.send_signal(signal.SIGTERM)
    t.join()
    assert answer[0].status_code == 200 and answer[0].json()["stdout"] == "done\n"
    assert srv.proc.wait(60) == 0
    with pytest.raises(httpx.ConnectError):
        httpx.get(srv.url + "/v1/ping")


def test_draining_turns_health_503_while_it_still_answers(started) -> None:
    srv = started("--slots", "1", env={"SANDLOT_DRAIN_SECONDS": "600"})
    srv.proc.send_signal(signal.SIGTERM)
    until(lambda: httpx.get(srv.url + "/health").status_code == 503, "/health says 503")
    health = httpx.get(srv.url + "/health").json()
    assert health["status"] == "draining" and health["isolation"]["ready"] is True
    assert httpx.get(srv.url + "/v1/ping").status_code == 200
    r = httpx.post(srv.url + "/run_code", json={"code": "print(1)", "language": "python"})
    assert r.json()["stdout"] == "1\n"  # a balancer's last requests still run
    time.sleep(SIGNAL_BURST)
    srv.proc.send_signal(signal.SIGTERM)  # a second signal: no more waiting for the drain
    assert srv.proc.wait(60) == 0


def test_a_burst_of_signals_is_one_stop(started) -> None:
    """A job manager signals every process of a job and the shell that started the server
    passes the signal on: one stop that must not skip the drain."""
    srv = started("--slots", "1", env={"SANDLOT_DRAIN_SECONDS": "600"})
    for _ in range(4):
        srv.proc.send_signal(signal.SIGTERM)
    until(lambda: httpx.get(srv.url + "/health").status_code == 503, "/health says 503")
    r = httpx.post(srv.url + "/run_code", json={"code": "print(1)", "language": "python"})
    assert r.json()["stdout"] == "1\n"  # still draining
    time.sleep(SIGNAL_BURST)
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(60) == 0


def test_a_forced_stop_still_removes_sessions_boxes_and_mounts(started) -> None:
    """A third signal cancels the runs in flight at once; it still closes the pooled kernels'
    live boxes and unmounts their work dirs (the fixture checks nothing is left)."""
    srv = started("--slots", "1", env={"SANDLOT_SESSION_POOL": "2"})
    until(lambda: httpx.get(srv.url + "/health").json()["sessions"]["pool_ready"] == 2,
          "the pool is full", tries=1200)  # fmt: skip
    t, answer = post_in_thread(srv.url, SLEEP.format(100), run_timeout=200)
    until(lambda: busy(srv), "the run holds the slot")
    for _ in range(3):
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(SIGNAL_BURST)
    assert srv.proc.wait(60) == 0
    t.join()
    assert isinstance(answer[0], httpx.HTTPError) or answer[0].status_code >= 500


def test_a_run_past_the_grace_period_is_cancelled_and_leaves_nothing(started) -> None:
    srv = started("--slots", "1", env={"SANDLOT_SHUTDOWN_GRACE": "1"})
    t, answer = post_in_thread(srv.url, SLEEP.format(100), run_timeout=200)
    until(lambda: busy(srv), "the run holds the slot")
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(60) == 0  # not the 100 s of the run
    t.join()
    assert isinstance(answer[0], httpx.HTTPError) or answer[0].status_code >= 500
    # the fixture then checks: no box process, mount, state dir or cgroup is left


def test_a_kill_9_leaves_state_the_next_start_removes(started) -> None:
    first = started("--slots", "1")
    t, _ = post_in_thread(first.url, SLEEP.format(100), run_timeout=200)
    until(lambda: busy(first), "the run holds the slot")
    first.proc.kill()
    first.proc.wait()
    t.join()
    left = [p for p in Path(first.state_dir).iterdir() if p.name.startswith(f"{first.proc.pid}-")]
    assert left  # a mounted work dir, and the rest, of the killed server
    second = started("--slots", "1", env={"SANDLOT_STATE_DIR": first.state_dir})
    assert all(not p.exists() for p in left)
    assert first.state_dir + "/" not in Path("/proc/self/mounts").read_text().replace(
        f"{first.state_dir}/{second.proc.pid}-", ""
    )
    r = httpx.post(second.url + "/run_code", json={"code": "print(1)", "language": "python"})
    assert r.json()["stdout"] == "1\n"
    second.stop()
    assert_nothing_left(first)  # the killed server's boxes and cgroups are gone too


def worker_pids(srv: Server, tries: int = 200) -> dict[int, int]:
    """Worker index -> pid, from /health over fresh connections (each may reach any worker)."""
    seen: dict[int, int] = {}
    for _ in range(tries):
        w = httpx.get(srv.url + "/health").json()["worker"]
        seen[w["index"]] = w["pid"]
        if len(seen) == w["of"]:
            break
    return seen


def counter(srv: Server, name: str) -> float:
    text = httpx.get(srv.url + "/metrics", headers={"X-Auth-Token": KEY}).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name))  # fmt: skip


def test_two_workers_share_the_port_the_slots_and_the_metrics() -> None:
    env = {"SANDLOT_API_KEYS": KEY}
    with running_server("--slots", "2", "--workers", "2", env=env) as srv:
        pids = worker_pids(srv)
        assert sorted(pids) == [0, 1] and len(set(pids.values())) == 2
        health = httpx.get(srv.url + "/health").json()
        assert health["slots"] == 1  # each worker owns one of the two slots
        spread = placement.spread(2, placement.allowed_cpus())  # of all the slots, not per worker
        assert health["slot_cpus"] == placement.describe_cpu_sets(
            (spread[health["worker"]["index"]],)
        )
        # Every worker's counts are in a scrape of any one of them.
        assert counter(srv, "sandlot_slots ") == 2
        before = counter(srv, 'sandlot_http_requests_total{endpoint="/health"')
        for _ in range(20):
            httpx.get(srv.url + "/health")
        assert counter(srv, 'sandlot_http_requests_total{endpoint="/health"') == before + 20
        runs = [post_in_thread(srv.url, "print(1)") for _ in range(4)]
        for t, _ in runs:
            t.join()
        assert all(a[0].status_code == 401 for _, a in runs)  # the keys hold in every worker
        headers = {"Authorization": f"Bearer {KEY}"}
        body = {"code": "print(1)", "language": "python"}
        ok = [httpx.post(srv.url + "/run_code", headers=headers, json=body) for _ in range(4)]
        assert all(r.json()["stdout"] == "1\n" for r in ok)
        # The workers' settings, keys among them, are on no command line anyone can read.
        ps = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
        assert KEY not in ps
        # A worker that dies is started again.
        victim = pids[1]
        subprocess.run(["kill", "-9", str(victim)], check=True)
        until(lambda: worker_pids(srv, 10).get(1) not in (None, victim), "worker 1 restarted")
        srv.log.seek(0)
        assert b"starting it again" in srv.log.read()
        workers = {pids[0], worker_pids(srv)[1]}
    assert srv.proc.returncode == 0  # running_server sent SIGTERM; it checked nothing is left
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers)


def test_no_process_of_the_server_imports_from_where_it_was_started(tmp_path: Path) -> None:
    """Started in a directory holding a `sandlot` package (a user's, say), the server's workers
    and the slots' spawners, which run as root, import the installed sandlot, never that one
    (`python -m` would put the working directory first)."""
    marker = tmp_path / "imported"
    for package in ("sandlot", "sandlot/jail", "sandlot/api"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    with running_server("--slots", "2", "--workers", "2", cwd=tmp_path) as srv:
        body = {"code": "print(1)", "language": "python"}
        assert [httpx.post(srv.url + "/run_code", json=body).json()["stdout"]
                for _ in range(4)] == ["1\n"] * 4  # fmt: skip
    assert not marker.exists(), "a process of the server imported the planted package"


def test_workers_stop_cleanly_when_their_supervisor_is_killed(started) -> None:
    srv = started("--slots", "2", "--workers", "2")
    pids = worker_pids(srv)
    assert len(pids) == 2
    srv.proc.kill()  # no SIGTERM to forward: each worker gets its own from the kernel
    srv.proc.wait()
    until(lambda: not any(Path(f"/proc/{p}").exists() for p in pids.values()), "workers gone")
    # the fixture checks that the workers left no box, mount or cgroup; the state dir keeps the
    # dead supervisor's metrics files, which the next start removes
    leftover = sorted(p.name for p in Path(srv.state_dir).iterdir())
    assert leftover == [f"{srv.proc.pid}-metrics", f"{srv.proc.pid}-peers"]
    second = started("--slots", "1", env={"SANDLOT_STATE_DIR": srv.state_dir})
    assert not any((Path(srv.state_dir) / name).exists() for name in leftover)
    second.stop()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("--slots", "2", "--workers", "3"), {}, "workers=3 must be from 1 to slots=2"),
        (("--slots", "0"), {}, "setting slots must be at least 1"),
        (("--workers", "-1"), {}, "setting workers must be at least 0"),
        # A worker's live boxes may sit on another worker's slots: the server-wide ranges count.
        (
            ("--slots", "4", "--workers", "2"),
            {"SANDLOT_SESSION_UID_BASE": str(UID_BASE - 70)},
            "overlap the slots'",
        ),
    ],
)
def test_workers_and_slots_out_of_range_are_refused(args, env, message) -> None:
    assert message in serve_fails("--host", "127.0.0.1", *args, env=env)


def test_uids_of_a_worker_share_are_its_own() -> None:
    """Two workers over 4 slots: uids uid_base..+1 for worker 0, +2..+3 for worker 1; and of
    the live boxes' uids, sessions and pool, each its half, one range after the other."""
    from sandlot.api.server import share_configs
    from sandlot.config import Config, worker_shares

    cfg = Config.load(slots=4, uid_base=UID_BASE, queue_size=10, session_max=5, session_pool=3,
                      session_uid_base=SESSION_UID_BASE)  # fmt: skip
    shares = share_configs(cfg, worker_shares(4, 2))
    assert [(c.uid_base, c.slots, c.queue_size) for c in shares] == [
        (UID_BASE, 2, 5), (UID_BASE + 2, 2, 5)
    ]  # fmt: skip
    assert [(c.session_max, c.session_pool) for c in shares] == [(3, 2), (2, 1)]
    live = [range(c.session_uid_base, c.session_uid_base + c.live_uids()) for c in shares]
    assert live == [range(SESSION_UID_BASE, SESSION_UID_BASE + 9),
                    range(SESSION_UID_BASE + 9, SESSION_UID_BASE + cfg.live_uids())]  # fmt: skip


def test_the_server_says_where_it_listens(started) -> None:
    srv = started("--slots", "1")
    assert f"listening on http://127.0.0.1:{srv.port}" in srv.output()


def test_a_port_in_use_is_named() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        said = serve_fails("--host", "127.0.0.1", "--port", str(port))
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in said, said
