"""`sandlot setup` replacing a runtime that a lower layer of an overlay holds, as a later layer
of a container image does (overlayfs answers EXDEV to renaming such a directory)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandlot.install.files import replace_dir

pytestmark = pytest.mark.root  # mounts an overlay


@pytest.fixture
def overlay(tmp_path: Path) -> Iterator[Path]:
    lower, upper, work, merged = (tmp_path / n for n in ("lower", "upper", "work", "merged"))
    for d in (lower, upper, work, merged):
        d.mkdir()
    (lower / "node").mkdir()
    (lower / "node" / "old.js").write_text("old")
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(merged)], check=True)
    try:
        yield merged
    finally:
        subprocess.run(["umount", str(merged)], check=True)


def test_replace_dir_of_a_lower_layer(overlay):
    with pytest.raises(OSError):  # what the plain rename meets (EXDEV)
        (overlay / "node").rename(overlay / ".probe")
    new = overlay / ".node.new"
    new.mkdir()
    (new / "new.js").write_text("new")
    replace_dir(new, overlay / "node")
    assert sorted(p.name for p in (overlay / "node").iterdir()) == ["new.js"]
    assert not new.exists() and not (overlay / ".node.old").exists()
