"""Snapshots, forks and pauses of sessions through a real server: what state is kept, that a fork
is as apart from its siblings and parent as two unrelated sessions (attacks, each with its
control), tenancy, the quota, caps under a fork storm, and pause and resume (across a restart)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, SESSION_UIDS, Server, running_server
from tests.security.test_security_sessions import box_uid, uid_processes, wait_until

MiB = 1 << 20
KEY_A, KEY_B = "tenant-a-key-0123456789", "tenant-b-key-0123456789"
QUOTA = 24 * MiB
FORK_MAX = 3
SESSION_MAX = 6

pytestmark = [pytest.mark.root, pytest.mark.slow]


def py(src: str) -> str:
    return textwrap.dedent(src).lstrip()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    env = {
        "SANDLOT_API_KEYS": f"{KEY_A},{KEY_B}",
        "SANDLOT_SESSION_POOL": "2",
        "SANDLOT_SESSION_MAX": str(SESSION_MAX),
        "SANDLOT_SESSION_DISK_BYTES": str(64 * MiB),
        "SANDLOT_SNAPSHOT_QUOTA": str(QUOTA),
        "SANDLOT_FORK_MAX": str(FORK_MAX),
    }
    with running_server("--slots", "1", env=env) as srv:
        yield srv


def keyed(server: Server, key: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.Client(base_url=server.url, timeout=300, headers=headers)


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with keyed(server, KEY_A) as c:
        yield c


@pytest.fixture(scope="module")
def other(server: Server) -> Iterator[httpx.Client]:
    with keyed(server, KEY_B) as c:
        yield c


class Sessions:
    """What a test made (sessions, snapshots), deleted after it."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.made: list[str] = []
        self.snapshots: list[str] = []

    def new(self, language: str = "python", **fields) -> str:
        r = self.client.post("/sessions", json={"language": language, **fields})
        assert r.status_code == 200, r.text
        self.made.append(r.json()["id"])
        return self.made[-1]

    def run(self, sid: str, code: str) -> dict:
        r = self.client.post(f"/sessions/{sid}/execute", json={"code": code})
        assert r.status_code == 200, r.text
        return r.json()

    def out(self, sid: str, code: str) -> str:
        result = self.run(sid, code)
        assert result["status"] == "ok", result
        return result["stdout"]

    def snapshot(self, sid: str) -> dict:
        r = self.client.post(f"/sessions/{sid}/snapshot")
        assert r.status_code == 200, r.text
        self.snapshots.append(r.json()["id"])
        return r.json()

    def fork(self, sid: str, count: int, **fields) -> list[str]:
        r = self.client.post(f"/sessions/{sid}/fork", json={"count": count, **fields})
        assert r.status_code == 200, r.text
        kids = [s["id"] for s in r.json()["sessions"]]
        self.made += kids
        return kids

    def close(self) -> None:
        for sid in self.made:
            self.client.delete(f"/sessions/{sid}")
        for snap in self.snapshots:
            self.client.delete(f"/snapshots/{snap}")


@pytest.fixture
def sessions(client: httpx.Client) -> Iterator[Sessions]:
    s = Sessions(client)
    yield s
    s.close()


def store(server: Server) -> Path:
    return Path(server.snapshot_dir)


def on_disk(server: Server) -> tuple[list[str], list[str]]:
    """The snapshot records and layers in the server's store."""
    snaps = sorted(p.name for p in (store(server) / "snapshots").iterdir())
    layers = sorted(p.name for p in (store(server) / "layers").iterdir() if p.is_dir())
    return snaps, layers


# -- what is kept -------------------------------------------------------------------------------


