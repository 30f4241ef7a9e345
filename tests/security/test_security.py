"""Security tests as named attacks, each run through a real `sandlot serve`.

Every attack runs three times, once per way of building a box: "warm", the default (the zygote
builds every box, Python runs in forks of its warm interpreter); "zygote" (the zygote builds the
box and execs a cold interpreter, as for every other language); "bwrap" (bubblewrap per run).

Every test mounts one attack from inside a box, asserts that it was contained, and then that the
server is still healthy: `/health` answers 200, a trivial run works, and no process of the run
outlives it. Assertion messages say what leaked.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import textwrap
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import STATE_ROOT, UIDS, Server, running_server, sandlot_processes

pytestmark = [pytest.mark.root, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20
OUTPUT_CAP = 8 * MiB
# What a box's environment may hold: the jail's defaults, what shells and languages add.
ALLOWED_ENV = {
    "PATH", "HOME", "TMPDIR", "LANG", "USER", "PWD", "OLDPWD", "SHLVL", "_",
    "PYTHONDONTWRITEBYTECODE", "MPLBACKEND", "OPENBLAS_NUM_THREADS", "LC_CTYPE",
}  # fmt: skip


# -- helpers -------------------------------------------------------------------------------------


def py(src: str) -> str:
    return textwrap.dedent(src).lstrip()


def token() -> str:
    return uuid.uuid4().hex[:12]


def host_processes() -> list[dict]:
    """Every process on this machine: uid, pid, ppid, state and arguments."""
    out = subprocess.run(
        ["ps", "-wweo", "uid=,pid=,ppid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    procs = []
    for line in out.splitlines():
        parts = line.split(None, 4)
        if len(parts) >= 4:
            uid, pid, ppid, stat = parts[:4]
            args = parts[4] if len(parts) > 4 else ""
            procs.append(
                {"uid": int(uid), "pid": int(pid), "ppid": int(ppid), "stat": stat, "args": args}
            )
    return procs


def box_processes(server: Server) -> list[str]:
    """Processes (zombies too) running as one of this test session's sandbox uids."""
    assert server.alive(), f"the server died:\n{server.output()}"
    return sandlot_processes()


def processes_with(marker: str) -> list[str]:
    """Live processes (any uid) whose arguments carry the marker."""
    return [
        f"uid={p['uid']} pid={p['pid']} {p['args'][:200]}"
        for p in host_processes()
        if marker in p["args"] and not p["stat"].startswith("Z") and p["pid"] != os.getpid()
        and "ps -eo" not in p["args"]
    ]  # fmt: skip


def wait_gone(probe, timeout: float) -> list[str]:
    """Poll `probe()` until it returns nothing or the timeout passes; returns the last answer."""
    deadline = time.monotonic() + timeout
    left = probe()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = probe()
    return left


def spawners(server: Server) -> set[int]:
    """Pids of the server's per-slot spawner processes."""
    return {
        p["pid"]
        for p in host_processes()
        if p["ppid"] == server.proc.pid and "sandlot.jail" in p["args"]
    }


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def assert_healthy(client: httpx.Client, server: Server, spawners_before: set[int] | None = None):
    """The server is alive, /health is 200, a trivial run works, nothing of the attack is left."""
    assert server.alive(), f"the attack killed the server:\n{server.output()}"
    h = client.get("/health", timeout=30)
    assert h.status_code == 200, f"/health after the attack: {h.status_code} {h.text}"
    assert h.json()["status"] == "ok", f"/health after the attack: {h.text}"
    r = client.post("/run_code", json={"code": "echo alive", "language": "bash"})
    assert r.status_code == 200, f"a trivial run after the attack: {r.status_code} {r.text}"
    body = r.json()
    assert body["status"] == "Success", f"a trivial run after the attack failed: {body}"
    assert body["run_result"]["stdout"] == "alive\n", f"a trivial run after the attack: {body}"
    left = wait_gone(lambda: box_processes(server), 5)
    assert left == [], f"processes of the attack outlived their run: {left}"
    if spawners_before is not None:
        assert spawners(server) == spawners_before, "the attack killed or replaced a spawner"
    assert server.alive(), f"the server died:\n{server.output()}"


BOX_MODES = {
    "warm": {"SANDLOT_WARM_PYTHON": "true", "SANDLOT_BOXES": "zygote"},
    "zygote": {"SANDLOT_WARM_PYTHON": "false", "SANDLOT_BOXES": "zygote"},
    "bwrap": {"SANDLOT_WARM_PYTHON": "false", "SANDLOT_BOXES": "bwrap"},
}


# A private key as a host keeps one: root's, mode 0600, under /etc/ssl/private. Boxes see a
# copy of the host's /etc/ssl; this file must not be in it.
HOST_KEY = Path(f"/etc/ssl/private/sandlot-test-{os.getpid()}.key")


@pytest.fixture(scope="module")
def host_key():
    HOST_KEY.parent.mkdir(mode=0o700, exist_ok=True)
    HOST_KEY.write_text("-----BEGIN PRIVATE KEY-----\nsecret\n")
    HOST_KEY.chmod(0o600)
    yield HOST_KEY
    HOST_KEY.unlink()


@pytest.fixture(scope="module", params=list(BOX_MODES))
def server(request, host_key):
    with running_server("--slots", "2", env=BOX_MODES[request.param]) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


@pytest.fixture(autouse=True)
def _languages_present(server: Server, client: httpx.Client) -> None:
    """The attacks are written in Python and bash: both must be there."""
    langs = client.get("/health").json().get("languages", [])
    assert "python" in langs and "bash" in langs, f"the server lacks python or bash: {langs}"


def run_json(run, code: str, params: dict | None = None, **fields) -> tuple[dict, dict]:
    """Run a Python program that gets `params` as JSON on stdin and prints one JSON line."""
    body = run(code, "python", stdin=json.dumps(params or {}), **fields)
    rr = body["run_result"]
    assert rr is not None and rr["status"] == "Finished" and rr["return_code"] == 0, (
        f"the probe program itself failed: {body}"
    )
    return json.loads(rr["stdout"].strip().splitlines()[-1]), body


# -- 1. network ----------------------------------------------------------------------------------

