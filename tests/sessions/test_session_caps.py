"""The server's session caps against forks, resumes and the pool of kernels started ahead, through
a real server: each cap holds with a clear 4xx that says what to change, one key's storm leaves
another key its share, and the pool never takes the boxes past `session_max` + `session_pool`.
Attacks first, each with its control (the same request within the caps is served)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Server, running_server
from tests.security.test_security_sessions import wait_until
from tests.sessions.test_session_forks import Sessions, keyed, on_disk

MiB = 1 << 20
KEY_A, KEY_B, KEY_C = (f"caps-{k}-key-0123456789" for k in "abc")
SESSION_MAX = 4
PER_CLIENT = 2
POOL = 2
FORK_MAX = 8  # above the caps: what refuses a fork here is a cap, not its count
QUOTA = 8 * MiB
MAX_LAYERS = 64  # sandlot.jail.layers.MAX_LAYERS: frozen layers a box stacks at most

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    env = {
        "SANDLOT_API_KEYS": f"{KEY_A},{KEY_B},{KEY_C}",
        "SANDLOT_SESSION_POOL": str(POOL),
        "SANDLOT_SESSION_MAX": str(SESSION_MAX),
        "SANDLOT_SESSION_PER_CLIENT": str(PER_CLIENT),
        "SANDLOT_SESSION_DISK_BYTES": str(32 * MiB),
        "SANDLOT_SNAPSHOT_QUOTA": str(QUOTA),
        "SANDLOT_FORK_MAX": str(FORK_MAX),
    }
    with running_server("--slots", "1", env=env) as srv:
        yield srv


def tenant(server: Server, key: str) -> Iterator[Sessions]:
    with keyed(server, key) as client:
        made = Sessions(client)
        yield made
        made.close()
        for s in client.get("/sessions").json():  # forks a test made by hand, resumed ones
            client.delete(f"/sessions/{s['id']}")


@pytest.fixture
def a(server: Server) -> Iterator[Sessions]:
    yield from tenant(server, KEY_A)


@pytest.fixture
def b(server: Server) -> Iterator[Sessions]:
    yield from tenant(server, KEY_B)


@pytest.fixture
def c(server: Server) -> Iterator[Sessions]:
    yield from tenant(server, KEY_C)


def listed(s: Sessions) -> list[str]:
    return sorted(x["id"] for x in s.client.get("/sessions").json())


def status(s: Sessions, sid: str) -> str:
    return s.client.get(f"/sessions/{sid}").json()["status"]


def boxes(server: Server) -> int:
    """The server's live boxes (sessions, the pool's kernels, notebooks): their cgroups, as the
    host sees them (children of the server's worker's jail cgroup)."""
    workers = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
    found = set()
    for pid in [str(server.proc.pid), *workers]:
        for jail in Path("/sys/fs/cgroup/memory").glob(f"**/sandlot-{pid}-*"):
            found |= {p.name for p in jail.iterdir() if p.name.startswith("live-")}
    return len(found)


def refused(r: httpx.Response, status: int, *words: str) -> str:
    """The answer refused with `status`, its detail saying each of `words`."""
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    for word in words:
        assert word in detail, detail
    return detail


# -- a fork's own fields ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"count": 1000},
        {"count": 0},
        {"count": -1},
        {"count": 2**70},
        {"count": 2.5},
        {"count": None},
        {"count": [1]},
        {"count": 1, "memory_limit_MB": 10**9},
        {"count": 1, "idle_timeout": 1e308},
        {"count": 1, "lifetime": -1},
    ],
    ids=repr,
)
def test_attack_a_fork_of_a_thousand_or_of_junk_is_a_clear_4xx_and_makes_nothing(a, fields):
    parent = a.new()
    r = a.client.post(f"/sessions/{parent}/fork", json=fields)
    assert r.status_code in (400, 422), r.text
    detail = r.json()["detail"]
    assert re.search("count|memory_limit_MB|idle_timeout|lifetime", detail), detail
    if fields["count"] == 1000:
        assert f"from 1 to {FORK_MAX}" in detail  # what to change, and to what
    assert listed(a) == [parent]
    assert len(a.fork(parent, 1)) == 1  # control: a fork within the bounds is made


# -- the caps -----------------------------------------------------------------------------------


def test_attack_a_fork_past_the_clients_share_is_refused_whole_and_another_key_is_unaffected(
    server, a, b
):
    parent = a.new()
    before = boxes(server)
    r = a.client.post(f"/sessions/{parent}/fork", json={"count": PER_CLIENT})
    refused(r, 429, f"maximum of {PER_CLIENT} live sessions", "DELETE /sessions")
    assert int(r.headers["retry-after"]) >= 1
    assert listed(a) == [parent]  # nothing of it was made
    assert boxes(server) <= before  # nor started (the pool may only have refilled meanwhile)
    # another key still has its whole share, forks included
    other = b.new()
    assert len(b.fork(other, PER_CLIENT - 1)) == PER_CLIENT - 1
    # control: within its share the fork is made; then a fork of that fork counts the same
    (kid,) = a.fork(parent, 1)
    r = a.client.post(f"/sessions/{kid}/fork", json={"count": 1})
    refused(r, 429, f"maximum of {PER_CLIENT} live sessions")
    assert len(listed(a)) == PER_CLIENT


def test_the_server_maximum_is_shared_first_come_and_the_pool_never_passes_it(server, a, b, c):
    """session_per_client is each client's share; session_max is the server's, first come
    (docs/sessions.md): with both full, a third key waits for one to end, as the 429 says."""
    for s in (a, b):
        s.fork(s.new(), PER_CLIENT - 1)
    r = c.client.post("/sessions", json={"language": "python"})
    refused(r, 429, f"this server holds its maximum of {SESSION_MAX} live sessions")
    # the pool's kernels wait beside the sessions, not in their place: SESSION_MAX + POOL boxes
    wait_until(lambda: c.client.get("/health").json()["sessions"]["pool_ready"] == POOL, 120,
               "the pool did not fill up")  # fmt: skip
    health = c.client.get("/health").json()["sessions"]
    assert (health["live"], health["max"]) == (SESSION_MAX, SESSION_MAX)
    assert boxes(server) == SESSION_MAX + POOL
    # refused requests start no box, a fork's no more than a session's
    refused(a.client.post(f"/sessions/{a.made[0]}/fork", json={"count": 1}), 429)
    refused(c.client.post("/sessions", json={"language": "python"}), 429)
    assert boxes(server) == SESSION_MAX + POOL
    # control: once one ends, the third key gets its session, from the pool
    assert b.client.delete(f"/sessions/{b.made[0]}").status_code == 200
    c.new()
    wait_until(lambda: boxes(server) == SESSION_MAX + POOL, 120, "the pool did not refill")
    assert boxes(server) == SESSION_MAX + POOL  # and the pool refilled to its size, no further


def test_a_resume_or_a_fork_of_a_paused_session_past_the_cap_is_refused_and_it_stays_paused(a):
    sid = a.new(pause_after=1)
    a.out(sid, "x = 7")
    wait_until(lambda: status(a, sid) == "paused", 60, "the session was not paused")
    # a paused session holds no box and is not live: its client may make others meanwhile
    others = [a.new() for _ in range(PER_CLIENT)]
    r = a.client.post(f"/sessions/{sid}/execute", json={"code": "print(x)"})
    refused(r, 429, f"maximum of {PER_CLIENT} live sessions", "DELETE /sessions")
    assert status(a, sid) == "paused"
    assert a.client.delete(f"/sessions/{others.pop()}").status_code == 200
    # one live: its resume would fit, its resume and a fork would not (refused whole)
    r = a.client.post(f"/sessions/{sid}/fork", json={"count": 1})
    refused(r, 429, f"maximum of {PER_CLIENT} live sessions")
    assert status(a, sid) == "paused"
    assert a.client.delete(f"/sessions/{others.pop()}").status_code == 200
    # control: with room for both, the fork resumes it and has its state
    (kid,) = a.fork(sid, 1)
    assert a.out(kid, "print(x)") == "7\n"  # (and the parent may pause again: pause_after=1)


# -- the snapshot quota and the layers ----------------------------------------------------------


def test_attack_a_line_of_forks_each_ending_its_parent_is_held_to_the_quota(server, a, b):
    """A fork's frozen layers stay in memory while a session stacks them, charged to the box
    that wrote them only while it lives: forking and deleting the parent, generation after
    generation, would hold layers no session's memory limit counts. They count against the
    key's snapshot quota, as its snapshots' layers do."""
    third = QUOTA // 3 + MiB  # three generations of it are over the quota, two are not
    sid = a.new()
    for generation in range(2):
        a.out(sid, f"open('g{generation}', 'wb').write(b'x' * {third})")
        (sid,) = a.fork(sid, 1)
        assert a.client.delete(f"/sessions/{a.made[-2]}").status_code == 200
    a.out(sid, f"open('g2', 'wb').write(b'x' * {third})")
    before = on_disk(server)
    r = a.client.post(f"/sessions/{sid}/fork", json={"count": 1})
    refused(r, 507, "this fork needs", "quota", "DELETE /sessions")
    assert listed(a) == [sid] and on_disk(server) == before  # nothing made
    assert a.out(sid, "import os; print(sorted(os.listdir('.')))") == "['g0', 'g1', 'g2']\n"
    # another key has its own quota
    other = b.new()
    b.out(other, f"open('g', 'wb').write(b'x' * {third})")
    assert len(b.fork(other, 1)) == 1
    # control: without the line's layers, the same fork is made
    assert a.client.delete(f"/sessions/{sid}").status_code == 200
    fresh = a.new()
    a.out(fresh, f"open('g', 'wb').write(b'x' * {third})")
    assert len(a.fork(fresh, 1)) == 1


def test_attack_snapshots_deleted_at_once_do_not_free_the_quota_their_session_holds(a):
    """A deleted snapshot's layers stay on disk while its session stacks them: they count
    against the quota until the session ends, else snapshot-and-delete would fill the disk."""
    third = QUOTA // 3 + MiB
    sid = a.new()
    for generation in range(2):
        a.out(sid, f"open('g{generation}', 'wb').write(b'x' * {third})")
        snap = a.snapshot(sid)["id"]
        assert a.client.delete(f"/snapshots/{snap}").status_code == 200
        a.snapshots.remove(snap)
    a.out(sid, f"open('g2', 'wb').write(b'x' * {third})")
    refused(a.client.post(f"/sessions/{sid}/snapshot"), 507, "quota")
    assert a.client.get("/snapshots").json() == []
    # control: a session of its own size is snapshotted once the other is gone
    assert a.client.delete(f"/sessions/{sid}").status_code == 200
    fresh = a.new()
    a.out(fresh, f"open('g', 'wb').write(b'x' * {third})")
    a.snapshot(fresh)


def test_a_fork_over_the_quota_is_refused_whole(server, a):
    parent = a.new()
    a.out(parent, f"open('big', 'wb').write(b'x' * {QUOTA + MiB})")
    before = on_disk(server)
    refused(a.client.post(f"/sessions/{parent}/fork", json={"count": 1}), 507, "quota")
    refused(a.client.post(f"/sessions/{parent}/snapshot"), 507, "quota", "DELETE /snapshots")
    assert listed(a) == [parent] and on_disk(server) == before  # nothing half-made
    # control: without the big file, it forks
    a.out(parent, "import os; os.remove('big')")
    assert len(a.fork(parent, 1)) == 1


def test_a_snapshot_deleted_at_once_leaves_the_layers_its_session_stacks(a):
    """A snapshot's layers go to disk behind its answer; deleting it meanwhile must not remove a
    layer its session (and its forks) still stack."""
    sid = a.new()
    a.out(sid, "x = 1; open('f', 'w').write('f')")
    for _ in range(8):
        r = a.client.post(f"/sessions/{sid}/snapshot")
        assert r.status_code == 200, r.text
        assert a.client.delete(f"/snapshots/{r.json()['id']}").status_code == 200
    (kid,) = a.fork(sid, 1)
    assert a.out(kid, "print(x, open('f').read())") == "1 f\n"


def test_a_lineage_past_the_layers_a_box_stacks_is_a_clear_409(a):
    sid = a.new()
    a.out(sid, "x = 1")
    before = a.client.get("/snapshots").json()
    for _ in range(MAX_LAYERS):
        a.snapshot(sid)
        assert a.client.delete(f"/snapshots/{a.snapshots.pop()}").status_code == 200
    detail = refused(a.client.post(f"/sessions/{sid}/snapshot"), 409, f"at most {MAX_LAYERS}")
    assert "POST /sessions" in detail
    refused(a.client.post(f"/sessions/{sid}/fork", json={"count": 1}), 409, "at most")
    assert a.out(sid, "print(x)") == "1\n"  # the session goes on
    assert a.client.get("/snapshots").json() == before, before  # nothing half-made
    # control: a new session is snapshotted
    a.snapshot(a.new())
