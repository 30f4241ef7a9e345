"""Live boxes whose work dir is in layers (jail/layers.py): sealing what a box wrote, stacking it
under boxes of other uids, moving a running box onto new layers, and what each can change."""

from __future__ import annotations

import os
import select
import time
from pathlib import Path

import pytest

from sandlot.errors import JailError
from sandlot.jail import Jail, JailConfig, RunSpec
from sandlot.jail.layers import LayerBusy, copy_layer
from sandlot.jail.live import LiveBox, LiveBoxes, LiveConfig, Pipes
from tests.conftest import SESSION_UID_BASE, UID_BASE

STATE = f"/run/sandlot-layertest-{os.getpid()}"
OWNER = SESSION_UID_BASE - 1
PYTHON = "/opt/sandlot/python/bin/python3"

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def live():
    with Jail(JailConfig(slots=1, uid_base=UID_BASE, state_dir=STATE)) as jail:
        config = LiveConfig(uid_base=SESSION_UID_BASE, count=4, python=PYTHON, layers=True,
                            layer_owner=OWNER)  # fmt: skip
        boxes = LiveBoxes(jail, config).start()
        assert boxes.layers is not None, boxes.layers_problem
        yield boxes
        boxes.close()
    assert STATE not in Path("/proc/self/mounts").read_text()
    Path(STATE).rmdir()


class Shell:
    """A box running sh, fed one command line at a time; each answers up to a marker line."""

    def __init__(self, live: LiveBoxes, lowers=()) -> None:
        spec = RunSpec(argv=("/bin/sh", "-c", "cd /sandbox; exec sh 2>&1"))
        self.box, self.pipes = live.open(spec, lowers)

    @property
    def uid(self) -> int:
        return self.box.uid

    def __call__(self, line: str) -> str:
        os.write(self.pipes.stdin, f"{line}; echo @@\n".encode())
        out, deadline = b"", time.monotonic() + 30
        while not out.endswith(b"@@\n"):
            assert select.select([self.pipes.stdout], [], [], deadline - time.monotonic())[0]
            out += os.read(self.pipes.stdout, 4096)
        return out[:-3].decode()

    def close(self) -> None:
        close(self.box, self.pipes)


def close(box: LiveBox, pipes: Pipes) -> None:
    for fd in (pipes.stdin, pipes.stdout, pipes.stderr):
        os.close(fd)
    box.close()


def test_a_sealed_layer_is_frozen_and_its_box_goes_on_above_it(live):
    sh = Shell(live)
    try:
        sh("echo one > a; mkdir d; echo x > d/x")
        frozen = sh.box.seal()
        assert frozen.memory is not None and frozen.size > 0
        assert sh("cd /sandbox; cat a d/x") == "one\nx\n"  # its files, now in the layer below
        sh("echo two >> a; rm d/x; echo new > b")
        assert sh("cat a; ls d; cat b") == "one\ntwo\nnew\n"
        assert Path(frozen.path, "a").read_text() == "one\n"  # the frozen layer is unchanged
        assert Path(frozen.path, "d", "x").exists() and not Path(frozen.path, "b").exists()
        with pytest.raises(OSError):
            Path(frozen.path, "c").write_text("the host cannot write it either")
    finally:
        sh.close()


def test_a_box_of_another_uid_owns_what_it_stacks_and_changes_only_its_own_copy(live):
    parent = Shell(live)
    try:
        parent("echo secret > s; chmod 600 s; mkdir d; echo x > d/x")
        frozen = parent.box.seal()
        child = Shell(live, (frozen,))
        try:
            assert child.uid != parent.uid
            listing = child("ls -ln s d | head -1; id -u")
            assert f" {child.uid} {child.uid} " in listing  # shown as its own files
            changed = child("cat s; echo more >> s; chmod 644 s; rm -r d; cat s")
            assert changed == "secret\nsecret\nmore\n"
            assert child("ls") == "s\n"
            assert parent("cat s; ls") == "secret\nd\ns\n"  # the parent sees none of it
            owners = {os.lstat(p).st_uid for p in Path(frozen.path).rglob("*")}
            assert owners == {OWNER}  # stored as the layers' owner, whoever wrote them
        finally:
            child.close()
    finally:
        parent.close()


def test_a_file_open_for_writing_stops_a_seal_and_changes_nothing(live):
    sh = Shell(live)
    try:
        sh("exec 3>held; echo in > held")
        with pytest.raises(LayerBusy, match="open for writing"):
            sh.box.seal()
        assert sh("echo still >> held; cat held") == "in\nstill\n"  # writable as before
        sh("exec 3>&-")
        sh.box.seal()
    finally:
        sh.close()


def test_a_rebased_box_drops_what_it_wrote_and_sees_the_given_layers(live):
    donor = Shell(live)
    box = Shell(live)
    try:
        donor("echo given > g")
        frozen = donor.box.seal()
        box("echo mine > m")
        box.box.rebase((frozen,))
        assert box("cd /sandbox; ls; cat g") == "g\ngiven\n"
    finally:
        box.close()
        donor.close()


def test_a_frozen_layer_copied_to_disk_stacks_the_same(live, tmp_path):
    sh = Shell(live)
    try:
        sh("echo a > a; echo b > b; mkdir -p d/e; echo f > d/e/f; ln -s a link")
        first = sh.box.seal()
        sh("cd /sandbox; rm b; rm -r d; echo a2 > a")  # whiteouts, a copy-up
        second = sh.box.seal()
        for layer in (first, second):
            copy_layer(layer.path, tmp_path / layer.id)
            layer.moved_to(str(tmp_path / layer.id))
            assert layer.memory is None
        child = Shell(live, (second, first))
        try:
            assert child("ls; cat a; readlink link") == "a\nlink\na2\na\n"
            mounts = child("cat /proc/self/mountinfo")
            assert STATE not in mounts and str(tmp_path) not in mounts  # no host path shows
        finally:
            child.close()
    finally:
        sh.close()


def test_rebasing_a_closed_box_fails_clearly(live):
    sh = Shell(live)
    sh.close()
    with pytest.raises(JailError, match="closed"):
        sh.box.seal()
