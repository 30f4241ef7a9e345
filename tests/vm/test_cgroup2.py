"""sandlot on a fresh Debian 12 with systemd and cgroup v2, as a new user runs it.

A VM (tests/vm/guest.py) gets this repository, and `make serve` runs in it from an ssh login,
with the reduced language set `SANDLOT_LANGUAGES=python,cpp`: the set-up installs what is
missing, the server delegates itself a cgroup and serves. The checks run from the host through
an ssh tunnel: hello worlds, the limits, the main attacks, /health; then, once the server
stopped, nothing is left in the guest. A second server then runs as in a container: in a
cgroup namespace whose /sys/fs/cgroup is a delegated subtree, with no systemd in sight.

Slow (about 7 minutes with its image cached, see docs/development.md); deselect with -m "not vm".
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import unclaimed_processes
from tests.security.test_security import (
    DAEMON,
    MEMORY_BOMB,
    NETWORK_PROBE,
    PRIVS,
    PY_FORK_BOMB,
    READ_PROBE,
    SOCKETS,
    SOCKETS_ALLOWED,
    SOCKETS_REFUSED,
    WRITE_PROBE,
    py,
    token,
)
from tests.vm.guest import SRC, Guest, booted, is_root, stamp

pytestmark = [
    pytest.mark.vm,
    pytest.mark.skipif(not is_root(), reason="the VM test builds its image as root"),
]

SERVE_TIMEOUT = 3600.0  # `make serve` from a bare guest under emulation
UIDS = range(61000, 61000 + 64)  # the default uid_base, and its slots
CONTAINER_PORT = 8081
STALE_SCOPE = "sandlot-999999-dead.scope"  # as a server with pid 999999 would have named it
STALE_MARKER = "sandlot-stale-leftover"
MiB = 1 << 20


@pytest.fixture(scope="module")
def guest() -> Iterator[Guest]:
    started = time.monotonic()
    with booted() as g:
        yield g
    stamp("the VM test, from its image being ready", started)


@pytest.fixture(scope="module")
def client(guest: Guest) -> Iterator[httpx.Client]:
    """`make serve` in the guest, started from an ssh login as docs/deployment.md says."""
    t = time.monotonic()
    # What a server killed hard may leave: its scope, with a process that outlived it.
    guest.ssh(
        f"(setsid systemd-run --scope --unit={STALE_SCOPE} python3 -c "
        f"'import time; time.sleep(3600)  # {STALE_MARKER}' >/dev/null 2>&1 </dev/null &)"
    )
    guest.ssh(
        f"cd {SRC} && (SANDLOT_LANGUAGES=python,cpp setsid make serve >/root/serve.log 2>&1 "
        "</dev/null & echo $! >/root/serve.pid)"
    )
    port = guest.forward(8080)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as c:
        wait_ready(guest, c, "/root/serve.pid", "/root/serve.log", SERVE_TIMEOUT)
        stamp("make serve until /v1/ping answers", t)
        yield c


def wait_ready(guest: Guest, c: httpx.Client, pidfile: str, log: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if c.get("/v1/ping", timeout=10).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if guest.ssh(f"kill -0 $(cat {pidfile})", check=False).returncode != 0:
            break
        time.sleep(10)
    raise AssertionError(f"the server did not come up:\n{guest.ssh(f'tail -60 {log}').stdout}")


def run(c: httpx.Client, code: str, language: str, **fields: object) -> dict:
    r = c.post("/run_code", json={"code": code, "language": language, **fields})
    assert r.status_code == 200, r.text
    return r.json()


def rr(body: dict) -> dict:
    assert body["run_result"] is not None, body
    return body["run_result"]


def probe(c: httpx.Client, code: str, params: dict, **fields: object) -> dict:
    """Run a Python probe (JSON in on stdin, one JSON line out), as tests/deploy/test_image.py
    does."""
    body = run(c, code, "python", stdin=json.dumps(params), **fields)
    assert rr(body)["return_code"] == 0, rr(body)["stderr"] or body
    return json.loads(rr(body)["stdout"].strip().splitlines()[-1])


def box_processes(guest: Guest) -> list[str]:
    """Processes of the sandbox uids in the guest, but for the boxes built ahead."""
    rows = guest.ssh("ps -wweo uid=,pid=,ppid=,args=").stdout.splitlines()
    return unclaimed_processes([line.split(None, 3) for line in rows], UIDS)


def processes_with(guest: Guest, marker: str) -> list[str]:
    rows = guest.ssh("ps -wweo pid=,args=").stdout.splitlines()
    return [r for r in rows if marker in r and "ps -wweo" not in r]


# -- the server `make serve` started ------------------------------------------------------------


def test_health_names_cgroup_v2_and_what_it_got(client):
    r = client.get("/health")
    assert r.status_code == 200, r.text
    iso = r.json()["isolation"]
    assert iso["ready"] and iso["cgroup_version"] == 2, iso
    cg = iso["cgroup"]
    assert cg["controllers"] == ["memory", "pids"], cg
    assert "systemd scope" in cg["delegation"], cg  # an ssh login's session is not delegated
    assert cg["swap"].startswith(("limited", "none active")), cg
    assert {"python", "cpp"} <= set(r.json()["languages"])


def test_a_dead_servers_scope_is_swept(client, guest):
    """The scope of a server that died is emptied at start-up, and systemd then removes it."""
    deadline = time.monotonic() + 30
    while processes_with(guest, STALE_MARKER) and time.monotonic() < deadline:
        time.sleep(1)
    assert processes_with(guest, STALE_MARKER) == []
    gone = guest.ssh(f"systemctl is-active {STALE_SCOPE}", check=False).stdout.strip()
    assert gone in ("inactive", "failed", "unknown", ""), gone


def test_python_and_cpp_hello(client):
    assert rr(run(client, "print('hello')", "python"))["stdout"] == "hello\n"
    cpp = '#include <cstdio>\nint main(){ std::puts("hello"); }\n'
    body = run(client, cpp, "cpp", compile_timeout=120)  # g++ under emulation
    assert body["status"] == "Success" and rr(body)["stdout"] == "hello\n", body


def test_memory_limit_fires(client):
    out = rr(run(client, MEMORY_BOMB, "python", memory_limit_MB=256, run_timeout=60))
    assert out["limit"] == "memory" and "allocated" not in out["stdout"], out
    assert 100 * MiB < out["memory_peak_bytes"] <= 300 * MiB, out
    small = rr(run(client, "x = b'y' * (64 << 20)\nprint(len(x))", "python", memory_limit_MB=256))
    assert small["stdout"] == f"{64 << 20}\n" and small["limit"] is None, small


def test_memory_peak_is_each_runs_own(client):
    """Linux 6.1 cannot reset memory.peak: each run has a cgroup of its own, so a small run
    after a big one in the same slot reports its own peak, not the slot's."""
    health = client.get("/health").json()
    assert health["isolation"]["cgroup"]["memory_peak"].startswith("per run"), health
    slots = health["slots"]
    big = "x = b'y' * (160 << 20)\nprint(len(x))"
    with ThreadPoolExecutor(slots) as pool:  # one big run in every slot
        bigs = list(
            pool.map(lambda _: rr(run(client, big, "python", run_timeout=60)), range(slots))
        )
    assert all(b["memory_peak_bytes"] >= 160 * MiB for b in bigs), bigs
    for _ in range(2 * slots):
        small = rr(run(client, "print(1)", "python"))
        assert small["stdout"] == "1\n" and small["memory_peak_bytes"] < 40 * MiB, small


