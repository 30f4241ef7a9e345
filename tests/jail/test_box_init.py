"""The boxes' init (jail/box_init.c) is built once per source, only where root alone can write,
against musl where it is installed (glibc's start-up is the slow one) and glibc where it is not,
and a machine that cannot build it says why instead of starting a jail without it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from sandlot.errors import JailUnavailable
from sandlot.jail import Jail, JailConfig, RunSpec, box_init

pytestmark = pytest.mark.root


def test_the_init_is_built_static_once_and_reused(tmp_path):
    path = box_init.build_box_init(str(tmp_path))
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o755 and st.st_uid == 0
    assert b"INTERP" not in _program_headers(path)  # static: no loader, no shared library
    assert box_init.build_box_init(str(tmp_path)) == path
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns  # not compiled again
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(path)]  # nothing half-written


def test_setup_installs_musl_and_the_init_is_built_against_it(tmp_path):
    assert shutil.which("musl-gcc"), "sandlot setup installs musl-tools"
    assert not _is_glibc(box_init.build_box_init(str(tmp_path)))


def test_without_musl_the_init_is_built_against_glibc(tmp_path):
    path = box_init.build_box_init(str(tmp_path / "cache"), _compilers(tmp_path, gcc="gcc"))
    assert _is_glibc(path) and b"INTERP" not in _program_headers(path)


def test_a_compiler_that_fails_gives_way_to_the_next_and_all_failing_says_each(tmp_path):
    broken = "#!/bin/sh\necho 'musl-gcc: broken here' >&2\nexit 1\n"
    path = box_init.build_box_init(
        str(tmp_path / "a"), _compilers(tmp_path / "a", musl=broken, gcc="gcc")
    )
    assert _is_glibc(path)
    with pytest.raises(JailUnavailable, match=r"with .*musl-gcc: musl-gcc: broken here"):
        box_init.build_box_init(str(tmp_path / "b"), _compilers(tmp_path / "b", musl=broken))


def test_a_box_runs_on_the_glibc_init_too(tmp_path, monkeypatch):
    """Every other test's boxes start on the musl init: this one's on the fallback."""
    monkeypatch.setattr(box_init, "COMPILERS", ("gcc",))
    config = JailConfig(slots=1, uid_base=64150, state_dir="/run/sandlot-test-glibc-init",
                        boxes="zygote")  # fmt: skip
    with Jail(config) as jail:
        assert _is_glibc(jail.box_init)
        out = jail.run(0, RunSpec(argv=("/bin/sh", "-c", "echo hi; id -u")))
    assert (out.exit_code, out.stdout) == (0, b"hi\n64150\n"), out


def test_without_a_compiler_the_jail_cannot_start_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(JailUnavailable, match="no C compiler"):
        box_init.build_box_init(str(tmp_path / "cache"))


def test_a_directory_others_may_write_to_is_not_trusted(tmp_path):
    """Root runs what is there: a directory anyone may write to could hold anything."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(JailUnavailable, match="not trusted"):
        box_init.build_box_init(str(shared))


def _compilers(where, musl: str | None = None, gcc: str | None = None) -> tuple[str, ...]:
    """COMPILERS for a build: a musl-gcc script of `musl`'s text, the real gcc."""
    where.mkdir(parents=True, exist_ok=True)
    names = []
    if musl is not None:
        (where / "musl-gcc").write_text(musl)
        os.chmod(where / "musl-gcc", 0o755)
        names.append(str(where / "musl-gcc"))
    if gcc is not None:
        names.append(shutil.which(gcc))
    return tuple(names)


def _is_glibc(path: str) -> bool:
    with open(path, "rb") as f:
        return b"GLIBC" in f.read()


def _program_headers(path: str) -> bytes:
    return subprocess.run(["readelf", "-l", path], capture_output=True, check=True).stdout
