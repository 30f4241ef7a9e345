"""Rust: the toolchain (Debian 12's rustc-web and cargo-web, unpacked) and the crate set, vendored
by `cargo vendor` from the lock beside the rows and built once into rlibs that rustc links.

The toolchain. Debian 12's `rustc` is 1.63 (2022): the crates programs use today need newer,
and so do programs (let-else, `is_some_and`, `div_ceil`...). bookworm's updates carry Rust 1.96
as `rustc-web`, built by Debian, but installing it replaces the host's `rustc` and `cargo`
(it Conflicts with them): sandlot unpacks the locked .debs into its runtime dir instead, a
toolchain of its own as Go's is, and leaves the host's Rust alone. Only its libraries come from
apt (libllvm22, cargo's libcurl and libgit2: the rust row's `apt`).

The crates (packages/rust/Cargo.toml and Cargo.lock, with crates.io's checksums): `cargo vendor`
fetches them, cargo checks every file against the checksums; they are built into rlibs for
rustc (`-L` and `--extern NAME`), and Cargo projects in a box build from the vendored sources,
offline. When crates.io cannot be reached, Debian's packaged crate sources (librust-*-dev) are
built instead, as before the set existed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from sandlot.install.apt import APT_INSTALL, installed_debs
from sandlot.install.files import (
    fresh_dir,
    prepare_runtime,
    replace_dir,
    stamp_matches,
    write_stamp,
)
from sandlot.install.process import CHECK_UID, PATH, as_nobody, host_env, run
from sandlot.install.sets import (
    LOCKS,
    SetStatus,
    fallback_line,
    read_status,
    write_status,
)
from sandlot.install.step import Setup, SetupError
from sandlot.languages import CRATES, LANGUAGES, RUST_CRATES, RUST_TOOLCHAIN

RUST_LOCK = LOCKS / "rust"
# Runs rustc or cargo of the unpacked toolchain: its own libraries (librustc_driver, std's
# dylib) are where the .debs put them, not on the loader's path. rustc finds its sysroot from
# its own path.
WRAPPER = """\
#!/bin/sh
# Written by `sandlot setup` (sandlot/install/rust.py).
LD_LIBRARY_PATH={lib} RUSTC={bin}/rustc exec {usr}/bin/{tool} "$@"
"""
# Cargo in a box: crates.io is the vendored set, and nothing is fetched.
CARGO_CONFIG = """\
[source.crates-io]
replace-with = "sandlot"

[source.sandlot]
directory = "{vendor}"

[net]
offline = true
"""
# Debian's sources of the crates, as a directory registry: for a host without crates.io.
DEBIAN_REGISTRY = "/usr/share/cargo/registry"
# Features the set's manifest asks of a crate (for the Debian fallback's manifest).
FEATURES = {"serde": ', features = ["derive"]'}
CRATES_CHECK = """\
use rand::Rng;
use regex::Regex;
use serde::{Deserialize, Serialize};
#[derive(Serialize, Deserialize)]
struct P { x: u8 }
fn main() {
    let n: u8 = rand::thread_rng().gen_range(1..2);
    let re = Regex::new(r"^a+$").unwrap();
    let digest = format!("{:x}", md5::compute(b"a"));
    let _ = (time::Duration::seconds(1), anyhow::anyhow!("x"));
    let json = serde_json::to_string(&P { x: 7 }).unwrap();
    println!("{} {} {} {}", n, re.is_match("aa"), digest, json);
}
"""
CRATES_CHECK_OUT = '1 true 0cc175b9c0f1b6a831c399e269772661 {"x":7}'


def read_debs(text: str) -> list[tuple[str, str, str]]:
    """The toolchain lock's (package, version, sha256) lines."""
    rows = (line.split() for line in text.splitlines() if line.strip() and line[0] != "#")
    return [(p, v, s) for p, v, s in rows]