def test_a_bash_session_keeps_its_state_in_a_cgroup_of_its_own(client, guest):
    """Sessions on cgroup v2: a live box with its own cgroup (bash: an IPython kernel's start
    takes a minute under emulation), its state kept between executions, gone once deleted."""
    r = client.post("/sessions", json={"language": "bash"})
    assert r.status_code == 200, r.text
    sid = r.json()["id"]
    assert r.json()["memory_bytes"] > 0, r.json()  # read from the box's cgroup
    first = client.post(f"/sessions/{sid}/execute", json={"code": "x=41; echo $((x + 1))"})
    assert first.json()["stdout"] == "42\n", first.json()
    again = client.post(f"/sessions/{sid}/execute", json={"code": "echo $x; cat /proc/self/cgroup"})
    assert again.json()["stdout"] == "41\n0::/\n", again.json()  # a cgroup namespace of its own
    assert client.delete(f"/sessions/{sid}").status_code in (200, 204)
    assert client.get(f"/sessions/{sid}").status_code in (404, 410)


FORKS = py("""
    import json, os, sys, time
    made = 0
    try:
        for _ in range(json.load(sys.stdin)["forks"]):
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            made += 1
    except OSError as e:
        print(json.dumps({"made": made, "error": e.strerror}))
    else:
        print(json.dumps({"made": made, "error": None}))
""")


