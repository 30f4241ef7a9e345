"""Fixtures: a real `sandlot serve` on 127.0.0.1, and checks that nothing outlives the runs."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
STATE_ROOT = f"/run/sandlot-test-{os.getpid()}"
# A uid range of this test session's own, so that sandboxes of other sandlot servers on the same
# machine (a developer's, a benchmark's) are never mistaken for leftovers of ours. It lies in
# 63000-63999: the jails that modules start at fixed uids, while this session's server runs,
# take 64000-64999 (benchmarks 65000 and up), so no two jails ever share a uid.
UID_BASE = 63000 + (os.getpid() % 50) * 20
UIDS = range(UID_BASE, UID_BASE + 20)
# Live boxes (sessions, notebooks) take uids of a range of their own.
SESSION_UID_BASE = 100000 + (os.getpid() % 100) * 200
SESSION_UIDS = range(SESSION_UID_BASE, SESSION_UID_BASE + 200)
# Snapshots of a test server's sessions, on disk: a directory per server, gone when it stops
# (unless a test gives its own, to start another server on it).
SNAPSHOT_ROOT = f"/tmp/sandlot-test-snapshots-{os.getpid()}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Leave nothing in /run: the session's state dirs are empty once its servers stopped (a
    directory that is not, or is still mounted on, stays and shows)."""
    root = Path(STATE_ROOT)
    if root.is_dir():
        for path in sorted(root.glob("**/"), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                path.rmdir()


_running: list[pytest.Item] = []  # the test being set up or run


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running[:] = [item]


def pytest_configure(config: pytest.Config) -> None:
    # In-process jails (a Service, a Jail) are held to the marker as servers are (Server).
    from sandlot.jail import pool

    start = pool.Jail.start

    def marked_start(self: pool.Jail) -> pool.Jail:
        require_root_marker("the jail")
        return start(self)

    pool.Jail.start = marked_start  # type: ignore[method-assign]


# Fixtures by these names start the jail: a real server (this file's), or a module's own Jail or
# Service. A test that uses one is marked root; one that starts the jail otherwise says so.
JAIL_FIXTURES = frozenset({"server", "client", "run", "service", "jail"})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With slow tests deselected (`make test-fast`), a module marked slow as a whole is not
    even imported: some import what takes seconds (schemathesis and the schema, Ray)."""
    if "not slow" not in (config.getoption("markexpr") or ""):
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    for line in collection_path.read_text().splitlines():
        if line.startswith("pytestmark") and "pytest.mark.slow" in line:
            return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if JAIL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.root)


def require_root_marker(what: str) -> None:
    """The fast tier (`make test-fast`) leaves out what needs the jail by the `root` marker: a
    test that starts the jail without it would slip in and make the tier slow."""
    item = _running[0] if _running else None
    if item is not None and item.get_closest_marker("root") is None:
        pytest.fail(f"{item.nodeid} starts {what} but is not marked root", pytrace=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A `sandlot serve` subprocess; `url` is where it listens."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
    ) -> None:  # fmt: skip
        require_root_marker("a server")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.state_dir = f"{STATE_ROOT}/{self.port}"
        self.snapshot_dir = (env or {}).get("SANDLOT_SNAPSHOT_DIR", f"{SNAPSHOT_ROOT}/{self.port}")
        self.own_snapshots = "SANDLOT_SNAPSHOT_DIR" not in (env or {})
        self.log = open(f"/tmp/sandlot-test-{self.port}.log", "w+b")  # noqa: SIM115
        self.proc = subprocess.Popen(
            # -P: the installed sandlot (this checkout's), whatever directory it starts in
            [sys.executable, "-P", "-m", "sandlot", "serve", "--host", "127.0.0.1",
             "--port", str(self.port), *args],
            cwd=cwd,
            env={
                **os.environ,
                "SANDLOT_STATE_DIR": self.state_dir,
                "SANDLOT_UID_BASE": str(UID_BASE),
                "SANDLOT_SESSION_UID_BASE": str(SESSION_UID_BASE),
                "SANDLOT_SNAPSHOT_DIR": self.snapshot_dir,
                # No kernels started ahead unless a test asks: they would only load the machine.
                "SANDLOT_SESSION_POOL": "0",
                **(env or {}),
            },
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.output()}")
            try:
                if httpx.get(self.url + "/v1/ping", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"server not ready in {timeout}s:\n{self.output()}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-5000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self.own_snapshots:
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)


@contextlib.contextmanager
def running_server(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> Iterator[Server]:
    """A ready server; once it stops, checks that it left nothing behind."""
    srv = Server(*args, env=env, cwd=cwd)
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()
    assert_nothing_left(srv)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    with running_server("--slots", "2") as srv:
        yield srv


@pytest.fixture(scope="session")
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


@pytest.fixture
def run(client: httpx.Client, server: Server):
    """POST /run_code and return the JSON body; asserts HTTP 200 and a live server after."""

    def _run(code: str, language: str, **fields) -> dict:
        r = client.post("/run_code", json={"code": code, "language": language, **fields})
        assert r.status_code == 200, r.text
        assert server.alive()
        return r.json()

    return _run


def sandlot_processes(uids: range | tuple[range, ...] = UIDS) -> list[str]:
    """Processes that run as one of this test session's sandbox uids (the slots' unless told),
    except the box a slot's zygote keeps built for its next run: the zygote's only child (the
    box's init, box_init.c) with no child of its own, which no run has touched yet."""
    out = subprocess.run(["ps", "-wweo", "uid=,pid=,ppid=,args="], capture_output=True,
                         text=True).stdout  # fmt: skip
    return unclaimed_processes([line.split(None, 3) for line in out.splitlines()], uids)


def unclaimed_processes(rows: list[list[str]], uids: range | tuple[range, ...]) -> list[str]:
    """Of (uid, pid, ppid, args) rows, those of a sandbox uid, less the boxes built ahead."""
    ranges = uids if isinstance(uids, tuple) else (uids,)
    ppid = {int(r[1]): int(r[2]) for r in rows}
    kids: dict[int, list[int]] = {}
    for pid, parent in ppid.items():
        kids.setdefault(parent, []).append(pid)
    ready = set()
    for r in rows:
        if r[0] == "0" and "<sandlot zygote>" in r[-1] and len(kids.get(int(r[1]), [])) == 1:
            init = kids[int(r[1])][0]
            if not kids.get(init):
                ready.add(init)
    return [
        " ".join(r) for r in rows if any(int(r[0]) in u for u in ranges) and int(r[1]) not in ready
    ]


def assert_nothing_left(server: Server) -> None:
    """After a server stops: no sandbox process (of a slot or a live box), mount, state dir or
    cgroup of it remains."""
    every = (UIDS, SESSION_UIDS)
    deadline = time.monotonic() + 10
    while sandlot_processes(every) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sandlot_processes(every) == []
    mounts = Path("/proc/self/mounts").read_text()
    assert server.state_dir not in mounts
    state = Path(server.state_dir)
    if state.exists():
        assert list(state.iterdir()) == []
        state.rmdir()
    leftovers = list(Path("/sys/fs/cgroup").glob(f"*/**/sandlot-{server.proc.pid}-*"))
    assert leftovers == []


def serve_fails(*args: str, env: dict[str, str] | None = None) -> str:
    """`sandlot serve` that must refuse to start: its message."""
    port = free_port()
    proc = subprocess.run(
        [sys.executable, "-m", "sandlot", "serve", "--port", str(port), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "SANDLOT_STATE_DIR": f"{STATE_ROOT}/refused-{port}",
             "SANDLOT_UID_BASE": str(UID_BASE), **(env or {})},
    )  # fmt: skip
    assert proc.returncode != 0
    assert not Path(f"{STATE_ROOT}/refused-{port}").exists()  # refused before the jail started
    return proc.stdout + proc.stderr