NETWORK_PROBE = py("""
    import json, socket, sys
    p = json.load(sys.stdin)
    out = {}
    targets = {
        "public_ipv4": (socket.AF_INET, ("1.1.1.1", 80)),
        "public_ipv6": (socket.AF_INET6, ("2606:4700:4700::1111", 80)),
        "server_port": (socket.AF_INET, ("127.0.0.1", p["port"])),
    }
    for name, (family, addr) in targets.items():
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect(addr)
            out[name] = "connected"
        except OSError as e:
            out[name] = f"{type(e).__name__}: {e}"
        finally:
            s.close()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.sendto(b"\\0" * 12, ("8.8.8.8", 53))
        out["udp_dns"] = "sent"
    except OSError as e:
        out["udp_dns"] = f"{type(e).__name__}: {e}"
    for host in ("example.com", "one.one.one.one"):
        try:
            out["resolve " + host] = str(socket.getaddrinfo(host, 80))
        except OSError as e:
            out["resolve " + host] = f"failed: {e}"
    lines = open("/proc/net/dev").read().splitlines()[2:]
    out["interfaces"] = sorted(line.split(":")[0].strip() for line in lines)
    print(json.dumps(out))
""")


def test_attack_outbound_network(run, client, server):
    """Outbound TCP/UDP/DNS and the server's own port: all fail, the box has only its own lo."""
    out, _ = run_json(run, NETWORK_PROBE, {"port": server.port}, run_timeout=20)
    for name in ("public_ipv4", "public_ipv6", "udp_dns"):
        assert out[name] not in ("connected", "sent"), f"network leak: {name} reached: {out}"
    assert out["server_port"].startswith("ConnectionRefusedError"), (
        f"the box reached the server's port {server.port} on the host loopback: {out}"
    )
    for host in ("example.com", "one.one.one.one"):
        assert out["resolve " + host].startswith("failed"), f"DNS leak: {out}"
    assert out["interfaces"] == ["lo"], f"the box sees host interfaces: {out['interfaces']}"
    assert_healthy(client, server)


# -- 2. reading host files -----------------------------------------------------------------------

READ_PROBE = py("""
    import json, os, sys
    p = json.load(sys.stdin)
    reads = {}
    for path in p["paths"]:
        try:
            with open(path, "rb") as f:
                reads[path] = "read: " + f.read(4096).decode(errors="replace")
        except OSError as e:
            reads[path] = f"error: {type(e).__name__}: {e}"
    listings = {}
    for d in p["dirs"]:
        try:
            listings[d] = sorted(os.listdir(d))
        except OSError as e:
            listings[d] = f"error: {e}"
    passwd = open("/etc/passwd").read()
    env = dict(os.environ)
    proc_env = open("/proc/self/environ", "rb").read().decode(errors="replace")
    init_env = ""
    try:
        init_env = open("/proc/1/environ", "rb").read().decode(errors="replace")
    except OSError:
        pass
    print(json.dumps({"reads": reads, "listings": listings, "passwd": passwd, "env": env,
                      "raw_env": proc_env + init_env}))
""")


def test_attack_read_host_files(run, client, server):
    """Read /etc/shadow, the server's code, /proc and env of the server: nothing of the host."""
    pid = server.proc.pid
    pool = ROOT / "sandlot" / "jail" / "pool.py"
    server_log = f"/tmp/sandlot-test-{server.port}.log"
    paths = [
        "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root/.bash_history",
        str(pool), str(ROOT / "pyproject.toml"), server_log,
        f"/proc/{pid}/environ", f"/proc/{pid}/cmdline", f"/proc/{pid}/root/etc/shadow",
        f"{STATE_ROOT}/x",
    ]  # fmt: skip
    dirs = ["/etc", str(ROOT), str(ROOT / "sandlot"), STATE_ROOT, f"/proc/{pid}", "/root"]
    out, _ = run_json(run, READ_PROBE, {"paths": paths, "dirs": dirs})

    leaked = {p: r for p, r in out["reads"].items() if not r.startswith("error")}
    assert leaked == {}, f"host files readable in the box: {leaked}"
    listed = {d: v for d, v in out["listings"].items() if d != "/etc" and isinstance(v, list)}
    assert listed == {}, f"host directories listable in the box: {listed}"
    for name in ("shadow", "gshadow", "sudoers", "ssh", "sudoers.d", "crontab", "environment"):
        assert name not in out["listings"]["/etc"], f"host /etc/{name} visible in the box"

    head = pool.read_text()[:200]
    assert not any(head in r for r in out["reads"].values()), "the server's code leaked"

    # /etc/passwd in the box is synthetic: no host account shows up in it.
    host_users = {
        line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines() if ":" in line
    } - {"root", "nobody"}
    box_users = {line.split(":")[0] for line in out["passwd"].splitlines() if ":" in line}
    assert not (box_users & host_users), f"host accounts in the box: {box_users & host_users}"

    # The server's environment: its variable names (but the jail's defaults) and values.
    server_env = dict(
        item.split("=", 1)
        for item in Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
        if "=" in item
    )
    assert "SANDLOT_STATE_DIR" in server_env  # the canary conftest gives the server
    extra = set(out["env"]) - ALLOWED_ENV
    assert extra == set(), f"unexpected variables in the box: { {k: out['env'][k] for k in extra} }"
    names = {k for k in server_env if k in out["env"] and k not in ALLOWED_ENV}
    assert names == set(), f"server variables leaked into the box: {names}"
    allowed_values = set(out["env"].values())
    values = {
        k
        for k, v in server_env.items()
        if len(v) >= 8 and v not in allowed_values and v in out["raw_env"]
    }
    assert values == set(), f"values of server variables leaked into the box: {values}"
    assert_healthy(client, server)


# -- 3. writing outside the box ------------------------------------------------------------------

WRITE_PROBE = py("""
    import json, os, sys
    p = json.load(sys.stdin)
    out = {}
    for path in p["files"]:
        try:
            with open(path, "x") as f:
                f.write("pwned")
            out[path] = "written"
        except OSError as e:
            out[path] = f"error: {type(e).__name__}: {e}"
    for path in p["dirs"]:
        try:
            os.mkdir(path)
            out[path] = "created"
        except OSError as e:
            out[path] = f"error: {type(e).__name__}: {e}"
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
        out["/proc/sys/vm/drop_caches"] = "written"
    except OSError as e:
        out["/proc/sys/vm/drop_caches"] = f"error: {e}"
    print(json.dumps(out))
""")