def test_pids_limit_fires(client):
    out = probe(client, FORKS, {"forks": 1000}, run_timeout=120)  # 256 forks: ~35 s emulated
    assert out["error"] is not None and out["made"] < 300, out  # pids = 256 by default


def test_time_limit_fires(client):
    busy = rr(run(client, "while True:\n    pass\n", "python", run_timeout=2))
    assert busy["status"] == "TimeLimitExceeded" and busy["limit"] in ("time", "cpu"), busy
    sleep = rr(run(client, "import time\ntime.sleep(100)\n", "python", run_timeout=2))
    assert sleep["status"] == "TimeLimitExceeded" and sleep["limit"] == "time", sleep


def test_attack_fork_bomb_is_held_and_gone(client, guest):
    out = rr(run(client, PY_FORK_BOMB, "python", run_timeout=3))
    assert out["status"] != "Finished" or out["limit"], out
    deadline = time.monotonic() + 10
    while box_processes(guest) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert box_processes(guest) == []
    assert rr(run(client, "print(1)", "python"))["stdout"] == "1\n"


def test_attack_read_host_files(client):
    paths = ["/etc/shadow", "/root/serve.log", f"{SRC}/Makefile", f"{SRC}/sandlot/jail/pool.py",
             "/root/.ssh/authorized_keys", "/proc/1/environ", "/run/sandlot/x"]  # fmt: skip
    out = probe(client, READ_PROBE, {"paths": paths, "dirs": ["/root", SRC, "/run/sandlot"]})
    leaked = {p: r for p, r in out["reads"].items() if not r.startswith("error")}
    # /proc/1 in a box is the box's own init, whose environment is empty.
    assert set(leaked) <= {"/proc/1/environ"} and leaked.get("/proc/1/environ", "read: ") == (
        "read: "
    ), leaked
    listed = {d: v for d, v in out["listings"].items() if isinstance(v, list)}
    assert listed == {}, listed
    assert "SANDLOT_" not in out["raw_env"], "the server's environment reached the box"


def test_attack_network_out(client):
    out = probe(client, NETWORK_PROBE, {"port": 8080}, run_timeout=30)
    for name in ("public_ipv4", "public_ipv6", "udp_dns"):
        assert out[name] not in ("connected", "sent"), out
    assert out["server_port"].startswith("ConnectionRefusedError"), out
    assert out["interfaces"] == ["lo"], out


def test_attack_write_outside_the_box(client, guest):
    name = f"sandlot-pwned-{token()}"
    files = [f"/{name}", f"/etc/{name}", f"/usr/{name}", f"/root/{name}", f"{SRC}/{name}",
             f"/opt/sandlot/{name}", f"/opt/sandlot/python/{name}"]  # fmt: skip
    out = probe(client, WRITE_PROBE, {"files": files, "dirs": [f"/{name}.d"]})
    succeeded = {p: r for p, r in out.items() if not r.startswith("error")}
    assert succeeded == {}, succeeded
    found = guest.ssh(f"ls -d /{name}* /etc/{name} /usr/{name} /root/{name} {SRC}/{name} "
                      f"/opt/sandlot/{name} 2>/dev/null; true").stdout  # fmt: skip
    assert found.strip() == ""


def test_attack_privileges(client):
    """No capability, no_new_privs, the jail's seccomp filter, a uid that is not root."""
    out = json.loads(
        rr(run(client, PRIVS, "python", stdin=json.dumps({"marker": "sleep"})))[
            "stdout"
        ].splitlines()[0]
    )
    assert out["NoNewPrivs"] == "1" and out["Seccomp"] == "2", out
    assert all(int(v, 16) == 0 for k, v in out.items() if k.startswith("Cap")), out
    assert "0" not in out["Uid"].split() and out["setuid0"] != "ok", out


