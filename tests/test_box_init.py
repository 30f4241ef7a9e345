"""The boxes' init (jail/box_init.c) is built once per source, only where root alone can write,
and a machine that cannot build it says why instead of starting a jail without it."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from sandlot.errors import JailUnavailable
from sandlot.jail import box_init

pytestmark = pytest.mark.root


def test_the_init_is_built_static_once_and_reused(tmp_path):
    path = box_init.build(str(tmp_path))
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o755 and st.st_uid == 0
    assert b"INTERP" not in _program_headers(path)  # static: no loader, no shared library
    assert box_init.build(str(tmp_path)) == path
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns  # not compiled again
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(path)]  # nothing half-written


def test_without_a_compiler_the_jail_cannot_start_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(JailUnavailable, match="no C compiler"):
        box_init.build(str(tmp_path / "cache"))


def test_a_directory_others_may_write_to_is_not_trusted(tmp_path):
    """Root runs what is there: a directory anyone may write to could hold anything."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(JailUnavailable, match="not trusted"):
        box_init.build(str(shared))


def _program_headers(path: str) -> bytes:
    return subprocess.run(["readelf", "-l", path], capture_output=True, check=True).stdout