def test_attack_write_outside_box(run, client, server):
    """Write into /usr, /etc, /, /dev, /bin, the repo, the runtimes: all fail, none on the host."""
    t = token()
    name = f"sandlot-pwned-{t}"
    files = [
        f"/{name}", f"/usr/{name}", f"/etc/{name}", f"/bin/{name}", f"/usr/local/{name}",
        f"/sandbox/../{name}", f"/proc/1/root/{name}", str(ROOT / name), f"/opt/sandlot/{name}",
        f"/opt/sandlot/python/{name}", f"/dev/{name}",
    ]  # fmt: skip
    dirs = [f"/{name}.d", f"/usr/{name}.d", f"/etc/{name}.d"]
    out, _ = run_json(run, WRITE_PROBE, {"files": files, "dirs": dirs})

    on_host = [p for p in (*files, *dirs) if os.path.lexists(os.path.normpath(p))]
    for p in on_host:  # leave the host clean even when the test fails
        if os.path.isdir(p):
            os.rmdir(p)
        else:
            os.unlink(p)
    assert on_host == [], f"files written from the box appeared on the host: {on_host}"
    assert out["/proc/sys/vm/drop_caches"].startswith("error"), "the box wrote a host sysctl"
    succeeded = {p: r for p, r in out.items() if not r.startswith("error")}
    assert succeeded == {}, f"writes outside the work dir succeeded inside the box: {succeeded}"
    assert_healthy(client, server)


# -- 4. files across runs ------------------------------------------------------------------------

WRITER = py("""
    import json, os, sys, time
    p = json.load(sys.stdin)
    for d in p["dirs"]:
        try:
            with open(os.path.join(d, p["name"]), "w") as f:
                f.write("secret")
        except OSError:
            pass
    os.makedirs("/sandbox/sub", exist_ok=True)
    open("/sandbox/sub/" + p["name"], "w").write("secret")
    written = time.time()
    time.sleep(p["hold"])
    print(json.dumps({"uid": os.getuid(), "written": written, "until": time.time()}))
""")

READER = py("""
    import json, os, sys, time
    p = json.load(sys.stdin)
    start = time.time()
    seen = set()
    while True:
        for d in [*p["dirs"], "/sandbox/sub"]:
            try:
                for entry in os.listdir(d):
                    if p["name"] in entry:
                        seen.add(os.path.join(d, entry))
            except OSError:
                pass
        if time.time() - start >= p["watch"]:
            break
        time.sleep(0.02)
    end = time.time()
    print(json.dumps({"uid": os.getuid(), "seen": sorted(seen), "start": start, "end": end}))
""")


def test_attack_files_leak_between_runs(run, client, server):
    """Files a run writes in /tmp, /sandbox, /dev/shm, /: unseen later and by a parallel run."""
    params = {"name": f"secret-{token()}", "dirs": ["/tmp", "/sandbox", "/dev/shm", "/", "/etc"]}

    # Later runs: with two slots, two readers after the writer cover the writer's slot too.
    writer, _ = run_json(run, WRITER, {**params, "hold": 0})
    readers = [run_json(run, READER, {**params, "watch": 0})[0] for _ in range(2)]
    for r in readers:
        assert r["seen"] == [], f"a later run (uid {r['uid']}) saw files of an earlier one: {r}"
    assert writer["uid"] in {r["uid"] for r in readers}, "no reader ran in the writer's slot"

    # A run at the same time, in the other slot.
    with ThreadPoolExecutor(2) as pool:
        w = pool.submit(run_json, run, WRITER, {**params, "hold": 4})
        time.sleep(0.3)
        r = pool.submit(run_json, run, READER, {**params, "watch": 2.5})
        writer, reader = w.result()[0], r.result()[0]
    assert reader["seen"] == [], f"a parallel run saw the files of another: {reader}"
    assert writer["uid"] != reader["uid"], "the two runs did not use different slots"
    assert reader["start"] < writer["until"] and reader["end"] > writer["written"], (
        f"the runs did not overlap (machine too slow?): writer {writer}, reader {reader}"
    )
    assert_healthy(client, server)


# -- 5. fork bomb --------------------------------------------------------------------------------

PY_FORK_BOMB = py("""
    import os, time
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.001)
""")


def test_attack_fork_bomb(run, client, server):
    """Python and bash fork bombs: the run ends, the other slot keeps working, nothing is left."""
    before = spawners(server)
    for language, code, timeout in (
        ("python", PY_FORK_BOMB, 3),
        ("bash", ":(){ :|:& };:\nsleep 3\n", 2),
    ):
        with ThreadPoolExecutor(1) as pool:
            bomb = pool.submit(run, code, language, run_timeout=timeout)
            time.sleep(1)
            # The neighbour finishes within its own limit (else TimeLimitExceeded), the bomb
            # is still going: the other slot was not starved.
            other = run("echo neighbour", "bash", run_timeout=10)
            body = bomb.result()
        assert other["run_result"]["stdout"] == "neighbour\n", (
            f"a run beside the {language} fork bomb failed: {other}"
        )
        assert other["run_result"]["status"] == "Finished", other
        rr = body["run_result"]
        assert rr is not None, f"{language} fork bomb: no run result: {body}"
        assert rr["status"] != "Finished" or rr["limit"], f"the {language} bomb ran on: {rr}"
        left = wait_gone(lambda: box_processes(server), 5)
        assert left == [], f"{language} fork bomb processes survived: {len(left)}: {left[:5]}"
    assert_healthy(client, server, before)


# -- 6. memory bomb ------------------------------------------------------------------------------

MEMORY_BOMB = py("""
    chunks = []
    for _ in range(64):  # 4 GiB, every page written
        chunks.append(b"\\1" * (64 << 20))
    print("allocated 4 GiB")
""")


def test_attack_memory_bomb(run, client, server):
    """Allocate 4 GiB under a 256 MiB limit: the box is killed (limit memory), the server is not."""
    before = spawners(server)
    server_rss = rss(server.proc.pid)
    body = run(MEMORY_BOMB, "python", memory_limit_MB=256, run_timeout=30)
    rr = body["run_result"]
    assert "allocated" not in rr["stdout"], f"the box got 4 GiB under a 256 MiB limit: {body}"
    assert rr["status"] != "Finished" or rr["return_code"] != 0, f"not stopped: {body}"
    assert rr["limit"] == "memory", f"the memory bomb was not reported as a memory kill: {body}"
    assert rr["memory_peak_bytes"] <= 300 * MiB, (
        f"the box used {rr['memory_peak_bytes'] / MiB:.0f} MiB under a 256 MiB limit"
    )
    grown = rss(server.proc.pid) - server_rss
    assert grown < 100 * MiB, f"the server's memory grew by {grown / MiB:.0f} MiB"
    assert_healthy(client, server, before)


