"""Catch2: its main compiled once and its header precompiled, with the catch2 row's flags."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sandlot.install.files import (
    fresh_dir,
    prepare_runtime,
    replace_dir,
    stamp_matches,
    write_stamp,
)
from sandlot.install.process import run
from sandlot.install.step import Setup
from sandlot.languages import CATCH2_DIR, CATCH2_FLAGS

CATCH2_MAIN = "#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n"
CATCH2_HEADER = Path("/usr/include/catch2/catch.hpp")
GXX = "/usr/bin/g++"  # the catch2 row's


def ensure_catch2(setup: Setup) -> str:
    """Catch2's main compiled once (a minute of g++ that every test build used to pay) and its
    header precompiled, both with the catch2 row's flags; the row links and includes them."""
    target = Path(CATCH2_DIR.format(runtime=setup.runtime))
    gxx = run([GXX, "--version"]).splitlines()[0]
    header = CATCH2_HEADER.read_bytes()
    spec = f"{gxx}\n{CATCH2_FLAGS}\n{hashlib.sha256(header).hexdigest()}\n"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"catch2: compiling its main and header into {target} (a few minutes) ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    (new / "include" / "catch2").mkdir(parents=True)
    (new / "catch_main.cpp").write_text(CATCH2_MAIN)
    run([GXX, *CATCH2_FLAGS, "-c", "-o", str(new / "catch_main.o"), str(new / "catch_main.cpp")])
    pch = new / "include" / "catch2" / "catch.hpp.gch"
    # The header beside its precompiled form: g++ then takes the header to live here, and a
    # second `#include` of it (after the row's `-include`) must find it here.
    (pch.parent / "catch.hpp").symlink_to(CATCH2_HEADER)
    run([GXX, *CATCH2_FLAGS, "-x", "c++-header", "-o", str(pch), str(CATCH2_HEADER)])
    replace_dir(new, target)
    write_stamp(target, spec)
    return f"built {target / 'catch_main.o'} and {pch.name}"
