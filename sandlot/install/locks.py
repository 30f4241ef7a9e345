"""`sandlot packages lock` and `sandlot packages check`: rewrite the package sets' locks from
their registries with each language's own resolver, and check that the sets `sandlot setup`
installed agree with the locks (CI runs the check after set-up).

A lock is rewritten from what the rows ask for (imports.go, Cargo.toml, MAVEN_JARS): Go's
`go mod tidy`, cargo's `generate-lockfile` and Maven's resolution pick the versions and record
their checksums; the Rust toolchain's lock takes the rustc-web Debian serves now.
"""

from __future__ import annotations

import json
import re
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

from sandlot.install.gomod import GO_LOCK, LOCK_FILES, go_env
from sandlot.install.jars import JARS_LOCK, lock_jars, read_lock, sha256_of
from sandlot.install.process import PATH, run
from sandlot.install.rust import RUST_LOCK, cargo_env, tool
from sandlot.install.sets import Mirrors, read_status
from sandlot.install.step import Setup
from sandlot.languages import CRATES, GO, GO_MODULES, JARS_DIR, RUST_TOOLCHAIN

# The toolchain's .debs; std's runtime library is named after the Rust release (found from
# libstd-rust-web-dev's dependencies).
TOOLCHAIN_DEBS = ("cargo-web", "libstd-rust-web-dev", "rustc-web")
LOCKED_CRATE = re.compile(
    r'name = "([^"]+)"\nversion = "([^"]+)"\nsource = "registry[^"]*"\nchecksum = "([0-9a-f]+)"'
)


def lock_go(setup: Setup) -> str:
    go = GO.format(runtime=setup.runtime)
    version = run([go, "env", "GOVERSION"], env={"PATH": PATH, "HOME": "/tmp"}).strip()
    language = ".".join(version.removeprefix("go").split(".")[:2])  # the rows' Go language
    with tempfile.TemporaryDirectory() as tmp:
        module = Path(tmp) / "module"
        module.mkdir()
        for name in LOCK_FILES:
            if (GO_LOCK / name).exists():
                (module / name).write_text((GO_LOCK / name).read_text())
        go_mod = module / "go.mod"
        go_mod.write_text(re.sub(r"(?m)^go \S+$", f"go {language}", go_mod.read_text()))
        env = go_env(Path(tmp), Path(tmp) / "mod", setup.mirrors, GOFLAGS="-mod=mod")
        run([go, "mod", "tidy"], env=env, cwd=str(module))
        for name in ("go.mod", "go.sum"):
            (GO_LOCK / name).write_text((module / name).read_text())
    return f"{GO_LOCK}/go.mod, go.sum: go {language}, {count_lines(GO_LOCK / 'go.sum')} sums"


def lock_crates(setup: Setup) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for name in ("Cargo.toml", "lib.rs"):
            (home / name).write_text((RUST_LOCK / name).read_text())
        run([tool(setup, "cargo"), "generate-lockfile", "--quiet"], env=cargo_env(setup, home),
            cwd=tmp)  # fmt: skip
        (RUST_LOCK / "Cargo.lock").write_text((home / "Cargo.lock").read_text())
    packages = (RUST_LOCK / "Cargo.lock").read_text().count("[[package]]")
    return f"{RUST_LOCK}/Cargo.lock: {packages} packages"


def lock_jar_set(setup: Setup) -> str:
    JARS_LOCK.write_text(lock_jars(setup.mirrors))
    return f"{JARS_LOCK}: {len(read_lock(JARS_LOCK.read_text()))} jars"


def lock_toolchain(setup: Setup) -> str:
    """The rustc-web .debs Debian serves now, with their SHA-256 from apt's (signed) lists."""
    header = "".join(line + "\n" for line in (RUST_LOCK / "toolchain.lock").read_text()
                     .splitlines() if line.startswith("#"))  # fmt: skip
    lines = []
    std = run(["apt-cache", "show", "--no-all-versions", "libstd-rust-web-dev"])
    runtime_lib = re.search(r"\blibstd-rust-web-\d+\.\d+\b", std)
    for package in sorted({*TOOLCHAIN_DEBS, *([runtime_lib.group(0)] if runtime_lib else [])}):
        shown = run(["apt-cache", "show", "--no-all-versions", package])
        version = re.search(r"(?m)^Version: (\S+)", shown)
        sha = re.search(r"(?m)^SHA256: (\S+)", shown)
        if not (version and sha):
            raise ValueError(f"apt-cache show {package} gave no version or SHA256")
        lines.append(f"{package} {version.group(1)} {sha.group(1)}\n")
    (RUST_LOCK / "toolchain.lock").write_text(header + "".join(lines))
    return f"{RUST_LOCK}/toolchain.lock: {' '.join(line.split()[1] for line in lines[:1])}"