# -- 7. infinite loop ----------------------------------------------------------------------------


def test_attack_infinite_loop(run, client, server):
    """A busy loop, a TERM-ignoring loop and a sleep with run_timeout 1: each is stopped by the
    limit (TimeLimitExceeded), the TERM-ignoring one too."""
    cases = (
        ("python", "while True:\n    pass\n"),
        ("bash", "trap '' TERM INT HUP\nwhile :; do :; done\n"),
        ("bash", "sleep 100\n"),
    )
    for language, code in cases:
        body = run(code, language, run_timeout=1)
        rr = body["run_result"]
        assert rr["status"] == "TimeLimitExceeded", f"{language} {code!r} was not stopped: {body}"
        assert rr["limit"] in ("time", "cpu"), f"{language} {code!r}: limit {rr['limit']!r}"
    assert_healthy(client, server)


# -- 8. a daemon that outlives the run -----------------------------------------------------------

DAEMON = py("""
    import json, os, sys, time
    p = json.load(sys.stdin)
    script = "trap '' HUP TERM INT; : > /tmp/up; sleep 1; echo x > /sandbox/M; echo x > /tmp/M"
    script += "; sleep 30"
    script = script.replace("M", p["marker"])
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sh", ["sh", "-c", script, p["marker"]])
        os._exit(0)
    os.waitpid(pid, 0)
    deadline = time.time() + 5
    while not os.path.exists("/tmp/up") and time.time() < deadline:
        time.sleep(0.01)
    print(json.dumps({"parent": "exited", "daemon_up": os.path.exists("/tmp/up")}))
""")


def test_attack_daemon_outlives_run(run, client, server):
    """A double-forked setsid daemon (parent exits at once): gone with the run, writes nothing."""
    marker = f"sandlot-daemon-{token()}"
    t = time.monotonic()
    # run_json checks the run Finished: had it waited for its 30 s daemon, the 10 s limit fired.
    out, _ = run_json(run, DAEMON, {"marker": marker}, run_timeout=10)
    assert out == {"parent": "exited", "daemon_up": True}, f"the daemon did not start: {out}"
    left = wait_gone(lambda: processes_with(marker) + box_processes(server), 2)
    assert left == [], f"the daemon outlived its run: {left}"
    time.sleep(max(0.0, 1.5 - (time.monotonic() - t)))  # past the moment it would write
    written = [str(p) for p in Path(STATE_ROOT).rglob(f"*{marker}*")]
    assert written == [], f"the daemon wrote into a slot's work dir after its run: {written}"
    assert processes_with(marker) == [], "the daemon came back"
    assert_healthy(client, server)


# -- 9. a flood of output ------------------------------------------------------------------------

STDERR_FLOOD = py("""
    import sys
    block = b"e" * (1 << 20)
    for _ in range(1024):
        sys.stderr.buffer.write(block)
""")


def test_attack_output_flood(run, client, server):
    """1 GiB on stdout (`yes`) and on stderr: stopped at the 8 MiB cap (limit output, not the
    time limit), marked truncated."""
    before = spawners(server)
    for stream, language, code in (("stdout", "bash", "yes\n"), ("stderr", "python", STDERR_FLOOD)):
        body = run(code, language, run_timeout=60)
        rr = body["run_result"]
        assert rr["status"] == "Finished", f"the {stream} flood ran to its time limit: {rr}"
        size = len(rr[stream].encode())
        assert 0 < size <= OUTPUT_CAP, f"{stream} of {size} bytes passed the 8 MiB cap"
        assert rr[f"{stream}_truncated"] is True, f"{stream} not marked truncated: {size} bytes"
        assert rr["limit"] == "output", f"the {stream} flood ended with limit {rr['limit']!r}"
    grown_ok = rss(server.proc.pid) < 1024 * MiB
    assert grown_ok, f"the server holds {rss(server.proc.pid) / MiB:.0f} MiB after the flood"
    assert_healthy(client, server, before)


# -- 10. filling the scratch file systems --------------------------------------------------------

FILL = """\
for target in /tmp/fill /dev/shm/fill /sandbox/fill; do
  dd if=/dev/zero of=$target bs=1M count=1024 2>&1
  echo "$target=${PIPESTATUS[0]}"
done
"""


def test_attack_fill_scratch(run, client, server):
    """Write 1 GiB into /tmp, /dev/shm, /sandbox: each stops short, the next run has room."""
    body = run(FILL, "bash", run_timeout=30)
    rr = body["run_result"]
    if rr["limit"] != "memory":
        for target in ("/tmp/fill", "/dev/shm/fill", "/sandbox/fill"):
            assert f"{target}=0" not in rr["stdout"], f"1 GiB fit into {target}: {rr['stdout']}"
        for target in ("/tmp/fill", "/dev/shm/fill"):
            assert f"{target}=" in rr["stdout"], f"the fill of {target} did not end: {body}"
        assert rr["stdout"].count("No space left on device") >= 2, (
            f"/tmp and /dev/shm did not stop on ENOSPC: {rr['stdout']}"
        )
    again = run(
        "dd if=/dev/zero of=/tmp/a bs=1M count=32 2>/dev/null && "
        "dd if=/dev/zero of=/dev/shm/a bs=1M count=32 2>/dev/null && echo room",
        "bash",
    )
    assert again["run_result"]["stdout"] == "room\n", f"the next run found scratch full: {again}"
    assert_healthy(client, server)


# -- 11. symlinks and paths in files / fetch_files -----------------------------------------------

SYMLINKS = """\
ln -s /etc/passwd link
ln -s /etc dirlink
ln -s /etc d
ln -s / rootlink
ln -s /proc/self/environ envlink
ln -s /proc/1/root procroot
mkdir sub
ln -s /etc/passwd sub/leak
echo fine > sub/ok.txt
ln /etc/passwd hard 2>/dev/null
echo data > ok.txt
"""


