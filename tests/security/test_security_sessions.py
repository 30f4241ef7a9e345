"""Security tests for sessions, as named attacks through a real `sandlot serve` (the session
counterpart of test_security.py's table).

A session's box lives across requests, so its code has time: between two calls it can rearrange
its work dir, start daemons, forge its agent's frames, talk to its own kernel's channels, or try
another session's. Each test mounts one such attack and asserts it was contained: nothing
outside the session was reached, the server answers, and other sessions kept their state.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.test_logs import access
from tests.conftest import SESSION_UIDS, Server, running_server

MiB = 1 << 20
DISK = 32 * MiB
CPU_SECONDS = 4

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    env = {
        "SANDLOT_SESSION_POOL": "1",
        "SANDLOT_SESSION_MAX": "6",
        "SANDLOT_SESSION_PER_CLIENT": "4",
        "SANDLOT_SESSION_DISK_BYTES": str(DISK),
        "SANDLOT_SESSION_CPU_SECONDS": str(CPU_SECONDS),
    }
    with running_server("--slots", "1", env=env) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=300) as c:
        yield c


@pytest.fixture
def other(server: Server) -> Iterator[httpx.Client]:
    """A second client, from another address."""
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(base_url=server.url, timeout=300, transport=transport) as c:
        yield c


def py(src: str) -> str:
    return textwrap.dedent(src).lstrip()


# The kernel's code takes its agent's pipe to the server (the agent is its parent, with its uid;
# reopening it through /proc fails, as the server made the pipe, but pidfd_getfd copies it).
TO_AGENT = py("""
    import ctypes, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    agent = libc.syscall(438, os.pidfd_open(os.getppid()), 1, 0)  # pidfd_getfd
    assert agent >= 0, os.strerror(ctypes.get_errno())
""")


def token() -> str:
    return uuid.uuid4().hex[:12]


class Sessions:
    """Sessions a test made, deleted after it."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.made: list[str] = []

    def new(self, language: str = "python", **fields) -> str:
        r = self.client.post("/sessions", json={"language": language, **fields})
        assert r.status_code == 200, r.text
        self.made.append(r.json()["id"])
        return self.made[-1]

    def run(self, sid: str, code: str, **fields) -> dict:
        r = self.client.post(f"/sessions/{sid}/execute", json={"code": code, **fields})
        assert r.status_code == 200, r.text
        return r.json()

    def close(self) -> None:
        for sid in self.made:
            self.client.delete(f"/sessions/{sid}")


@pytest.fixture
def sessions(client: httpx.Client) -> Iterator[Sessions]:
    s = Sessions(client)
    yield s
    s.close()


def live_processes(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and not line.startswith("Z")
            and "ps -eo" not in line]  # fmt: skip