def test_a_fork_has_its_parents_state_and_what_it_changes_is_its_own(sessions):
    parent = sessions.new()
    sessions.out(
        parent,
        py("""
        import os
        x = 41
        def add(a): return a + x
        class Point:
            def __init__(self, v): self.v = v
        p = Point(7)
        open("data.txt", "w").write("from the parent")
        os.makedirs("deep/er"); os.chdir("deep")
        os.environ["MARK"] = "set"
    """),
    )
    a, b = sessions.fork(parent, 2)
    probe = "print(add(1), p.v, os.getcwd(), open('/sandbox/data.txt').read(), os.environ['MARK'])"
    for fork in (a, b):
        assert sessions.out(fork, probe) == "42 7 /sandbox/deep from the parent set\n"
    # the restore turned the cyclic collector off while it read the names, and back on
    assert sessions.out(a, "import gc; print(gc.isenabled())") == "True\n"
    # a fork writes a file, changes one it inherited and sets a variable
    sessions.out(a, "y = 'a'; open('/sandbox/mine.txt', 'w').write('a'); "
                    "open('/sandbox/data.txt', 'w').write('changed by a')")  # fmt: skip
    see = py("""
        import os
        mine = os.path.exists('/sandbox/mine.txt')
        print('y' in globals(), mine, open('/sandbox/data.txt').read())
    """)
    assert sessions.out(b, see) == "False False from the parent\n"
    assert sessions.out(parent, see) == "False False from the parent\n"
    # and the parent's changes after the fork reach no fork
    sessions.out(parent, "x = 100; open('/sandbox/later.txt', 'w').write('p')")
    assert sessions.out(a, "print(x, os.path.exists('/sandbox/later.txt'))") == "41 False\n"


def test_a_snapshot_says_by_name_what_it_could_not_copy(sessions):
    sid = sessions.new()
    sessions.out(
        sid,
        py("""
        import socket, threading, time
        gen = (i for i in range(3))
        log = open("/tmp/log", "w")
        reader = open("/etc/hostname")
        sock = socket.socket()
        lock = threading.Lock()
        worker = threading.Thread(target=time.sleep, args=(60,), daemon=True); worker.start()
        kept = [1, 2, 3]
    """),
    )
    snap = sessions.snapshot(sid)
    missing = {n["name"]: n["type"] for n in snap["holds"]["not_copied"]}
    assert missing == {"gen": "generator", "log": "TextIOWrapper", "sock": "socket",
                       "lock": "lock", "worker": "Thread"}, snap["holds"]  # fmt: skip
    assert all("pickle" in n["why"] for n in snap["holds"]["not_copied"])
    (fork,) = sessions.fork(sid, 1)
    names = "print([n in globals() for n in ('gen', 'log', 'sock', 'lock', 'worker')], kept)"
    assert sessions.out(fork, names) == "[False, False, False, False, False] [1, 2, 3]\n"
    # cloudpickle copies a file open for reading as its content, in memory
    assert (
        sessions.out(fork, "print(type(reader).__name__, reader.read())") == "StringIO sandlot\n\n"
    )
    # the parent keeps all of it, alive
    assert sessions.out(sid, "print(next(gen), worker.is_alive())") == "0 True\n"


def test_a_bash_fork_keeps_its_files_cwd_exported_environment_and_functions(sessions):
    sh = sessions.new("bash")
    sessions.out(sh, "mkdir -p w/x && cd w/x && echo hi > f && export GREETING=hello && "
                     "LOCAL=unexported && greet() { echo \"$GREETING $1\"; }")  # fmt: skip
    (fork,) = sessions.fork(sh, 1)
    out = sessions.out(fork, 'pwd; cat f; greet you; echo "[$LOCAL]"')
    assert out == "/sandbox/w/x\nhi\nhello you\n[]\n"  # an unexported variable is not kept
    assert sessions.out(sh, "echo $LOCAL; pwd") == "unexported\n/sandbox/w/x\n"


def test_a_session_goes_on_after_its_snapshot_and_forks_of_forks_stack(sessions):
    sid = sessions.new()
    sessions.out(sid, "n = 0; open('/sandbox/n0', 'w').close()")
    current = sid
    for k in range(1, 4):
        (current,) = sessions.fork(current, 1)
        sessions.out(current, f"n += 1; open('/sandbox/n{k}', 'w').close()")
    out = sessions.out(current, "import os; print(n, sorted(os.listdir('/sandbox')))")
    assert out == "3 ['n0', 'n1', 'n2', 'n3']\n"
    assert sessions.out(sid, "print(n); open('/sandbox/after', 'w').close()") == "0\n"
    info = sessions.client.get(f"/sessions/{current}").json()
    assert info["execution_count"] >= 2 and info["restore_error"] is None