def test_attack_symlink_fetch(run, client, server):
    """fetch_files via links to /etc/passwd, /etc, / and /proc: only the box's own files return."""
    host_passwd = Path("/etc/passwd").read_text()
    fetch = [
        "link", "dirlink", "dirlink/passwd", "d/passwd", "rootlink/etc/passwd", "rootlink",
        "envlink", "procroot/etc/passwd", "sub", "hard", "ok.txt",
    ]  # fmt: skip
    body = run(SYMLINKS, "bash", fetch_files=fetch)
    files = {k: base64.b64decode(v) for k, v in body["files"].items()}
    assert files.get("ok.txt") == b"data\n", f"a plain file did not come back: {files}"
    assert files.get("sub/ok.txt") == b"fine\n", f"a file in a directory did not come back: {files}"
    others = {k: v[:200] for k, v in files.items() if k not in ("ok.txt", "sub/ok.txt") and v}
    assert others == {}, f"fetch_files followed a link out of the work dir: {others}"
    first_line = host_passwd.splitlines()[0].encode()
    for key, data in files.items():
        assert first_line not in data and b"root:x:0:0" not in data, f"{key} holds /etc/passwd"
        assert b"SANDLOT_STATE_DIR" not in data, f"{key} holds the server's environment"
    for path in ("/etc/passwd", "../etc/passwd", "sub/../../etc/passwd", "rootlink/../../etc"):
        r = client.post(
            "/run_code", json={"code": SYMLINKS, "language": "bash", "fetch_files": [path]}
        )
        assert r.status_code in (200, 400), f"fetch_files {path!r}: {r.status_code} {r.text}"
        got = (r.json().get("files") or {}) if r.status_code == 200 else {}
        assert got == {}, f"fetch_files {path!r} returned files from outside the work dir: {got}"
    assert_healthy(client, server)


def test_attack_upload_path_escape(client, server):
    """`files` paths that leave the work dir (../x, /etc/x, a/../../x) are refused with 400."""
    name = f"sandlot-escape-{token()}"
    content = base64.b64encode(b"pwned").decode()
    for path in (f"../{name}", f"/etc/{name}", f"a/../../{name}", f"./../{name}", f"/tmp/{name}"):
        r = client.post(
            "/run_code", json={"code": "true", "language": "bash", "files": {path: content}}
        )
        assert r.status_code == 400, f"upload to {path!r} answered {r.status_code}: {r.text}"
    leaked = [str(p) for p in Path(STATE_ROOT).rglob(f"*{name}*")]
    leaked += [p for p in (f"/etc/{name}", f"/tmp/{name}", f"/{name}") if os.path.lexists(p)]
    assert leaked == [], f"an upload escaped the work dir onto the host: {leaked}"
    assert_healthy(client, server)


# -- 12. signalling other processes --------------------------------------------------------------

KILLER = """\
read SERVER SPAWNERS
kill -9 -1; echo "all=$?"
kill -9 1; echo "init=$?"
kill -9 $SERVER; echo "server=$?"
for p in $SPAWNERS; do kill -9 $p; echo "spawner=$?"; done
kill -STOP $SERVER; kill -TERM -$SERVER
python3 -c 'import os; os.kill(-1, 9)' 2>/dev/null
"""