def uid_processes(uid: int) -> list[str]:
    out = subprocess.run(["ps", "-eo", "uid=,pid=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[0] == str(uid)]


def wait_until(probe, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        assert time.monotonic() < deadline, what
        time.sleep(0.2)
    return value


def box_uid(sessions: Sessions, sid: str) -> int:
    return int(sessions.run(sid, "import os; print(os.getuid())")["stdout"])


def assert_intact(sessions: Sessions, sid: str, name: str, value: str) -> None:
    """Another session still holds its state."""
    out = sessions.run(sid, f"print({name})")
    assert out["stdout"] == f"{value}\n", f"the bystander session lost its state: {out}"


def assert_server_healthy(client: httpx.Client) -> None:
    assert client.get("/v1/ping").status_code == 200
    r = client.post("/run_code", json={"code": "print('ok')", "language": "python"})
    assert r.status_code == 200 and r.json()["run_result"]["stdout"] == "ok\n", r.text


# -- the attacks -----------------------------------------------------------------------------


def test_attack_session_reads_another_sessions_files_and_processes(client, server, sessions):
    secret, marker = token(), token()
    victim = sessions.new()
    sessions.run(victim, py(f"""
        import subprocess
        open('secret.txt', 'w').write('{secret}')
        keep = subprocess.Popen(['/bin/sh', '-c', 'sleep 1000; : {marker}'])
        v = '{secret}'
    """))  # fmt: skip
    victim_uid = box_uid(sessions, victim)
    host_pids = [int(line.split()[1]) for line in uid_processes(victim_uid)]
    victim_dir = next(Path(server.state_dir).glob(f"*/live/**/work-{victim_uid}*"))
    attacker = sessions.new()
    out = sessions.run(attacker, py(f"""
        import glob, os
        cmdlines = []
        for path in glob.glob('/proc/[0-9]*/cmdline'):
            try:
                cmdlines.append(open(path, 'rb').read())
            except OSError:
                pass
        print('pids', len(cmdlines))
        print('seen', any(b'{marker}' in c for c in cmdlines))
        print('dir', os.path.exists('{victim_dir}') or os.path.exists('{victim_dir.parent}'))
        print('mine', os.listdir('/sandbox'))
        killed = []
        for pid in {host_pids}:
            try:
                os.kill(pid, 9)
                killed.append(pid)
            except OSError:
                pass
        print('killed', killed)
    """))  # fmt: skip
    lines = dict(line.split(" ", 1) for line in out["stdout"].splitlines())
    assert lines["seen"] == "False", "the attacker saw the victim's processes"
    assert lines["dir"] == "False", "the attacker saw the live boxes' work dirs"
    assert lines["mine"] == "[]"
    assert lines["killed"] == "[]", "the attacker signalled the victim's processes"
    assert int(lines["pids"]) < 20  # its own pid namespace: its kernel, agent and init
    probe = {"language": "bash", "code": f"grep -l {marker} /proc/*/cmdline; ls /sandbox"}
    plain = client.post("/run_code", json=probe).json()["run_result"]
    assert marker not in plain["stdout"] and "secret.txt" not in plain["stdout"]
    assert_intact(sessions, victim, "v", secret)
    assert sessions.run(victim, "print(keep.poll())")["stdout"] == "None\n"


def test_attack_session_daemon_outlives_deletion(client, sessions):
    a, b = token(), token()
    sid = sessions.new()
    uid = box_uid(sessions, sid)
    sessions.run(sid, py(f"""
        import os, subprocess
        subprocess.Popen(['setsid', '/bin/sh', '-c', 'sleep 1000; : {a}'])
        if os.fork() == 0:  # a daemon: double fork, new session, parent gone
            os.setsid()
            if os.fork() == 0:
                os.execv('/bin/sh', ['sh', '-c', 'sleep 1001; : {b}'])
            os._exit(0)
    """))  # fmt: skip
    wait_until(lambda: live_processes(a) and live_processes(b), 30, "the daemons did not start")
    assert client.delete(f"/sessions/{sid}").status_code == 200
    wait_until(lambda: not live_processes(a) and not live_processes(b), 10,
               "a daemon outlived its session")  # fmt: skip
    wait_until(lambda: not uid_processes(uid), 10, "processes of the session's uid remain")
    mounts = Path("/proc/self/mounts").read_text()
    assert f"work-{uid}" not in mounts, "the session's work dir is still mounted"
    assert_server_healthy(client)


def test_attack_session_constant_activity_past_its_lifetime(client, sessions):
    sid = sessions.new(lifetime=6)
    deadline = time.monotonic() + 60  # ten times its lifetime: a bound, not a timing
    ended = None
    while time.monotonic() < deadline:
        r = client.post(f"/sessions/{sid}/execute", json={"code": "1"})
        if r.status_code != 200:
            ended = r
            break
        if r.json()["session_ended"]:
            ended = client.get(f"/sessions/{sid}")
            break
        client.get(f"/sessions/{sid}")
        time.sleep(0.2)
    assert ended is not None, "activity kept the session alive past its lifetime"
    assert ended.status_code == 410 and "lifetime" in ended.json()["detail"]
    # An execution running when the lifetime ends is ended with it.
    sid = sessions.new(lifetime=6)
    out = sessions.run(sid, "import time; time.sleep(120)", timeout=120)
    assert out["session_ended"] and "lifetime" in out["session_ended"]
    assert out["execution_time"] < 60


def test_attack_session_exhausts_the_cap(client, other, sessions):
    theirs = Sessions(other)
    try:
        mine = [sessions.new("bash", idle_timeout=8) for _ in range(4)]
        over = client.post("/sessions", json={"language": "bash"})
        assert over.status_code == 429, over.text
        assert 1 <= int(over.headers["retry-after"]) <= 8
        theirs.new("bash")  # one client's sessions do not keep another out
        theirs.new("bash")
        full = other.post("/sessions", json={"language": "bash"})
        assert full.status_code == 429 and "maximum of 6" in full.json()["detail"]
        # Left idle, mine end by themselves and make room again.
        wait_until(lambda: other.post("/sessions", json={"language": "bash"}).status_code == 200
                   or None, 60, "idle sessions never made room")  # fmt: skip
        assert client.get(f"/sessions/{mine[0]}").status_code == 410
    finally:
        for s in other.get("/sessions").json():
            other.delete(f"/sessions/{s['id']}")


def test_attack_session_fills_the_disk_across_executions(client, sessions):
    sid = sessions.new()
    errors = []
    for i in range(DISK // (4 * MiB) + 4):
        out = sessions.run(sid, py(f"""
            try:
                open('fill{i}', 'wb').write(b'x' * (4 << 20))
            except OSError as exc:
                print(exc.errno)
        """))  # fmt: skip
        errors.append(out["stdout"].strip())
    assert "28" in errors, f"the work dir never filled: {errors}"  # ENOSPC
    df = sessions.run(sid, "import shutil; print(shutil.disk_usage('.').total)")
    assert int(df["stdout"]) <= DISK
    put = client.put(f"/sessions/{sid}/files/more.bin", content=b"y" * (8 * MiB))
    assert put.status_code == 413, put.text
    sessions.run(sid, "import os; os.remove('fill0')")  # room again: the session still works
    assert client.put(f"/sessions/{sid}/files/small.txt", content=b"ok").status_code == 200
    assert_server_healthy(client)


def test_attack_session_kernel_control_channels(client, sessions):
    conn = "import json; print(open('/tmp/.sandlot-agent/kernel.json').read())"
    victim, attacker = sessions.new(), sessions.new()
    sessions.run(victim, "v = 'still here'")
    theirs = json.loads(sessions.run(victim, conn)["stdout"])
    mine = json.loads(sessions.run(attacker, conn)["stdout"])
    ports = [theirs[k] for k in theirs if k.endswith("_port") and theirs[k] not in mine.values()]
    out = sessions.run(attacker, py(f"""
        import socket
        reached = []
        for port in {ports}:
            s = socket.socket()
            s.settimeout(2)
            try:
                s.connect(('127.0.0.1', port))
                reached.append(port)
            except OSError:
                pass
        print(reached)
    """))  # fmt: skip
    assert out["stdout"] == "[]\n", "another session's kernel ports were reachable"
    plain = client.post("/run_code", json={"language": "python", "code": out_probe(ports)})
    assert plain.json()["run_result"]["stdout"] == "[]\n", "a plain run reached a kernel's ports"
    # On the host no socket belongs to a session's uid: the kernels listen in their boxes only.
    host_sockets = Path("/proc/net/tcp").read_text().splitlines()[1:]
    assert not [s for s in host_sockets if int(s.split()[7]) in SESSION_UIDS]
    # Its own kernel's control channel, with its own key: whatever it asks stays in its box.
    uid = box_uid(sessions, attacker)
    out = sessions.run(attacker, py("""
        import json
        from jupyter_client import BlockingKernelClient
        kc = BlockingKernelClient()
        kc.load_connection_file('/tmp/.sandlot-agent/kernel.json')
        kc.start_channels()
        kc.control_channel.send(kc.session.msg('kernel_info_request'))
        print(kc.control_channel.get_msg(timeout=10)['content']['status'])
        kc.shutdown()  # on the control channel: this very kernel ends
        import time
        time.sleep(30)
    """), timeout=60)  # fmt: skip
    assert out["kernel_restarted"], out
    after = sessions.run(attacker, "import os; print(os.getuid())")
    assert after["stdout"] == f"{uid}\n"
    assert_intact(sessions, victim, "v", "still here")
    assert_server_healthy(client)


def out_probe(ports: list[int]) -> str:
    return py(f"""
        import socket
        reached = []
        for port in {ports}:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=2).close()
                reached.append(port)
            except OSError:
                pass
        print(reached)
    """)


def test_attack_session_symlinked_directory_to_a_host_path(client, sessions, tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret").write_text("host secret")
    sid = sessions.new("bash")
    sessions.run(sid, f"mkdir -p real && ln -s {host} d && ln -s {host}/secret f && "
                      f"ln -s {host} real/inner")  # fmt: skip
    for path in ("d/pwned.txt", "f", "real/inner/pwned.txt", "d/new/deep.txt"):
        r = client.put(f"/sessions/{sid}/files/{path}", content=b"pwned")
        assert r.status_code == 400, f"PUT {path}: {r.status_code} {r.text}"
    for path in ("d/secret", "f", "real/inner/secret"):
        r = client.get(f"/sessions/{sid}/files/{path}")
        assert r.status_code == 400 and b"host secret" not in r.content, f"GET {path}"
    assert sorted(p.name for p in host.iterdir()) == ["secret"]
    assert (host / "secret").read_text() == "host secret"
    # Swapped between two requests: a directory that was real becomes a link.
    client.put(f"/sessions/{sid}/files/swap/a.txt", content=b"first")
    sessions.run(sid, f"rm -rf swap && ln -s {host} swap")
    assert client.put(f"/sessions/{sid}/files/swap/a.txt", content=b"second").status_code == 400
    assert not (host / "a.txt").exists()


def test_attack_session_forges_its_agents_frames(client, sessions):
    bystander = sessions.new()
    sessions.run(bystander, "w = 'fine'")
    for body in (b"nope!", b'{"type": 1}', b'{"type": "end", "status": NaN}', b"[" * 5000):
        forged = len(body).to_bytes(4, "big") + body
        sid = sessions.new()
        code = TO_AGENT + f"os.write(agent, {forged!r})\ntime.sleep(30)"
        out = sessions.run(sid, code, timeout=60)
        assert out["session_ended"], out
        assert client.get(f"/sessions/{sid}").status_code == 410
    assert_intact(sessions, bystander, "w", "fine")
    assert_server_healthy(client)


def test_attack_session_kills_everything_it_can(client, sessions):
    bystander = sessions.new()
    sessions.run(bystander, "w = 'fine'")
    sid = sessions.new()
    out = sessions.run(sid, "import os, signal; os.kill(-1, signal.SIGKILL)")
    assert out["session_ended"] or out["kernel_restarted"], out
    assert_intact(sessions, bystander, "w", "fine")
    assert_server_healthy(client)


def test_attack_session_fork_bomb(client, sessions):
    bystander = sessions.new()
    sessions.run(bystander, "w = 'fine'")
    sid = sessions.new()
    uid = box_uid(sessions, sid)
    out = sessions.run(sid, "import os\nwhile True:\n    try:\n        os.fork()\n"
                            "    except OSError:\n        pass", timeout=5)  # fmt: skip
    assert out["limit"] == "time" or out["session_ended"], out
    assert len(uid_processes(uid)) <= 256 + 3
    assert_intact(sessions, bystander, "w", "fine")
    client.delete(f"/sessions/{sid}")
    wait_until(lambda: not uid_processes(uid), 20, "the fork bomb outlived its session")
    assert_server_healthy(client)


def test_attack_session_cpu_in_the_background(client, sessions):
    sid = sessions.new()
    spin = (
        "import threading\ndef spin():\n    while True: pass\nthreading.Thread(target=spin).start()"
    )
    assert sessions.run(sid, spin)["status"] == "ok"  # the cell ends; the thread spins on
    r = wait_until(lambda: (g := client.get(f"/sessions/{sid}")).status_code == 410 and g, 180,
                   "a session outspent its CPU time")  # fmt: skip
    assert "CPU" in r.json()["detail"]


def test_sessions_do_not_leak_into_host_mounts_or_processes(server, sessions):
    sid = sessions.new()
    uid = box_uid(sessions, sid)
    assert any(f"work-{uid}" in line for line in Path("/proc/self/mounts").read_text().splitlines())
    sessions.client.delete(f"/sessions/{sid}")
    wait_until(lambda: not uid_processes(uid), 10, "the session's processes remain")
    assert f"work-{uid}" not in Path("/proc/self/mounts").read_text()
    assert not list(Path(server.state_dir).glob(f"*/live/**/work-{uid}*"))
    assert not list(Path("/sys/fs/cgroup").glob(f"*/**/live-{uid}"))


def test_attack_session_frame_too_large(client, sessions):
    sid = sessions.new()
    out = sessions.run(sid, TO_AGENT + "os.write(agent, b'\\x7f' * 4)\ntime.sleep(30)", timeout=60)
    assert out["session_ended"] and "frame" in out["session_ended"], out
    assert_server_healthy(client)


def test_without_keys_a_session_is_the_one_tenants_but_listed_to_its_address(
    client, other, sessions
):
    """No API keys: one tenant, so an id reaches its session from any address (a client that
    moved); a listing still shows only the sessions made from the asker's address."""
    sid = sessions.new("bash")
    sessions.run(sid, "X=7")
    r = other.post(f"/sessions/{sid}/execute", json={"code": "echo $X"})
    assert r.status_code == 200 and r.json()["stdout"] == "7\n", r.text
    assert sid in {s["id"] for s in client.get("/sessions").json()}
    assert sid not in {s["id"] for s in other.get("/sessions").json()}


FORGED = {"X-Forwarded-For": "203.0.113.7", "Forwarded": "for=203.0.113.7",
          "X-Real-IP": "203.0.113.7", "X-Forwarded-Proto": "https"}  # fmt: skip


def test_attack_forged_forwarded_headers_from_loopback(client, server, sessions):
    """uvicorn's own default believes X-Forwarded-For from any caller on loopback. With no
    `forwarded_allow_ips` the client is the socket's peer: a forged header neither moves a
    session to another client's listing, nor escapes the per-client cap, nor enters the log."""
    made = client.post("/sessions", json={"language": "bash"},
                       headers={**FORGED, "X-Request-ID": "forged-forwarded"})  # fmt: skip
    assert made.status_code == 200, made.text
    sessions.made.append(made.json()["id"])
    assert access(server, "forged-forwarded")["client"] == "127.0.0.1"
    mine = {s["id"] for s in client.get("/sessions").json()}
    assert made.json()["id"] in mine
    assert {s["id"] for s in client.get("/sessions", headers=FORGED).json()} == mine
    for n in range(3):  # a new forged address for each: the cap (4) still counts them as one's
        r = client.post("/sessions", json={"language": "bash"},
                        headers={"X-Forwarded-For": f"198.51.100.{n}"})  # fmt: skip
        assert r.status_code == 200, r.text
        sessions.made.append(r.json()["id"])
    over = client.post("/sessions", json={"language": "bash"},
                       headers={"X-Forwarded-For": "198.51.100.99"})  # fmt: skip
    assert over.status_code == 429 and "this client" in over.json()["detail"], over.text
