"""The language registry: names, and toolchain probes kept until the toolchain changes."""

from __future__ import annotations

import os
from pathlib import Path

from sandlot.languages import Language, Registry


def fake_toolchain(tmp_path: Path, exit_code: int = 0) -> tuple[Path, Path]:
    """A 'compiler' whose version probe counts how often it ran."""
    counter = tmp_path / "probes"
    tool = tmp_path / "fakec"
    tool.write_text(f"#!/bin/sh\necho x >> {counter}\necho 'fakec 1.0'\nexit {exit_code}\n")
    tool.chmod(0o755)
    return tool, counter


def probes(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def row(tool: Path) -> Language:
    return Language(name="fake", source="main.f", run=(str(tool),), version=(str(tool),))


def test_a_probe_is_kept_until_the_toolchain_changes(tmp_path):
    tool, counter = fake_toolchain(tmp_path)
    first = Registry([row(tool)], str(tmp_path)).probe()["fake"]
    again = Registry([row(tool)], str(tmp_path)).probe()["fake"]
    assert (
        (first.available, first.version) == (again.available, again.version) == (True, "fakec 1.0")
    )
    assert probes(counter) == 1, "an unchanged toolchain was probed again"
    stat = tool.stat()
    os.utime(tool, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # an upgrade
    Registry([row(tool)], str(tmp_path)).probe()
    assert probes(counter) == 2, "a changed toolchain was not probed again"


def test_a_failed_probe_is_tried_again(tmp_path):
    tool, counter = fake_toolchain(tmp_path, exit_code=3)
    for _ in range(2):
        status = Registry([row(tool)], str(tmp_path)).probe()["fake"]
        assert not status.available and "broken" in (status.reason or "")
    assert probes(counter) == 2


def test_a_corrupt_cache_is_ignored(tmp_path):
    tool, counter = fake_toolchain(tmp_path)
    (tmp_path / ".probe-cache.json").write_text("{not json")
    assert Registry([row(tool)], str(tmp_path)).probe()["fake"].available
    assert probes(counter) == 1
