"""Rust: Debian's sources of the rows' crates built offline into rlibs that rustc links."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from sandlot.install.files import (
    fresh_dir,
    prepare_runtime,
    replace_dir,
    stamp_matches,
    write_stamp,
)
from sandlot.install.process import CHECK_UID, PATH, as_nobody, run
from sandlot.install.step import Setup, SetupError
from sandlot.languages import LANGUAGES
from sandlot.languages.native import RUST_CRATES, RUST_CRATES_DIR

# Cargo reads Debian's crate sources (librust-*-dev) as a directory registry: no network.
CARGO_OFFLINE = """\
[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"

[net]
offline = true
"""
CRATES_CHECK = """\
use rand::Rng;
use regex::Regex;
fn main() {
    let n: u8 = rand::thread_rng().gen_range(1..2);
    let re = Regex::new(r"^a+$").unwrap();
    let digest = format!("{:x}", md5::compute(b"a"));
    let _ = (time::Duration::seconds(1), anyhow::anyhow!("x"));
    println!("{} {} {}", n, re.is_match("aa"), digest);
}
"""


def ensure_rust_crates(setup: Setup) -> str:
    """Debian's sources of the rows' crates built once into rlibs, so that rustc alone (no
    cargo, no network) compiles programs that use them: the rust row passes `-L` and
    `--extern NAME` for each."""
    target = Path(RUST_CRATES_DIR.format(runtime=setup.runtime))
    deps = "".join(f'{name} = "{version}"\n' for name, version in RUST_CRATES.items())
    rustc = run(["rustc", "--version"]).strip()
    spec = f"{rustc}\n{deps}"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"rust crates: building {' '.join(RUST_CRATES)} into {target} ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / ".cargo").mkdir()
        (home / ".cargo" / "config.toml").write_text(CARGO_OFFLINE)
        (home / "src").mkdir()
        (home / "src" / "lib.rs").write_text("")
        (home / "Cargo.toml").write_text(
            f'[package]\nname = "sandlot-crates"\nversion = "0.0.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{deps}"
        )
        for path in (home, *home.rglob("*")):  # the build (crates' build scripts) runs as nobody
            os.chown(path, CHECK_UID, CHECK_UID)
        env = {"PATH": PATH, "HOME": tmp, "CARGO_HOME": str(home / ".cargo")}
        run(as_nobody(["cargo", "build", "--release", "--offline", "--quiet"]), env=env, cwd=tmp)
        for rlib in (home / "target" / "release" / "deps").glob("*.rlib"):
            shutil.copy2(rlib, new / rlib.name)
    replace_dir(new, target)
    checked = check_rust_crates(setup)
    write_stamp(target, spec)
    return f"built {' '.join(RUST_CRATES)} into {target} (a program using them printed {checked!r})"


def check_rust_crates(setup: Setup) -> str:
    """Compile and run a program using every crate, with the rust row's compile step."""
    row = next(row for row in LANGUAGES if row.name == "rust")
    with tempfile.TemporaryDirectory() as tmp:
        os.chown(tmp, CHECK_UID, CHECK_UID)
        (Path(tmp) / row.source).write_text(CRATES_CHECK)
        os.chmod(Path(tmp) / row.source, 0o644)
        env = {"PATH": PATH, "HOME": tmp}
        assert row.compile is not None
        run(as_nobody(list(row.argv(row.compile, str(setup.runtime), 1024))), env=env, cwd=tmp)
        out = run(as_nobody(["./main"]), env=env, cwd=tmp).strip()
    if not out.startswith("1 true 0cc175b9c0f1b6a831c399e269772661"):
        raise SetupError(f"the crates check program printed {out!r}")
    return out