# -- a fork is as apart as an unrelated session -------------------------------------------------


def test_attack_a_fork_signals_reads_and_ptraces_its_sibling(sessions):
    parent = sessions.new()
    sessions.out(parent, "secret = 'parent'")
    a, b = sessions.fork(parent, 2)
    sessions.out(
        b,
        py("""
        import os, socket
        secret = 'b'
        open('/sandbox/b-only', 'w').write('b')
        srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(); port = srv.getsockname()[1]
        abstract = socket.socket(socket.AF_UNIX); abstract.bind('\\0sandlot-fork-test')
        abstract.listen()
        print(port)
    """),
    )
    port = int(sessions.out(b, "print(port)"))
    uid_b = int(sessions.out(b, "print(os.getuid())"))
    attack = py(f"""
        import ctypes, os, signal, socket
        mine = os.getuid()
        pids = [p for p in os.listdir('/proc') if p.isdigit()]
        seen = sorted({{os.stat(f'/proc/{{p}}').st_uid for p in pids}})
        print('uids', seen == [mine], mine != {uid_b})
        print('files', os.path.exists('/sandbox/b-only'))
        for name, addr, family in (('tcp', ('127.0.0.1', {port}), socket.AF_INET),
                                   ('unix', '\\0sandlot-fork-test', socket.AF_UNIX)):
            try:
                socket.socket(family).connect(addr); print(name, 'reached')
            except OSError: print(name, 'refused')
        libc = ctypes.CDLL(None, use_errno=True)
        pids = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]
        print('ptrace', [libc.ptrace(16, p, 0, 0) for p in pids[:3]] == [-1] * len(pids[:3]))
    """)
    out = sessions.run(a, attack)
    assert out["stdout"].splitlines() == ["uids True True", "files False", "tcp refused",
                                          "unix refused", "ptrace True"], out  # fmt: skip
    kill_all = "for p in range(1, 4096):\n    try: os.kill(p, 9)\n    except OSError: pass"
    sessions.run(a, kill_all)  # every process it can name: its own box's (it ends itself)
    # the sibling is whole: its state, its listener; control: it reaches its own listener
    assert sessions.out(b, "print(secret)") == "b\n"
    control = sessions.out(b, "c = socket.socket(); c.connect(('127.0.0.1', port)); print('ok')")
    assert control == "ok\n"
    assert sessions.out(parent, "print(secret)") == "parent\n"


def test_each_fork_has_its_own_limits(sessions):
    parent = sessions.new(memory_limit_MB=1024)
    sessions.out(parent, "import os; blob = b''")
    (small,) = sessions.fork(parent, 1, memory_limit_MB=256)
    (large,) = sessions.fork(parent, 1)
    hog = "blob = bytearray(400 << 20); print(len(blob) >> 20)"
    over = sessions.run(small, hog)
    assert over["limit"] == "memory" or over["error"]["ename"] == "MemoryError", over
    assert sessions.out(large, hog) == "400\n"  # control: the parent's limit, its own cgroup
    infos = {s: sessions.client.get(f"/sessions/{s}").json() for s in (small, large)}
    assert [infos[small]["memory_limit_MB"], infos[large]["memory_limit_MB"]] == [256, 1024]
    uids = {sessions.out(s, "import os; print(os.getuid())") for s in (parent, large)}
    assert len(uids) == 2


FORGE = py("""
    import builtins, json
    real = builtins.compile
    def forged(source, filename, *args, **kwargs):
        if filename != "<sandlot snapshot>":
            return real(source, filename, *args, **kwargs)
        json.dump(REPORT, open("/tmp/.sandlot-agent/state.json", "w"))
        return real("pass", filename, "exec")
    builtins.compile = forged
""")


