"""The judge's C++ prelude (the headers HumanEval-X's tests use) precompiled with the flags of
the cpp row's split builds, which include it in every unit that begins with it."""

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
from sandlot.languages import CPP_FLAGS, CPP_PRELUDE, CPP_PRELUDE_DIR

GXX = "/usr/bin/g++"  # the cpp row's
HEADER = "sandlot_prelude.hpp"


def ensure_cpp_prelude(setup: Setup) -> str:
    """The prelude's header and its precompiled form, side by side (g++ takes the `.gch` for
    the header it is asked to include when it fits the compiler and flags)."""
    target = Path(CPP_PRELUDE_DIR.format(runtime=setup.runtime))
    gxx = run([GXX, "--version"]).splitlines()[0]
    spec = f"{gxx}\n{CPP_FLAGS}\n{hashlib.sha256(CPP_PRELUDE.encode()).hexdigest()}\n"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"cpp prelude: precompiling the judge's C++ headers into {target} ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    header = new / HEADER
    header.write_text(CPP_PRELUDE)
    run([GXX, *CPP_FLAGS.split(), "-x", "c++-header", "-o", f"{header}.gch", str(header)])
    replace_dir(new, target)
    write_stamp(target, spec)
    return f"built {target / HEADER}.gch"