def test_attack_rare_socket_families_load_no_module(client, guest):
    """Debian's kernel builds SCTP, DCCP, TIPC, RDS, CAN, socket diagnostics, HDLC line
    discipline ... as modules that a socket of theirs (or a pty's ioctl) would load: a box gets
    none of them, and the guest no new module."""
    before = set(guest.ssh("cut -d' ' -f1 /proc/modules").stdout.split())
    out = probe(client, SOCKETS, {})
    assert {k for k in SOCKETS_ALLOWED if out[k] != "ok"} == set(), out
    for errno_name, names in SOCKETS_REFUSED.items():
        assert {k: out[k] for k in names if out[k] != errno_name} == {}, out
    after = set(guest.ssh("cut -d' ' -f1 /proc/modules").stdout.split())
    assert after <= before, f"the box had modules loaded: {after - before}"


def test_attack_daemon_does_not_outlive_its_run(client, guest):
    marker = f"sandlot-daemon-{token()}"
    out = probe(client, DAEMON, {"marker": marker}, run_timeout=10)
    assert out == {"parent": "exited", "daemon_up": True}, out
    deadline = time.monotonic() + 10
    while processes_with(guest, marker) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert processes_with(guest, marker) == []


def test_nothing_left_after_the_server_stops(client, guest):
    make = guest.ssh("cat /root/serve.pid").stdout.strip()
    guest.ssh(f"kill -TERM $(pgrep -P {make})")  # `make serve` runs the server as its child
    guest.ssh(f"while kill -0 {make} 2>/dev/null; do sleep 1; done", timeout=120)
    assert_guest_clean(guest)


# -- a second server as in a container: a delegated subtree, its own cgroup namespace ----------


def test_container_like_delegated_subtree_without_systemd(guest):
    """/sys/fs/cgroup is the root of a cgroup namespace over a delegated scope, and systemd is
    hidden: the server moves the namespace's processes into a leaf and enables its controllers."""
    inner = (
        "mount -t tmpfs tmpfs /run/systemd && umount -l /sys/fs/cgroup && "
        "mount -t cgroup2 cgroup2 /sys/fs/cgroup && "
        f"exec {SRC}/.venv/bin/sandlot serve --host 127.0.0.1 --port {CONTAINER_PORT}"
    )
    guest.ssh(
        "(setsid systemd-run --scope -p Delegate=yes --unit=sandlot-container-test "
        f"unshare --cgroup --mount --propagation private sh -c '{inner}' "
        ">/root/container.log 2>&1 </dev/null & echo $! >/root/container.pid)"
    )
    port = guest.forward(CONTAINER_PORT)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as c:
        wait_ready(guest, c, "/root/container.pid", "/root/container.log", 600)
        iso = c.get("/health").json()["isolation"]
        assert iso["ready"] and iso["cgroup_version"] == 2, iso
        assert iso["cgroup"]["delegation"].endswith("processes moved into server/"), iso
        assert iso["cgroup"]["tree"].startswith("/sys/fs/cgroup/sandlot-"), iso
        assert rr(run(c, "print('hi')", "python"))["stdout"] == "hi\n"
        assert rr(run(c, MEMORY_BOMB, "python", memory_limit_MB=128))["limit"] == "memory"
    pid = guest.ssh("cat /root/container.pid").stdout.strip()  # setsid, systemd-run, unshare
    guest.ssh(f"kill -TERM {pid}")  # and sh exec one another: this is the server's pid
    guest.ssh(f"while kill -0 {pid} 2>/dev/null; do sleep 1; done", timeout=120)
    assert_guest_clean(guest)


def assert_guest_clean(guest: Guest) -> None:
    """No sandbox process, work-dir mount, sandlot cgroup or state dir is left in the guest."""
    deadline = time.monotonic() + 30  # systemd removes a scope's cgroup once it is empty
    while time.monotonic() < deadline:
        cgroups = guest.ssh("find /sys/fs/cgroup -name 'sandlot-*'", check=False).stdout.split()
        if not cgroups:
            break
        time.sleep(1)
    assert cgroups == []
    assert box_processes(guest) == []
    assert guest.ssh("grep -c sandlot /proc/mounts", check=False).stdout.strip() == "0"
    assert guest.ssh("ls -A /run/sandlot 2>/dev/null", check=False).stdout.strip() == ""