def ensure_rust_toolchain(setup: Setup) -> str:
    target = Path(RUST_TOOLCHAIN.format(runtime=setup.runtime))
    lock = (RUST_LOCK / "toolchain.lock").read_text()
    if stamp_matches(target, lock):
        return "ok (already present)"
    debs = read_debs(lock)
    setup.log(f"rust toolchain: unpacking {' '.join(p for p, _, _ in debs)} into {target} ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # apt's download user writes here
        try:
            run(["apt-get", "download", *(f"{p}={v}" for p, v, _ in debs)], cwd=tmp)
        except SetupError as exc:
            # Debian's archive keeps only the current build of an updated package.
            raise SetupError(f"{exc}\nDebian no longer serves the locked Rust toolchain? "
                             "`sandlot packages lock --sets rust-toolchain` locks the one it "
                             "serves now") from exc  # fmt: skip
        for package, version, sha256 in debs:
            deb = next(Path(tmp).glob(f"{package}_*.deb"))
            with deb.open("rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            if digest != sha256:
                raise SetupError(f"{package} {version}: the .deb's SHA-256 is {digest}, the "
                                 f"lock says {sha256}")  # fmt: skip
            run(["dpkg-deb", "-x", str(deb), str(new)])
    usr = target / "usr"
    (new / "bin").mkdir()
    for tool in ("rustc", "cargo", "rustdoc"):
        wrapper = new / "bin" / tool
        wrapper.write_text(WRAPPER.format(lib=usr / "lib" / "x86_64-linux-gnu",
                                          bin=target / "bin", usr=usr, tool=tool))  # fmt: skip
        os.chmod(wrapper, 0o755)
    replace_dir(new, target)
    version = run(as_nobody([str(target / "bin" / "rustc"), "--version"]),
                  env={"PATH": PATH, "HOME": "/nonexistent"}, cwd="/").strip()  # fmt: skip
    write_stamp(target, lock)
    return f"unpacked {version} into {target}"


def tool(setup: Setup, name: str) -> str:
    return str(Path(RUST_TOOLCHAIN.format(runtime=setup.runtime)) / "bin" / name)


def cargo_env(setup: Setup, home: Path, **extra: str) -> dict[str, str]:
    return host_env(PATH=PATH, HOME=str(home), CARGO_HOME=str(home / ".cargo"),
                    CARGO_TERM_COLOR="never", **extra)  # fmt: skip


def ensure_rust_crates(setup: Setup) -> str:
    """The locked crates vendored into {CRATES}/vendor and built into rlibs in {CRATES}/lib, so
    that rustc alone (no cargo, no network) compiles programs that use them: the rust row
    passes `-L` and `--extern NAME` for each of RUST_CRATES."""
    target = Path(CRATES.format(runtime=setup.runtime))
    toolchain = (Path(RUST_TOOLCHAIN.format(runtime=setup.runtime)) / ".sandlot-stamp").read_text()
    lock = {name: (RUST_LOCK / name).read_text() for name in ("Cargo.toml", "Cargo.lock", "lib.rs")}
    spec = f"{toolchain}\n{lock['Cargo.toml']}\n{lock['Cargo.lock']}"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"rust crates: vendoring the locked crates into {target} ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for name, text in lock.items():
            (home / name).write_text(text)
        (home / ".cargo").mkdir()
        if setup.mirrors.cargo:  # crates.io replaced by the operator's registry
            (home / ".cargo" / "config.toml").write_text(
                '[source.crates-io]\nreplace-with = "mirror"\n\n'
                f'[source.mirror]\nregistry = "{setup.mirrors.cargo}"\n'
            )
        try:
            run([tool(setup, "cargo"), "vendor", "--locked", "--versioned-dirs", "--quiet",
                 str(new / "vendor")], env=cargo_env(setup, home), cwd=tmp)  # fmt: skip
        except SetupError as exc:
            return crates_fallback(setup, target, new, exc)
        status = SetStatus("crates", "registry", setup.mirrors.cargo or "crates.io",
                           lock["Cargo.lock"].count("[[package]]") - 1)  # fmt: skip
    build_rlibs(setup, new, new / "vendor", target / "vendor", lock["Cargo.toml"],
                lock["Cargo.lock"])  # fmt: skip
    write_status(new, status)
    replace_dir(new, target)
    checked = check_rust_crates(setup)
    write_stamp(target, spec)
    return f"vendored and built {status.pins} crates into {target} (a check printed {checked!r})"


def build_rlibs(
    setup: Setup, new: Path, sources: Path, final_sources: Path, manifest: str, lockfile: str
) -> None:
    """Build `manifest`'s crates from `sources` into rlibs in new/lib, and write the boxes'
    cargo config (which names the sources where they will be: `final_sources`)."""
    (new / "lib").mkdir()
    (new / "cargo-home").mkdir()
    (new / "cargo-home" / "config.toml").write_text(CARGO_CONFIG.format(vendor=final_sources))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "Cargo.toml").write_text(manifest)
        (home / "lib.rs").write_text("")
        if lockfile:
            (home / "Cargo.lock").write_text(lockfile)
        (home / ".cargo").mkdir()
        (home / ".cargo" / "config.toml").write_text(CARGO_CONFIG.format(vendor=sources))
        for path in (home, *home.rglob("*")):  # crates' build scripts run as nobody
            os.chown(path, CHECK_UID, CHECK_UID)
        locked = ["--locked"] if lockfile else []
        run(as_nobody([tool(setup, "cargo"), "build", "--release", "--offline", "--quiet",
                       *locked]), env=cargo_env(setup, home), cwd=tmp)  # fmt: skip
        for built in (home / "target" / "release" / "deps").iterdir():
            if built.suffix in (".rlib", ".so"):  # .so: proc macros (serde's derive)
                shutil.copy2(built, new / "lib" / built.name)


def debian_package(crate: str) -> str:
    return f"librust-{crate.replace('_', '-')}-dev"


def crates_fallback(setup: Setup, target: Path, new: Path, exc: SetupError) -> str:
    """Debian's sources of the crates Debian has, built as the set would be (any version)."""
    if (read_status(target) or {}).get("source") == "registry":
        raise SetupError(f"the crates' lock changed and crates.io cannot be reached: {exc}")
    shutil.rmtree(new / "vendor", ignore_errors=True)
    packages = [debian_package(name) for name in RUST_CRATES]
    present = installed_debs(packages)
    have = [p for p in packages if p in present or debian_has(p)]
    if absent := [p for p in have if p not in present]:
        run([*APT_INSTALL, *absent], env=host_env(DEBIAN_FRONTEND="noninteractive"))
    crates = [name for name in RUST_CRATES if debian_package(name) in have]
    deps = "".join(f'{name} = {{ version = "*"{FEATURES.get(name, "")} }}\n' for name in crates)
    manifest = ('[package]\nname = "sandlot-crates"\nversion = "0.0.0"\nedition = "2021"\n\n'
                f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{deps}')  # fmt: skip
    registry = Path(DEBIAN_REGISTRY)
    build_rlibs(setup, new, registry, registry, manifest, "")
    reason = str(exc).splitlines()[-1].strip()[:200]
    missing = [name for name in RUST_CRATES if name not in crates]
    status = SetStatus("crates", "debian", " ".join(have), len(RUST_CRATES), missing, reason)
    write_status(new, status)
    replace_dir(new, target)  # no stamp: the next run tries crates.io again
    return fallback_line(status)


def debian_has(package: str) -> bool:
    policy = run(["apt-cache", "policy", package])
    return bool(policy.strip()) and "Candidate: (none)" not in policy


def check_rust_crates(setup: Setup) -> str:
    """Compile and run a program using the crates, with the rust row's compile step."""
    row = next(row for row in LANGUAGES if row.name == "rust")
    with tempfile.TemporaryDirectory() as tmp:
        os.chown(tmp, CHECK_UID, CHECK_UID)
        (Path(tmp) / row.source).write_text(CRATES_CHECK)
        os.chmod(Path(tmp) / row.source, 0o644)
        env = {"PATH": PATH, "HOME": tmp}
        assert row.compile is not None
        run(as_nobody(list(row.argv(row.compile, str(setup.runtime), 1024))), env=env, cwd=tmp)
        out = run(as_nobody(["./main"]), env=env, cwd=tmp).strip()
    if out != CRATES_CHECK_OUT:
        raise SetupError(f"the crates check program printed {out!r}")
    return out
