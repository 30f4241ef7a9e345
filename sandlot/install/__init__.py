"""`sandlot setup`: installs on a Debian 12 host, as root, what the languages table needs.

Every step checks before it acts (dpkg's status, stamp files that hold the spec a runtime was
built from), so a rerun on a complete machine reads a few files, asks dpkg once and installs
nothing. Go's runtimes are built beside their final place and renamed into it, and every stamp
is written last, so an interrupted run leaves nothing that a rerun mistakes for done.

Only the standard library and the languages table are imported: this runs before the server's
own dependencies are known to work.

The steps, in the order STEPS runs them: `apt.py` (Debian's packages), `python.py` (the sandbox
Python), `go.py` (the toolchain and its warm build cache), `gomod.py` (the Go module set),
`node.py` (npm packages, jest's files), `jars.py` (the JVM rows' jars), `jvm.py` (class-data
archives), `ruby.py` and `r.py` (the boot files Ruby and R start from), `rust.py` (the Rust
toolchain and crate set), `catch2.py` (its main and header), `cpp_prelude.py` (the judge's C++
headers precompiled); `egress.py` keeps the host's own
squid service off (sandlot runs its own).
What they share: `step.py` (Setup, Step, SetupError), `process.py` (running commands, with
Debian's PATH), `files.py` (stamps, putting builds in place), `rows.py` (which rows a run and a
step concern), `sets.py` (the registries' package sets: mirrors, status files); `locks.py` is
`sandlot packages lock` and `check`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sandlot.install.apt import ensure_apt
from sandlot.install.catch2 import ensure_catch2
from sandlot.install.cpp_prelude import ensure_cpp_prelude
from sandlot.install.egress import ensure_squid_quiet
from sandlot.install.go import ensure_go, ensure_go_cache
from sandlot.install.gomod import ensure_go_modules
from sandlot.install.jars import ensure_jars
from sandlot.install.jvm import ensure_cds
from sandlot.install.locks import LOCKERS, check_locks
from sandlot.install.node import ensure_npm
from sandlot.install.process import PROGRESS
from sandlot.install.python import ensure_python
from sandlot.install.r import ensure_r_boot
from sandlot.install.rows import rows_using, rows_with, select_rows
from sandlot.install.ruby import ensure_ruby_boot
from sandlot.install.rust import ensure_rust_crates, ensure_rust_toolchain
from sandlot.install.sets import Mirrors
from sandlot.install.step import MIRRORS_DEFAULT, Setup, SetupError, Step
from sandlot.languages import (
    CATCH2_DIR,
    CPP_PRELUDE_DIR,
    CRATES,
    GO_MODULES,
    JARS_DIR,
    R_DIR,
    RUBY_DIR,
)

__all__ = [
    "LOCKERS",
    "STEPS",
    "Mirrors",
    "Setup",
    "SetupError",
    "Step",
    "check_locks",
    "install",
    "run_step",
    "select_rows",
]

STEPS: tuple[Step, ...] = (
    Step("apt packages", None, ensure_apt),
    Step("egress proxy", None, ensure_squid_quiet),
    Step("sandbox python", frozenset({"python", "pytest"}), ensure_python),
    Step("go toolchain", rows_using("{runtime}/go"), ensure_go),
    Step("go build cache", rows_using("{runtime}/go-cache"), ensure_go_cache),
    Step("go modules", rows_with("packages", GO_MODULES), ensure_go_modules),
    Step("npm packages", rows_with("npm"), ensure_npm),
    Step("jars", rows_with("packages", JARS_DIR), ensure_jars),
    Step("JVM class-data archives", rows_with("cds"), ensure_cds),
    Step("ruby boot file", rows_using(RUBY_DIR), ensure_ruby_boot),
    Step("R boot file", rows_using(R_DIR), ensure_r_boot),
    Step("rust toolchain", rows_with("packages", CRATES), ensure_rust_toolchain),
    Step("rust crates", rows_with("packages", CRATES), ensure_rust_crates),
    Step("catch2", rows_using(CATCH2_DIR), ensure_catch2),
    Step("cpp prelude", rows_using(CPP_PRELUDE_DIR), ensure_cpp_prelude),
)


# --- entry points ------------------------------------------------------------------------------


def install(
    languages: list[str] | None = None,
    runtime_dir: str = "/opt/sandlot",
    log: Callable[[str], None] = print,
    mirrors: Mirrors = MIRRORS_DEFAULT,
) -> list[str]:
    """Install what the chosen language rows (all when None) need; return one line per step."""
    setup = Setup(Path(runtime_dir), select_rows(languages, runtime_dir), log, mirrors)
    done: list[str] = []
    for step in STEPS:
        if step.needed_by is not None and not step.needed_by & setup.names():
            line = f"{step.name}: skipped (no selected language needs it)"
        else:
            line = f"{step.name}: {run_step(step, setup)}"
        log(line)
        done.append(line)
    # Chosen, but no step of ours can install them: one line, not one per row.
    absent = [row.name for row in setup.rows if row.unavailable and row.missing(runtime_dir)]
    if absent:
        line = f"not installed by setup (`sandlot languages` says why): {', '.join(absent)}"
        log(line)
        done.append(line)
    return done


def run_step(step: Step, setup: Setup) -> str:
    token = PROGRESS.set(lambda text: setup.log(f"{step.name}: {text}"))
    try:
        return step.ensure(setup)
    except (SetupError, OSError) as exc:
        raise SetupError(f"step '{step.name}' failed: {exc}") from exc
    finally:
        PROGRESS.reset(token)