def test_attack_a_forged_snapshot_report_harms_only_its_own_snapshot(sessions):
    """The kernel is the user's: it can answer the snapshot's code with a report of its own.
    What the server keeps of it is bounded, and the forged state reaches no other session."""
    sid = sessions.new()
    names = '[{"name": "x" * 1000, "type": "t" * 1000, "why": "w" * 1000}] * 300'
    report = f'{{"names": -5, "cwd": "c" * 10000, "not_copied": {names}, "not_copied_count": 7}}'
    sessions.out(sid, f"REPORT = {report}\n{FORGE}")
    snap = sessions.snapshot(sid)
    holds = snap["holds"]
    assert len(holds["not_copied"]) == 200 and holds["not_copied_count"] == 300
    assert {len(n["name"]) for n in holds["not_copied"]} == {200} and holds["names"] == 0
    assert len(holds["cwd"]) == 4096
    (fork,) = sessions.fork(sid, 1)  # nothing was saved: the fork has the files alone
    assert sessions.client.get(f"/sessions/{fork}").json()["restore_error"] is not None
    # a report that is not one ends that session alone, saying so
    sessions.out(sid, 'REPORT = {"cwd": 7}')
    r = sessions.client.post(f"/sessions/{sid}/snapshot")
    assert r.status_code == 410 and "bad event" in r.json()["detail"], r.text
    assert sessions.out(fork, "print(1)") == "1\n"


# -- what refuses a snapshot --------------------------------------------------------------------


def test_a_file_held_open_for_writing_refuses_a_snapshot_and_changes_nothing(sessions):
    sid = sessions.new()
    sessions.out(sid, "log = open('log.txt', 'w'); log.write('a'); log.flush()")
    r = sessions.client.post(f"/sessions/{sid}/snapshot")
    assert r.status_code == 409 and "open for writing" in r.json()["detail"], r.text
    assert sessions.out(sid, "log.write('b'); log.close(); print(open('log.txt').read())") == "ab\n"
    sessions.snapshot(sid)  # control: closed, it is taken


def test_a_snapshot_over_the_quota_is_refused_and_leaves_nothing(server, sessions):
    sid = sessions.new()
    sessions.out(sid, f"open('big', 'wb').write(b'x' * {QUOTA + MiB})")
    before = on_disk(server)
    r = sessions.client.post(f"/sessions/{sid}/snapshot")
    assert r.status_code == 507, r.text
    assert "quota" in r.json()["detail"] and "DELETE /snapshots" in r.json()["detail"]
    assert on_disk(server) == before  # nothing half-written
    assert sessions.out(sid, "import os; os.remove('big'); open('s', 'w').write('s'); print(1)")
    sessions.snapshot(sid)  # control: within the quota it is taken


def test_a_snapshot_outlives_its_session(sessions):
    sid = sessions.new()
    sessions.out(sid, "kept = {'a': 1}; open('/sandbox/f', 'w').write('f')")
    snap = sessions.snapshot(sid)
    assert sessions.client.delete(f"/sessions/{sid}").status_code == 200
    wait_until(lambda: sessions.client.get(f"/snapshots/{snap['id']}").json()["status"] == "ready",
               60, "the snapshot was not written")  # fmt: skip
    r = sessions.client.post("/sessions", json={"snapshot": snap["id"]})
    assert r.status_code == 200, r.text
    sessions.made.append(r.json()["id"])
    assert sessions.out(r.json()["id"], "print(kept, open('/sandbox/f').read())") == "{'a': 1} f\n"
    assert sessions.client.delete(f"/snapshots/{snap['id']}").status_code == 200
    gone = sessions.client.post("/sessions", json={"snapshot": snap["id"]})
    assert gone.status_code == 404, gone.text