LOCKERS: dict[str, Callable[[Setup], str]] = {
    "go": lock_go, "rust-toolchain": lock_toolchain, "crates": lock_crates, "jars": lock_jar_set,
}  # fmt: skip


def count_lines(path: Path) -> int:
    return len(path.read_text().splitlines())


# -- check --------------------------------------------------------------------------------------


def check_locks(runtime: Path) -> list[str]:
    """What disagrees between the locks and the installed sets (empty: they agree)."""
    return [*check_go(runtime), *check_jars(runtime), *check_crates(runtime)]


def _registry_status(target: Path, name: str) -> list[str]:
    status = read_status(target)
    if status is None:
        return [f"{name}: not installed at {target} (`sandlot setup`)"]
    if status.get("source") != "registry":
        return [f"{name}: Debian's packages stand in for the lock ({status.get('reason')}); "
                f"missing {status.get('missing')}"]  # fmt: skip
    return []


def check_go(runtime: Path) -> list[str]:
    target = Path(GO_MODULES.format(runtime=runtime))
    if problems := _registry_status(target, "go modules"):
        return problems
    problems = [
        f"go modules: {target / name} differs from the lock's"
        for name in ("go.mod", "go.sum")
        if (target / name).read_text() != (GO_LOCK / name).read_text()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name in LOCK_FILES:
            (Path(tmp) / name).write_text((GO_LOCK / name).read_text())
        env = go_env(Path(tmp), target / "mod", Mirrors(), GOPROXY="off", GOFLAGS="-mod=mod")
        try:
            run([GO.format(runtime=runtime), "mod", "verify"], env=env, cwd=tmp)
        except Exception as exc:
            problems.append(f"go modules: go mod verify: {exc}")
    return problems


def check_jars(runtime: Path) -> list[str]:
    target = Path(JARS_DIR.format(runtime=runtime))
    if problems := _registry_status(target, "jars"):
        return problems
    problems = []
    for pin in read_lock(JARS_LOCK.read_text()):
        jar = target / f"{pin.artifact}.jar"
        digest = sha256_of(jar) if jar.is_file() else "absent"
        if digest != pin.sha256:
            problems.append(f"jars: {jar} has SHA-256 {digest}, the lock {pin.sha256}")
    return problems


def check_crates(runtime: Path) -> list[str]:
    target = Path(CRATES.format(runtime=runtime))
    if problems := _registry_status(target, "crates"):
        return problems
    locked = {(n, v): c for n, v, c in LOCKED_CRATE.findall((RUST_LOCK / "Cargo.lock").read_text())}
    problems = []
    vendored = {}
    for checksums in (target / "vendor").glob("*/.cargo-checksum.json"):
        package = tomllib.loads((checksums.parent / "Cargo.toml").read_text())["package"]
        vendored[(package["name"], package["version"])] = json.loads(checksums.read_text()).get(
            "package"
        )
    for key, checksum in locked.items():
        if vendored.get(key) != checksum:
            problems.append(f"crates: {key[0]} {key[1]} vendored with checksum "
                            f"{vendored.get(key)}, the lock {checksum}")  # fmt: skip
    problems += [f"crates: {n} {v} vendored but not in the lock" for n, v in vendored
                 if (n, v) not in locked]  # fmt: skip
    toolchain = Path(RUST_TOOLCHAIN.format(runtime=runtime)) / ".sandlot-stamp"
    if (
        not toolchain.exists()
        or toolchain.read_text() != (RUST_LOCK / "toolchain.lock").read_text()
    ):
        problems.append(f"rust toolchain: {toolchain.parent} is not the lock's (`sandlot setup`)")
    return problems