def test_attack_kill_other_processes(run, client, server):
    """kill -9 -1, kill of pid 1, of the server and of its spawners: the server lives on."""
    before = spawners(server)
    stdin = f"{server.proc.pid} {' '.join(map(str, sorted(before)))}\n"
    body = run(KILLER, "bash", stdin=stdin, run_timeout=10)
    out = body["run_result"]["stdout"]
    assert "server=" in out and "spawner=" in out, f"the probe did not run: {body['run_result']}"
    if server.proc.pid > 1000:  # far above any pid a fresh box hands out here
        assert "server=0" not in out, f"the box could signal the server's pid: {out}"
        assert "spawner=0" not in out, f"the box could signal a spawner's pid: {out}"
    assert server.alive(), f"the box killed the server:\n{server.output()}"
    state = Path(f"/proc/{server.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    assert state != "T", "the box stopped the server with SIGSTOP"
    assert spawners(server) == before, "the box killed a spawner"
    assert_healthy(client, server, before)


# -- 13. nested user namespaces ------------------------------------------------------------------

USERNS = """\
unshare -U true; echo "U=$?"
unshare -r id; echo "r=$?"
unshare -Ur true; echo "Ur=$?"
unshare -n true; echo "n=$?"
unshare -m true; echo "m=$?"
unshare -p -f true; echo "p=$?"
python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, flag in (("user", 0x10000000), ("net", 0x40000000), ("mount", 0x00020000)):
    if hasattr(os, "unshare"):
        try:
            os.unshare(flag)
            print(f"py_{name}=0")
        except OSError:
            print(f"py_{name}=1")
    else:
        print(f"py_{name}={0 if libc.unshare(flag) == 0 else 1}")
EOF
"""


def test_attack_nested_user_namespace(run, client, server):
    """unshare -U / -r / -n / -m / -p and Python's unshare(CLONE_NEWUSER, ...): all denied."""
    body = run(USERNS, "bash", run_timeout=20)
    out = body["run_result"]["stdout"]
    results = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    expected = {"U", "r", "Ur", "n", "m", "p", "py_user", "py_net", "py_mount"}
    assert set(results) == expected, f"the probe did not run fully: {body['run_result']}"
    allowed = {k: v for k, v in results.items() if v == "0"}
    assert allowed == {}, f"the box created namespaces: {allowed}: {body['run_result']}"
    assert "uid=0" not in out, f"the box became root in a nested namespace: {out}"
    assert_healthy(client, server)


# -- sockets the kernel would load a module for -------------------------------------------------

SOCKETS = py("""
    import errno, fcntl, json, os, socket, struct, termios
    def attempt(make):
        try:
            make()
            return "ok"
        except OSError as e:
            return errno.errorcode.get(e.errno, str(e.errno))
    def opened(*args):
        return attempt(lambda: socket.socket(*args).close())
    S = socket
    out = {
        "unix": opened(S.AF_UNIX, S.SOCK_STREAM), "tcp": opened(S.AF_INET, S.SOCK_STREAM),
        "udp6": opened(S.AF_INET6, S.SOCK_DGRAM), "mptcp": opened(S.AF_INET, S.SOCK_STREAM, 262),
        "netlink route": opened(S.AF_NETLINK, S.SOCK_RAW, 0),
        "socketpair": attempt(lambda: [s.close() for s in S.socketpair()]),
        "interfaces": str(S.if_nameindex()),
        # a family or protocol the host's kernel would load a module for, or netlink beyond
        # routing
        "tipc": opened(30, S.SOCK_RDM), "rds": opened(21, S.SOCK_SEQPACKET),
        "can": opened(29, S.SOCK_RAW, 1), "alg": opened(38, S.SOCK_SEQPACKET),
        "vsock": opened(40, S.SOCK_STREAM), "packet": opened(S.AF_PACKET, S.SOCK_DGRAM),
        "sctp": opened(S.AF_INET, S.SOCK_STREAM, 132),
        "sctp6": opened(S.AF_INET6, S.SOCK_SEQPACKET, 132),
        "dccp": opened(S.AF_INET, 6, 33), "l2tp": opened(S.AF_INET, S.SOCK_DGRAM, 115),
        "smc": opened(S.AF_INET, S.SOCK_STREAM, 256),
        "netlink generic": opened(S.AF_NETLINK, S.SOCK_RAW, 16),
        "netlink audit": opened(S.AF_NETLINK, S.SOCK_RAW, 9),
        "netlink diag": opened(S.AF_NETLINK, S.SOCK_RAW, 4),
        "socketpair inet": attempt(lambda: S.socketpair(S.AF_INET)),
    }
    v4 = S.socket(S.AF_INET, S.SOCK_DGRAM)
    group = S.inet_aton("239.1.2.3") + S.inet_aton("0.0.0.0") + struct.pack("i", 1)
    out["join v4"] = attempt(lambda: v4.setsockopt(S.IPPROTO_IP, S.IP_ADD_MEMBERSHIP, group))
    v6 = S.socket(S.AF_INET6, S.SOCK_DGRAM)
    group6 = S.inet_pton(S.AF_INET6, "ff15::1234") + struct.pack("I", 1)
    out["join v6"] = attempt(lambda: v6.setsockopt(S.IPPROTO_IPV6, S.IPV6_JOIN_GROUP, group6))
    # a pty's line discipline: N_HDLC (13), a module
    pty = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
    hdlc = struct.pack("i", 13)
    out["line discipline"] = attempt(lambda: fcntl.ioctl(pty, termios.TIOCSETD, hdlc))
    print(json.dumps(out))
""")
SOCKETS_ALLOWED = {"unix", "tcp", "udp6", "mptcp", "netlink route", "socketpair"}
SOCKETS_REFUSED = {
    "EAFNOSUPPORT": {"tipc", "rds", "can", "alg", "vsock", "packet", "socketpair inet"},
    "EPROTONOSUPPORT": {"sctp", "sctp6", "dccp", "l2tp", "smc", "netlink generic",
                        "netlink audit", "netlink diag"},
    "ENODEV": {"join v4", "join v6"},
    "EPERM": {"line discipline"},
}  # fmt: skip


def loaded_modules() -> set[str]:
    """The kernel's loaded modules (none where it is built without module support)."""
    modules = Path("/proc/modules")
    lines = modules.read_text().splitlines() if modules.exists() else []
    return {line.split()[0] for line in lines}


def test_attack_rare_socket_families(run, client, server):
    """Sockets of families and IP protocols the host's kernel would load a module for (TIPC,
    RDS, CAN, SCTP, DCCP, ...), netlink beyond routing and a pty's line discipline are refused,
    as are multicast joins (only loopback is there); no module is loaded. Unix, TCP, UDP and
    routing netlink work."""
    before = loaded_modules()
    out, _ = run_json(run, SOCKETS)
    assert {k for k in SOCKETS_ALLOWED if out[k] != "ok"} == set(), out
    assert out["interfaces"] == "[(1, 'lo')]", out
    for errno_name, names in SOCKETS_REFUSED.items():
        assert {k: out[k] for k in names if out[k] != errno_name} == {}, out
    assert loaded_modules() <= before, f"the box had modules loaded: {loaded_modules() - before}"
    assert_healthy(client, server)


# -- privileges ----------------------------------------------------------------------------------

PRIVS = py("""
    import json, os, sys, time
    status = dict(
        line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
    )
    out = {k: v.strip() for k, v in status.items()
           if k.startswith("Cap") or k in ("NoNewPrivs", "Seccomp", "Uid", "Gid")}
    try:
        os.setuid(0)
        out["setuid0"] = "ok"
    except OSError as e:
        out["setuid0"] = str(e)
    print(json.dumps(out), flush=True)
    os.execv("/bin/sleep", [json.load(sys.stdin)["marker"], "2"])
""")


def test_attack_privileges(run, client, server):
    """The box has NoNewPrivs 1, Seccomp 2, no capabilities, and a non-root uid on the host."""
    marker = f"sandlot-privs-{token()}"
    seen: list[dict] = []
    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(run, PRIVS, "python", stdin=json.dumps({"marker": marker}))
        while not fut.done():
            seen += [p for p in host_processes() if p["args"].startswith(marker)]
            time.sleep(0.05)
        body = fut.result()
    rr = body["run_result"]
    assert rr["status"] == "Finished", body
    out = json.loads(rr["stdout"].splitlines()[0])
    assert out["NoNewPrivs"] == "1", f"NoNewPrivs is {out['NoNewPrivs']}"
    assert out["Seccomp"] == "2", f"no seccomp filter: Seccomp {out['Seccomp']}"
    caps = {k: v for k, v in out.items() if k.startswith("Cap") and int(v, 16) != 0}
    assert caps == {}, f"the box holds capabilities: {caps}"
    assert "0" not in out["Uid"].split(), f"the box runs as uid 0 in its namespace: {out['Uid']}"
    assert out["setuid0"] != "ok", "setuid(0) succeeded in the box"
    assert seen, "the box's process was never seen on the host"
    uids = {p["uid"] for p in seen}
    assert uids <= set(UIDS) and 0 not in uids, f"the box runs as host uid {uids}: {seen}"
    assert_healthy(client, server)


# -- the server's own channels -------------------------------------------------------------------

DESCRIPTORS = py("""
    import json, os
    fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    listing = [fd for fd in fds if fd > 2 and not os.path.exists(f"/proc/self/fd/{fd}")]
    print(json.dumps({fd: os.readlink(f"/proc/self/fd/{fd}") if fd not in listing else "gone"
                      for fd in fds}))
""")


@pytest.mark.parametrize("via", ["python", "bash exec"])
def test_attack_inherited_descriptors(run, client, server, via):
    """A run sees only its stdio: no socket, pipe or file of the server, spawner or zygote."""
    if via == "python":
        body = run(DESCRIPTORS, "python")
    else:  # the shape of the attack on bubblewrap boxes: a program exec'd by another
        body = run(f"exec python3 - <<'EOF'\n{DESCRIPTORS}EOF\n", "bash")
    rr = body["run_result"]
    assert rr["return_code"] == 0, body
    seen = json.loads(rr["stdout"])
    # The one extra entry is the directory /proc/self/fd itself, open while it is listed.
    extra = {fd: what for fd, what in seen.items() if int(fd) > 2 and what != "gone"}
    extra = {fd: what for fd, what in extra.items() if not what.startswith("/proc/")}
    assert extra == {}, f"the box inherited descriptors: {extra}"
    assert set(seen) >= {"0", "1", "2"}, seen


CHANNEL_INJECTION = py("""
    import json, os, pickle, struct, sys
    p = json.load(sys.stdin)

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {p['marker']}",))

    evil = pickle.dumps(Evil())
    frames = [
        struct.pack("!i", len(evil)) + evil,                  # multiprocessing's framing
        struct.pack(">I", len(evil)) + evil,                  # a plain length prefix
        struct.pack(">I", 19) + b"\\x82\\xa4type\\xa4done\\xa2id\\x01\\xa1x\\xc0",  # msgpack
        b'{"kind": "done", "id": 1, "outcome": {}}\\n',
        struct.pack(">I", 0xFFFFFFF0) + os.urandom(64),
        os.urandom(4096),
    ]
    reached = []
    for fd in range(3, 1025):
        for frame in frames:
            try:
                os.write(fd, frame)
                reached.append(fd)
            except OSError:
                pass
    print(json.dumps({"reached": sorted(set(reached))}))
""")


def test_attack_spawner_channel_injection(run, client, server):
    """Framed pickles, msgpack, JSON and garbage written to every descriptor up to 1024 run
    nothing on the host, break no slot, and never turn into another caller's result."""
    marker = Path(f"/tmp/sandlot-pwned-{token()}")
    before = spawners(server)
    with ThreadPoolExecutor(4) as pool:
        attacks = [
            pool.submit(run, CHANNEL_INJECTION, "python", stdin=json.dumps({"marker": str(marker)}))
            for _ in range(2)
        ]
        shell = pool.submit(
            run, f"cat > /tmp/a.py <<'EOF'\n{CHANNEL_INJECTION}EOF\nexec python3 /tmp/a.py", "bash",
            stdin=json.dumps({"marker": str(marker)}),
        )  # fmt: skip
        callers = [pool.submit(run, f"print({n} * 7)", "python") for n in range(6)]
        for future in [*attacks, shell]:
            rr = future.result()["run_result"]
            assert rr["return_code"] == 0, rr
            assert json.loads(rr["stdout"])["reached"] == [], rr["stdout"]
        for n, future in enumerate(callers):
            assert future.result()["run_result"]["stdout"] == f"{n * 7}\n"
    assert not marker.exists(), "a frame written from a box ran a command on the host"
    assert_healthy(client, server, before)


DEEP_TREE = py("""
    import os
    for _ in range(5000):
        os.mkdir("a")
        os.chdir("a")
    print("deep")
""")


def test_attack_deep_directory(run, client, server):
    """A tree 5000 levels deep in the work dir (also asked back with fetch_files) breaks no
    slot: every later run on every slot works."""
    before = spawners(server)
    body = run(DEEP_TREE, "python", fetch_files=["a"], run_timeout=30)
    assert body["run_result"]["stdout"] == "deep\n", body
    with ThreadPoolExecutor(4) as pool:
        later = list(pool.map(lambda n: run(f"print({n})", "python"), range(8)))
    assert [b["run_result"]["stdout"] for b in later] == [f"{n}\n" for n in range(8)], later
    assert all(b["status"] == "Success" for b in later), later
    assert_healthy(client, server, before)


HOST_KEY_PROBE = py("""
    import json, os, sys
    path = json.load(sys.stdin)["path"]
    out = {"private_dir": os.path.exists(os.path.dirname(path))}
    try:
        out["key"] = open(path).read()
    except OSError as e:
        out["key"] = type(e).__name__
    unreadable = []
    for root, dirs, files in os.walk("/etc"):
        for name in files:
            full = os.path.join(root, name)
            if os.path.islink(full):
                continue
            mode = os.stat(full).st_mode
            if not mode & 0o004:
                unreadable.append(full)
    out["not_world_readable"] = unreadable
    print(json.dumps(out))
""")


def test_attack_read_host_private_keys(run, client, server, host_key):
    """A 0600 key in the host's /etc/ssl/private is not in the box's /etc at all."""
    out, _ = run_json(run, HOST_KEY_PROBE, {"path": str(host_key)})
    assert out["key"] == "FileNotFoundError", f"the box reads a host private key: {out}"
    assert out["private_dir"] is False, f"/etc/ssl/private is in the box: {out}"
    assert out["not_world_readable"] == [], out
    assert_healthy(client, server)


@pytest.mark.parametrize(
    "fields",
    [
        {"run_timeout": "NaN"},
        {"run_timeout": "Infinity"},
        {"run_timeout": "-Infinity"},
        {"compile_timeout": "NaN"},
        {"timeout": "NaN"},
        {"memory_limit_MB": "NaN"},
    ],
    ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()),
)
def test_attack_non_finite_limits(client, server, fields):
    """NaN and infinite limits (valid in Python's JSON) are refused with a 4xx; no slot breaks."""
    before = spawners(server)
    raw = ", ".join(f'"{k}": {v}' for k, v in fields.items())
    body = f'{{"code": "print(1)", "language": "python", {raw}}}'
    r = client.post("/run_code", content=body, headers={"Content-Type": "application/json"})
    assert 400 <= r.status_code < 500, f"{fields}: {r.status_code} {r.text}"
    assert_healthy(client, server, before)


