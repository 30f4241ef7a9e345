"""The cgroup layer on this host (cgroup v1), and its v2 refusals that can be shown here.

The v2 path itself runs in tests/vm/ (a Debian 12 VM with systemd and cgroup v2).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandlot.errors import JailError, JailUnavailable
from sandlot.jail import cgroupfs, cgroups


def test_health_names_the_cgroups_in_use(client):
    cg = client.get("/health").json()["isolation"]["cgroup"]
    assert cg["version"] in (1, 2)
    if cg["version"] == 1:
        assert cg["controllers"] == ["memory", "pids", "cpuacct"]
        assert cg["memory_peak"] == "per run"
    else:
        assert cg["controllers"] == ["memory", "pids"]
    assert cg["swap"].startswith(("limited", "none active")), cg
    assert cg["tree"].startswith("/sys/fs/cgroup/") and "/sandlot-" in cg["tree"]


def _unified_without_memory() -> cgroupfs.Mount | None:
    for m in cgroupfs.mounts():
        if m.fstype == "cgroup2" and "memory" not in (m.point / "cgroup.controllers").read_text():
            return m
    return None


@pytest.mark.skipif(_unified_without_memory() is None, reason="needs a v2 mount without memory")
def test_v2_without_controllers_names_the_file_and_a_fix():
    """A hybrid host's cgroup2 mount offers no memory controller: the refusal says where it
    looked and what to do, and nothing is changed."""
    mount = _unified_without_memory()
    assert mount is not None
    own = cgroupfs.located(mount, cgroupfs.own_paths()[""])
    before = sorted(p.name for p in own.iterdir())
    with pytest.raises(JailUnavailable) as err:
        cgroupfs.delegate(mount, "test-0")
    message = str(err.value)
    assert f"{own}/cgroup.controllers lists" in message
    assert "memory and pids controllers of cgroup v2 are not available" in message
    assert "subtree_control" in message or "cgroup_disable" in message
    assert sorted(p.name for p in own.iterdir()) == before


def test_swap_without_a_limit_fails_closed(tmp_path, monkeypatch):
    """v1 without memsw (or v2 without memory.swap.max) while swap is on: no code runs. (Swap is
    not turned on for real on a shared test machine.)"""
    missing = tmp_path / "memory.memsw.limit_in_bytes"
    monkeypatch.setattr(cgroups, "_active_swap", lambda: ["/swapfile"])
    with pytest.raises(JailUnavailable, match=r"swap is on .*/swapfile.* swapaccount=1"):
        cgroups._swap_policy(missing, "= the memory limit")
    monkeypatch.setattr(cgroups, "_active_swap", list)
    assert cgroups._swap_policy(missing, "= the memory limit").startswith("none active")
    missing.write_text("0")
    assert cgroups._swap_policy(missing, "= 0") == "limited (memory.memsw.limit_in_bytes = 0)"


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_stale_tree_of_a_dead_server_is_swept_with_its_processes():
    """A tree left by a server that died, with a process still in it: killed and removed."""
    tree = cgroups.CgroupTree(f"{_dead_pid()}-5ca1ed")
    slot = tree.create(0)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        slot.join(sleeper.pid)
        removed = cgroups.remove_stale()
        assert set(map(str, tree.roots.values())) <= set(removed)
        assert sleeper.wait(5) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
        tree.remove()
    assert not any(root.exists() for root in tree.roots.values())


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_tree_removal_kills_what_is_left_in_it():
    tree = cgroups.CgroupTree(f"{os.getpid()}-0dd")
    slot = tree.create(0)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        slot.join(sleeper.pid)
        tree.remove()
        assert sleeper.wait(5) == -9, "a process in the tree outlived its removal"
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not any(Path(root).exists() for root in tree.roots.values())


def test_v2_peak_without_memory_peak_is_what_the_run_holds(tmp_path):
    """Linux < 5.19 has no memory.peak (no kernel here has it or lacks it on v2: the files stand
    in for a run's cgroup); the peak is then the run's usage at its end, a lower bound."""
    (tmp_path / "memory.current").write_text("4096\n")
    group = cgroups.CgroupV2(tmp_path)
    assert group.peak() == 4096
    (tmp_path / "memory.peak").write_text("8192\n")
    assert group.peak() == 8192


def _v1_memory() -> bool:
    return any(m.fstype == "cgroup" and "memory" in m.options for m in cgroupfs.mounts())


@pytest.mark.skipif(os.geteuid() != 0 or not _v1_memory(), reason="needs root and v1 memory")
def test_a_memory_limit_the_kernel_refuses_is_named_and_written_again_next_time():
    """On v1 a limit below what the cgroup holds and cannot give back (memory without swap) is
    refused with EBUSY: the error says so in MiB, and the limits are not taken as in force, so
    the same limit asked again is written again."""
    tree = cgroups.CgroupTree(f"{os.getpid()}-b5y")
    try:
        cg = tree.child("held")
        cg.set_limits(memory=512 << 20, pids=16)
        with subprocess.Popen(
            [sys.executable, "-c",
             "import sys; b = bytearray(96 << 20); b[::4096] = b'x' * len(b[::4096]);"
             " print(flush=True); sys.stdin.read()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=lambda: cg.join(os.getpid()),
        ) as holder:  # fmt: skip
            assert holder.stdout is not None and holder.stdout.readline() == b"\n"
            refused = r"cannot limit memory to 16 MiB: .* holds already, \d+ MiB, is more"
            with pytest.raises(JailError, match=refused):
                cg.set_limits(memory=16 << 20, pids=16)
            assert holder.poll() is None  # refused, not OOM-killed
            holder.kill()
        cg.set_limits(memory=16 << 20, pids=16)
        limit = Path(cg.dirs_by_key()["memory"], "memory.limit_in_bytes")
        assert int(limit.read_text()) == 16 << 20
    finally:
        tree.remove()
