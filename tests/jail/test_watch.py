"""The kill grace of a run's watch: a killed box that is still dying gets more time (a fork bomb's
hundreds of processes end slowly on an emulated machine: tests/vm/), one that is not gets none.

The box here is a real `sleep`; only its SIGKILL is dropped, to stand in for what cannot be made
on purpose: a process the kernel cannot kill. The slot's task count is given, one value per look.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from sandlot.errors import SlotBroken
from sandlot.jail import watch
from sandlot.jail.spec import Limits, RunSpec


@pytest.fixture
def unkillable(monkeypatch) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    monkeypatch.setattr(watch, "kill", lambda pidfd: None)
    monkeypatch.setattr(watch, "KILL_GRACE", 0.05)
    monkeypatch.setattr(watch, "STOP_GRACE", 0.01)
    monkeypatch.setattr(watch, "KILL_GIVE_UP", 3.0)
    with subprocess.Popen(["sleep", "60"]) as proc:
        pidfd = os.pidfd_open(proc.pid)
        try:
            yield pidfd, proc
        finally:
            os.close(pidfd)
            proc.send_signal(signal.SIGKILL)


def watch_until_broken(
    box: tuple[int, subprocess.Popen[bytes]], counts: Iterator[int], killed_all: list[int]
) -> str:
    """Run a watch whose wall time ends at once over the box; the SlotBroken it raises. Each
    time it kills every process of the slot, the number of looks so far goes to killed_all."""
    pidfd, proc = box
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe()
    server_r, server_w = os.pipe()
    spec = RunSpec(argv=("sleep",), limits=Limits(wall_time=0.01))
    looks = 0

    def count() -> int:
        nonlocal looks
        looks += 1
        return next(counts)

    w = watch.Watch(
        pidfd, lambda: os.waitpid(proc.pid, 0)[1], spec, time.monotonic(),
        (out_r, err_r, in_w), server_r, lambda: None, count, lambda: killed_all.append(looks),
        lambda: None,
    )  # fmt: skip
    try:
        with pytest.raises(SlotBroken) as raised:
            w.run()
        return str(raised.value)
    finally:
        for fd in (out_r, out_w, err_r, err_w, in_r, server_r, server_w):
            os.close(fd)


def test_a_killed_box_whose_tasks_still_fall_gets_more_time(unkillable):
    killed_all: list[int] = []
    looks = iter([300, 200, 100, 40, 40, 40, 1])
    assert "(40 tasks left in its slot)" in watch_until_broken(unkillable, looks, killed_all)
    # Looked until the count stopped falling, killed every process once, looked once more.
    assert killed_all == [5] and list(looks) == [1]


def test_a_killed_box_whose_tasks_do_not_fall_gets_one_more_kill_then_breaks(unkillable):
    killed_all: list[int] = []
    looks = iter([7, 7, 7, 1])
    assert "(7 tasks left in its slot)" in watch_until_broken(unkillable, looks, killed_all)
    assert killed_all == [2] and list(looks) == [1]


def test_a_box_that_keeps_dying_is_given_up_on(unkillable):
    """A count that falls one task a look (a box that dies ever so slowly) is still bounded."""
    looks = iter(range(10**9, 0, -1))
    assert "tasks left in its slot" in watch_until_broken(unkillable, looks, [])


def watch_told(heard) -> tuple[int, object]:
    """A watch over a real `sleep 60` whose server has just spoken: the box's wait status, and
    what the watch returned or raised (the box is waited for, up to 30 s, if it raised)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe()
    server_r, server_w = os.pipe()
    os.write(server_w, b"x")
    proc = subprocess.Popen(["sleep", "60"], stdout=out_w, stderr=err_w, stdin=in_r)
    for fd in (out_w, err_w, in_r):
        os.close(fd)
    pidfd = os.pidfd_open(proc.pid)
    spec = RunSpec(argv=("sleep",), limits=Limits(wall_time=60))
    w = watch.Watch(
        pidfd, lambda: os.waitpid(proc.pid, 0)[1], spec, time.monotonic(),
        (out_r, err_r, in_w), server_r, heard, lambda: 1, lambda: None, lambda: None,
    )  # fmt: skip
    try:
        return w.run()
    except watch.ServerGone as exc:
        return proc.wait(30), exc
    finally:
        os.close(pidfd)
        for fd in (server_r, server_w):
            os.close(fd)
        proc.kill()
        proc.wait()


def test_a_stop_from_the_server_kills_the_box_and_names_no_limit():
    status, outcome = watch_told(lambda: None)
    assert status is not None and os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGKILL
    assert outcome.limit is None  # nobody reads it; it is not the program's fault either


def test_a_server_that_is_gone_has_the_box_killed_and_the_watch_ends():
    def gone() -> None:
        raise watch.ServerGone

    returncode, raised = watch_told(gone)
    assert isinstance(raised, watch.ServerGone)
    assert returncode == -signal.SIGKILL