# -- 9. a run's own process: its ending, and what of the server it shows -------------------------

# SandboxFusion's guard against a program ending itself early, put before the program.
ANTI_EXIT = "import os, sys\nexit = None\nos._exit = None\nsys.exit = None\n"
ENDINGS = {
    "SandboxFusion's guard": (ANTI_EXIT + "print('hello')\n", 0, "hello\n"),
    "os._exit a lambda": ("import os\nos._exit = lambda s: None\nprint('hello')\n", 0, "hello\n"),
    "the guard, then an error": (ANTI_EXIT + "print('hello')\n1 / 0\n", 1, "hello\n"),
    "the guard, then an exit": ("import sys\nquit = sys.exit\n" + ANTI_EXIT + "quit(3)\n", 3, ""),
}


@pytest.mark.parametrize("case", list(ENDINGS))
def test_attack_rebinds_the_names_a_run_ends_with(run, client, server, case):
    """A program that rebinds what a process ends with ends as `python main.py` does, in
    every way of building a box (warm: a fork of the zygote, whose end must not use them)."""
    before = spawners(server)
    code, status, stdout = ENDINGS[case]
    out = run(code, "python")
    assert (out["run_result"]["return_code"], out["run_result"]["stdout"]) == (status, stdout)
    assert out["status"] == ("Success" if status == 0 else "Failed"), out
    if status == 1:
        assert out["run_result"]["stderr"].endswith("ZeroDivisionError: division by zero\n")
    assert_healthy(client, server, before)  # the zygote serves on: its fork never came back


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_attack_rebinds_the_names_a_sealed_run_ends_with(run, language):
    """The same guards before an answer judged by test cases (a sealed run: the driver writes
    the seal after the cases): the right answer still passes, a wrong one fails (the control)."""
    guard = {"python": ANTI_EXIT + "os.write = os.unlink = None\n",
             "javascript": "process.exit = process.reallyExit = null;\n"
                           "require('fs').writeSync = null;\n"}[language]  # fmt: skip
    add = {"python": "def add(a, b):\n    return a + b\n",
           "javascript": "function add(a, b) { return a + b }\n"}[language]  # fmt: skip
    cases = [{"input": "add(1, 2)", "expected": "3"}, {"input": "add(2, 2)", "expected": "4"}]
    assert run(guard + add, language, test_cases=cases)["passed"] is True
    wrong = add.replace("a + b", "a - b")
    out = run(guard + wrong, language, test_cases=cases)
    assert [t["passed"] for t in out["tests"]] == [False, False]