def test_restoring_asks_for_a_snapshot_of_the_same_language(sessions):
    sid = sessions.new("bash")
    snap = sessions.snapshot(sid)
    r = sessions.client.post("/sessions", json={"snapshot": snap["id"], "language": "python"})
    assert r.status_code == 400 and "bash" in r.json()["detail"], r.text
    r = sessions.client.post("/sessions", json={"snapshot": "snap-" + "0" * 32})
    assert r.status_code == 404, r.text
    r = sessions.client.post(f"/sessions/{sid}/fork", json={"count": FORK_MAX + 1})
    assert r.status_code == 400 and str(FORK_MAX) in r.json()["detail"], r.text


# -- tenancy ------------------------------------------------------------------------------------


def test_attack_another_key_forks_reads_or_restores_what_it_does_not_own(client, other, sessions):
    sid = sessions.new()
    sessions.out(sid, "secret = 'a'")
    snap = sessions.snapshot(sid)["id"]
    attempts = {
        "fork": other.post(f"/sessions/{sid}/fork", json={"count": 1}),
        "snapshot": other.post(f"/sessions/{sid}/snapshot"),
        "read": other.get(f"/snapshots/{snap}"),
        "restore": other.post("/sessions", json={"snapshot": snap}),
        "delete": other.delete(f"/snapshots/{snap}"),
    }
    assert {k: r.status_code for k, r in attempts.items()} == dict.fromkeys(attempts, 404)
    assert snap not in [s["id"] for s in other.get("/snapshots").json()]
    # control: its own key does all of it
    assert client.get(f"/snapshots/{snap}").status_code == 200
    assert snap in [s["id"] for s in client.get("/snapshots").json()]
    r = client.post("/sessions", json={"snapshot": snap})
    assert r.status_code == 200, r.text
    sessions.made.append(r.json()["id"])


# -- caps ---------------------------------------------------------------------------------------


def test_a_fork_storm_stays_within_the_caps_and_leaves_nothing(server, client, sessions):
    parent = sessions.new()
    sessions.out(parent, "state = list(range(1000))")
    for _ in range(3):
        kids = sessions.fork(parent, FORK_MAX)
        live = len([s for s in client.get("/sessions").json() if s["status"] != "paused"])
        assert live <= SESSION_MAX
        # the next would pass the cap: refused whole, before anything is made
        r = client.post(f"/sessions/{parent}/fork", json={"count": FORK_MAX})
        assert r.status_code == 429, r.text
        assert len(client.get("/sessions").json()) == live
        for kid in kids:
            assert client.delete(f"/sessions/{kid}").status_code == 200
    assert [s["id"] for s in client.get("/sessions").json()] == [parent]
    assert client.delete(f"/sessions/{parent}").status_code == 200
    sessions.made.clear()
    # every fork's box went with its overlay, and no sealed layer is left in memory
    wait_until(lambda: not sealed_layers(server), 30, "sealed layers left in memory")


def sealed_layers(server: Server) -> list[str]:
    """Read-only tmpfs mounts under the server's state dir: frozen layers in memory."""
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [line for line in lines if server.state_dir in line and " - tmpfs " in line
            and line.split()[5].startswith("ro")]  # fmt: skip


# -- the pool of kernels started ahead -----------------------------------------------------------

# What a box's code reads of the CPU priority of every thread in its box (its pid namespace).
PRIORITIES = py("""
    import os
    print(sorted({os.getpriority(os.PRIO_PROCESS, int(t)) for p in os.listdir("/proc")
                  if p.isdigit() for t in os.listdir(f"/proc/{p}/task")}))
""")


