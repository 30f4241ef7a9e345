"""Live boxes on their own (jail/live.py), and the work dir walks a session relies on."""

from __future__ import annotations

import os
import select
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandlot.errors import JailUnavailable, NotFound, UnsafePath
from sandlot.jail import Jail, JailConfig, Limits, RunSpec
from sandlot.jail.live import LiveBoxes, LiveConfig
from sandlot.jail.workdir import get_file, put_file
from tests.conftest import SESSION_UID_BASE, UID_BASE

STATE = f"/run/sandlot-livetest-{os.getpid()}"
PYTHON = "/opt/sandlot/python/bin/python3"

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def live():
    with Jail(JailConfig(slots=1, uid_base=UID_BASE, state_dir=STATE)) as jail:
        boxes = LiveBoxes(jail, LiveConfig(uid_base=SESSION_UID_BASE, count=4, python=PYTHON))
        boxes.start()
        yield boxes
        boxes.close()
    assert STATE not in Path("/proc/self/mounts").read_text()
    Path(STATE).rmdir()


def talk(pipes, data: bytes) -> bytes:
    os.write(pipes.stdin, data)
    os.close(pipes.stdin)
    out = b""
    while select.select([pipes.stdout], [], [], 30)[0] and (chunk := os.read(pipes.stdout, 4096)):
        out += chunk
    os.close(pipes.stdout)
    os.close(pipes.stderr)
    return out


def test_live_boxes_never_share_a_uid_and_leave_nothing(live):
    spec = RunSpec(argv=("/bin/sh", "-c", "id -u; cat; ls /sandbox"), files={"f.txt": b"x"})
    with ThreadPoolExecutor(4) as pool:
        opened = list(pool.map(lambda _: live.open(spec), range(4)))
    uids = {box.uid for box, _ in opened}
    assert len(uids) == 4 and all(SESSION_UID_BASE <= u < SESSION_UID_BASE + 4 for u in uids)
    assert live.free == 0
    for box, pipes in opened:
        assert talk(pipes, b"hello\n") == f"{box.uid}\nhello\nf.txt\n".encode()
        work = box.workdir
        box.close()
        assert not os.path.ismount(work) and not os.path.exists(work)
        ps = subprocess.run(["ps", "-eo", "uid="], capture_output=True, text=True).stdout
        assert str(box.uid) not in ps.split()
        assert not list(Path("/sys/fs/cgroup").glob(f"*/**/live-{box.uid}"))
    assert live.free == 4


def test_a_live_box_has_its_memory_limit(live):
    hog = "b = []\nwhile True: b.append(b'x' * (8 << 20))"
    spec = RunSpec(argv=(PYTHON, "-c", hog), ro_binds=(str(Path(PYTHON).parents[1]),),
                   limits=Limits(memory=128 << 20))  # fmt: skip
    box, pipes = live.open(spec)
    try:
        talk(pipes, b"")
        assert box.reading().oom_kills >= 1
        deadline = time.monotonic() + 10
        while box.alive():  # its init ends once the killed program has
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        box.close()


def test_live_uids_must_not_overlap_the_slots(live):
    overlapping = LiveBoxes(live.jail, LiveConfig(uid_base=UID_BASE, count=2, python=PYTHON))
    with pytest.raises(JailUnavailable, match="overlap"):
        overlapping.start()


def test_work_dir_walks_refuse_links(tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret").write_text("s")
    work = tmp_path / "work"
    work.mkdir()
    (work / "link").symlink_to(host)
    (work / "file").symlink_to(host / "secret")
    for bad in ("link/x", "file", "link/deep/x"):
        with pytest.raises(UnsafePath):
            put_file(str(work), bad, b"pwned", os.getuid(), os.getgid())
    for bad in ("link/secret", "file"):
        with pytest.raises(UnsafePath):
            get_file(str(work), bad, 1 << 20)
    assert sorted(p.name for p in host.iterdir()) == ["secret"]
    put_file(str(work), "a/b/c.txt", b"ok", os.getuid(), os.getgid())
    assert get_file(str(work), "a/b/c.txt", 10) == b"ok"
    with pytest.raises(NotFound):
        get_file(str(work), "a/missing", 10)