def server_paths() -> list[str]:
    """Where this server's code lives: its checkout (or package) and its site-packages."""
    import sysconfig

    import sandlot

    return [str(ROOT), str(Path(sandlot.__file__).resolve().parent),
            sysconfig.get_paths()["purelib"]]  # fmt: skip


PEEKS = {
    "its stack": "import traceback\ntraceback.print_stack()\n",
    "every frame below it": "import sys\nf = sys._getframe()\nwhile f is not None:\n"
    "    print(f.f_code.co_filename, f.f_globals.get('__file__'))\n    f = f.f_back\n",
    "warnings from below it": "import warnings\nwarnings.warn('up', stacklevel=2)\n"
    "warnings.warn('further', stacklevel=9)\n",
    "its command lines": "import sys\nprint(sys.argv, sys.orig_argv, sys.path, sys.executable)\n"
    "print(open('/proc/self/cmdline', 'rb').read(), open('/proc/1/cmdline', 'rb').read())\n",
    "every text its interpreter holds": "import gc\ngc.unfreeze()\nseen = set()\n"
    "for o in gc.get_objects():\n"
    "    items = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()\n"
    "    seen.update(v for v in items if isinstance(v, str) and '/' in v)\nprint(sorted(seen))\n",
    "an error in an exit function": "import atexit\natexit.register(lambda: 1 / 0)\n",
    "the guard, then an error": ANTI_EXIT + "import os\nos._exit = print\n1 / 0\n",
    "no excepthook": "import sys\nsys.excepthook = None\nraise ValueError('x')\n",
}


@pytest.mark.parametrize("case", list(PEEKS))
def test_attack_finds_the_servers_paths_in_its_own_process(run, client, server, case):
    """Whatever a program prints of its own process (its stack, frames, warnings, command
    lines, every string its interpreter holds) or whatever ends it, no path of the server's
    code appears: the zygote a warm run forks from is compiled under a name that is no path."""
    out = run(PEEKS[case], "python")
    shown = out["run_result"]["stdout"] + out["run_result"]["stderr"]
    assert shown, out
    for path in server_paths():
        assert path not in shown, f"{case}: the run showed {path}:\n{shown[:3000]}"


DRIVER_REBINDS = {
    # The expected text is no expression (a bare word): the case compares the answer's text.
    "javascript": ("function f() { return undefined }\n", "String.prototype.trim = () => "
                   "'undefined';\nObject.prototype.value = 'hello';\n"),
    "python": ("def f():\n    return None\n", "import builtins\nbuiltins.str = lambda x: 'hello'"
               "\nbuiltins.repr = builtins.str\n"),
}  # fmt: skip


@pytest.mark.parametrize("language", list(DRIVER_REBINDS))
def test_attack_rebinds_what_a_driver_judges_with(run, language):
    """An answer that patches what the driver compares with after it ran (a built-in, a
    prototype's method) is judged as without the patch: it fails, as the control does."""
    answer, patch = DRIVER_REBINDS[language]
    cases = [{"input": "f()", "expected": "hello"}]
    for code in (answer, patch + answer):
        out = run(code, language, test_cases=cases)
        assert out["tests"][0]["passed"] is False, (code, out)


# Under `strict` the driver copies the answer's value into plain data before comparing: what
# the answer put on a prototype (a push, an iterator, a setter) must not empty both copies alike.
EMPTYING = {
    "[1, 2]": ("[2, 1]", "Array.prototype.push = function () { return 0 };\n"),
    "{a: 1}": ("{a: 2}", "Array.prototype[Symbol.iterator] = function* () {};\n"
               "Object.defineProperty(Object.prototype, 'a', { set() {}, configurable: true });\n"),
}  # fmt: skip


@pytest.mark.parametrize("value", list(EMPTYING))
def test_attack_empties_the_strict_copies_of_a_javascript_value(run, value):
    wrong, patch = EMPTYING[value]
    cases = [{"input": "f()", "expected": value}]
    for returned, passes in ((wrong, False), (value, True)):  # a wrong answer; the reference
        answer = f"function f() {{ return {returned} }}\n"
        for code in (answer, patch + answer):
            out = run(code, "javascript", test_cases=cases, strict=True)
            assert out["tests"][0]["passed"] is passes, (code, out)