def niceness() -> dict[int, set[int]]:
    """Seen from the host: the nice values of every thread of each session uid's processes."""
    out: dict[int, set[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            uid = os.stat(f"/proc/{pid}").st_uid
            if uid in SESSION_UIDS:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    out.setdefault(uid, set()).add(os.getpriority(os.PRIO_PROCESS, int(tid)))
        except OSError:  # it ended meanwhile
            continue
    return out


def pooled(client: httpx.Client) -> list[int]:
    """The uids of the pool's two boxes, once it is full: the two that wait at nice 19."""
    wait_until(lambda: client.get("/health").json()["sessions"]["pool_ready"] == 2, 120,
               "the pool did not fill up")  # fmt: skip

    def waiting() -> list[int]:
        uids = [uid for uid, nice in niceness().items() if nice == {19}]
        return uids if len(uids) == 2 else []

    return wait_until(waiting, 30, "the pool's boxes do not wait at the lowest priority")


def test_a_pooled_kernel_waits_at_the_lowest_priority_and_serves_at_the_normal_one(
    client, sessions
):
    waiting = pooled(client)
    sid = sessions.new()
    uid = box_uid(sessions, sid)
    assert uid in waiting  # it came from the pool
    assert sessions.out(sid, PRIORITIES) == "[0]\n"  # all of its box, as it sees it
    assert niceness()[uid] == {0}
    # control: the box the pool keeps is still at the lowest, and a fork's boxes (from the
    # pool too) serve at the normal priority
    assert any(niceness().get(u) == {19} for u in waiting if u != uid)
    for kid in sessions.fork(sid, 2):
        assert sessions.out(kid, PRIORITIES) == "[0]\n"


def test_concurrent_sessions_each_get_a_pooled_kernel_of_their_own(client, sessions):
    pooled(client)
    with ThreadPoolExecutor(max_workers=4) as run:
        made = list(run.map(lambda _: sessions.new(), range(4)))
    uids = [box_uid(sessions, sid) for sid in made]
    assert len(set(uids)) == 4, uids
    for i, sid in enumerate(made):
        sessions.out(sid, f"mine = {i}")
    assert [sessions.out(sid, "print(mine)") for sid in made] == [f"{i}\n" for i in range(4)]


def test_a_pooled_kernel_that_died_is_replaced_not_handed_out(client, sessions):
    dead = pooled(client)
    for uid in dead:
        for line in uid_processes(uid):
            with contextlib.suppress(ProcessLookupError):  # gone with one killed before it
                os.kill(int(line.split()[1]), signal.SIGKILL)
    wait_until(lambda: not any(uid_processes(u) for u in dead), 10, "the pool's boxes live on")
    sid = sessions.new()
    assert sessions.out(sid, "print(6 * 7)") == "42\n"  # a kernel that runs: not a dead one
    pooled(client)  # and the pool is full again, of boxes that wait at the lowest priority


# -- pause and resume ---------------------------------------------------------------------------


def paused(client: httpx.Client, sid: str) -> bool:
    return client.get(f"/sessions/{sid}").json()["status"] == "paused"


def test_an_idle_session_is_paused_and_resumed_transparently(client, sessions):
    sid = sessions.new(pause_after=1)
    sessions.out(sid, "import os; x = 5; open('/sandbox/f', 'w').write('f')")
    uid = int(sessions.out(sid, "print(os.getuid())"))
    wait_until(lambda: paused(client, sid), 60, "the session was not paused")
    assert client.get("/health").json()["sessions"]["paused"] >= 1
    assert 'sandlot_sessions{state="paused"}' in client.get("/metrics").text
    assert [s["status"] for s in client.get("/sessions").json() if s["id"] == sid] == ["paused"]
    wait_until(lambda: not uid_processes(uid), 10, "its box was not freed")
    out = sessions.run(sid, "print(x, open('/sandbox/f').read())")
    assert out["stdout"] == "5 f\n" and out["resumed"] is True, out
    again = sessions.run(sid, "print(x)")
    assert again["resumed"] is False
    assert client.get(f"/sessions/{sid}").json()["resumes"] == 1


def test_the_rl_example_sets_up_once_forks_and_keeps_the_best(server, client):
    path = ROOT / "examples" / "fork_best_of.py"
    spec = importlib.util.spec_from_file_location("fork_best_of", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    rewards = example.main(server.url, rounds=2, api_key=KEY_A, tries=(0.01, 0.1, 0.3))
    assert len(rewards) == 2 and rewards[1] > rewards[0] > float("-inf")
    assert client.get("/sessions").json() == []  # the losing forks were deleted
