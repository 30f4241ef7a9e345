"""Rows on the JVM (OpenJDK 17): Java and its JUnit tests, Scala, Kotlin and Kotlin scripts.

Their flags make a JVM start faster without changing what runs, and the JVM compilers map
class-data archives `sandlot setup` records from these rows (`cds`, `sample`, `run_cds`); the
Kotlin compiler's version is pinned here so that an archive recorded at set-up time fits the
compiler that uses it.
"""

from __future__ import annotations

from sandlot.languages.node import NODE_MODULES
from sandlot.languages.registry import Language

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
# Maven artifacts on the java and junit rows' class paths (before the request's own jars, as
# SandboxFusion puts its jars), fetched by `sandlot setup` into JARS_DIR as ARTIFACT.jar from
# the lock in languages/packages/maven, which pins them and what they depend on:
# - JUnit 5's console launcher (the junit row runs it), at the version of the JUnit BOM the
#   aider polyglot exercises' Gradle files name;
# - AssertJ, org.json and RxJava 2 at the versions those Gradle files name (every java exercise
#   asserts with AssertJ; rest-api uses org.json, hangman RxJava 2);
# - javatuples 1.2, SandboxFusion's jar, which MultiPL-E's Java prompts import.
MAVEN_JARS = (
    "org.junit.platform:junit-platform-console-standalone:1.10.0",
    "org.assertj:assertj-core:3.25.1",
    "org.json:json:20190722",
    "io.reactivex.rxjava2:rxjava:2.2.12",
    "org.javatuples:javatuples:1.2",
)
JARS_DIR = "{runtime}/jars"
VERSIONS_FILE = "versions.txt"  # in JARS_DIR: `ARTIFACT VERSION` lines, written by set-up
JUNIT_JAR = f"{JARS_DIR}/junit-platform-console-standalone.jar"
JAVATUPLES = f"{JARS_DIR}/javatuples.jar"
SCALA_LIB = "/usr/share/scala-2.11/lib"
KOTLIN = "kotlin-compiler@2.4.20"  # from npm, into {runtime}/node
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


# Kotlin as SandboxFusion compiles it (its image ships Kotlin 2.0): the language and the standard
# library's API of 2.0. Kotlin 2.1 turned deprecations such as `String.toLowerCase()` into errors,
# so answers written for Kotlin 2.0 (every Kotlin dataset's reference, and what models write from
# them) would not compile with 2.4's defaults; 2.4 still compiles 2.0, whose deprecation notice is
# silenced (it would be in every script's stderr). What 2.1-2.4 added is refused, as there.
KOTLIN_AS_2_0 = ("-language-version", "2.0", "-api-version", "2.0", "-Xsuppress-version-warnings")


def kotlinc(archive: str = "") -> tuple[str, ...]:
    share = (f"-XX:SharedArchiveFile={archive}",) if archive else ()
    return (JAVA, *JVM_TOOL_FLAGS, *share, "-cp", f"{KOTLIN_HOME}/lib/kotlin-compiler.jar",
            "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler", "-kotlin-home", KOTLIN_HOME,
            *KOTLIN_AS_2_0)  # fmt: skip


# The public class of a Java file (JUnit tests are named after it), or Main.
JAVA_CLASS = (
    "n=$(sed -n 's/^.*public[[:space:]][[:space:]]*\\(final[[:space:]][[:space:]]*\\|"
    "abstract[[:space:]][[:space:]]*\\)*class[[:space:]][[:space:]]*\\([A-Za-z_$][A-Za-z0-9_$]*\\)"
    ".*/\\2/p' Main.java | head -n 1)"
)
# The class path of the JUnit launcher (which does not expand `*`): the classes, the jar set,
# then every jar the request brought; and what it scans for tests: the same but the jar set.
JUNIT_PATHS = (
    f'cp=classes:.; for j in {JARS_DIR}/*.jar; do cp="$cp:$j"; done; scan=classes:.; '
    'for j in *.jar; do [ -e "$j" ] && cp="$cp:$j" && scan="$scan:$j"; done'
)
# Every jar the request brought, after the given class path entries.
JARS = 'cp=classes:.; for j in *.jar; do [ -e "$j" ] && cp="$cp:$j"; done'

# The judge's split (sandlot/judge/split_java.py): the answer's sources in their own directory,
# compiled in the same javac run as the program; then no class of the answer may bear a name the
# program uses that is listed in `reserved` (javac's output says what the answer declared, however
# it spelled it).
SPLIT_DIR = ".sandlot_answer"
_SPLIT_CHECK = (
    f"[ -e {SPLIT_DIR}/reserved ] || exit 0; while read -r n; do "
    'if [ -n "$n" ] && [ -e "classes/$n.class" ]; then echo "the answer declares a class named '
    '$n, a name the tests use (it would stand for theirs): rename it" >&2; exit 1; fi; '
    f"done < {SPLIT_DIR}/reserved"
)
JAVA_COMPILE = (
    "/bin/sh",
    "-c",
    f'set -- "$1"; for f in {SPLIT_DIR}/*.java; do [ -e "$f" ] && set -- "$@" "$f"; done; '
    f"{' '.join(JAVAC)} -encoding UTF-8 -cp '.:{JARS_DIR}/*:*' -d classes \"$@\" || exit 1; "
    + _SPLIT_CHECK,
    "javac",
    "{src}",
)

ROWS: tuple[Language, ...] = (
    Language(
        name="java",
        source="Main.java",
        compile=JAVA_COMPILE,
        artifacts=("classes",),
        run=("/usr/bin/java", *JVM_FLAGS, "-ea", "-cp", f"classes:.:{JARS_DIR}/*:*", "Main"),
        version=("/usr/bin/java", "-version"),
        binds=("/etc/java-17-openjdk", CDS, JARS_DIR),
        requires=("/usr/bin/javac", "/usr/bin/java", JAVATUPLES),
        # Debian's jars: what set-up links in when Maven Central cannot be reached; Maven fetches.
        apt=("openjdk-17-jdk-headless", "libassertj-core-java", "libjavatuples-java", "maven"),
        packages=(JARS_DIR,),
        pids=64,
        cds=JAVAC_CDS,
        sample=JAVAC_SAMPLE,
        summary="OpenJDK, class Main, assertions on; javatuples (as SandboxFusion's), AssertJ, "
        "org.json, RxJava 2 and the .jar files in `files` on the class path",
    ),
    Language(
        name="junit",
        source="Main.java",
        # The file is renamed after its public class, as javac wants, then every .java compiles.
        compile=(
            "/bin/sh",
            "-c",
            f'{JAVA_CLASS}; [ -z "$n" ] || [ "$n" = Main ] || mv Main.java "$n.java"; '
            f"{' '.join(JAVAC)} -encoding UTF-8 -cp '.:{JARS_DIR}/*:*' -d classes *.java "
            f"|| exit 1; {_SPLIT_CHECK}",
        ),
        artifacts=("classes",),
        run=(
            "/bin/sh",
            "-c",
            f"{JUNIT_PATHS}; exec {JAVA} {' '.join(JVM_FLAGS)} -ea -jar {JUNIT_JAR} "
            '--class-path "$cp" --scan-class-path "$scan" --disable-banner --disable-ansi-colors '
            "--details=tree --fail-if-no-tests",
        ),
        guard="junit",
        # The launcher of JUnit 1.10 has no --version; set-up wrote the one it fetched.
        version=(
            "/usr/bin/awk",
            '$1 == "junit-platform-console-standalone" '
            '{{ $1 = "JUnit Platform Console Launcher"; print }}',
            f"{JARS_DIR}/{VERSIONS_FILE}",
        ),
        binds=("/etc/java-17-openjdk", CDS, JARS_DIR),  # javac's archive, recorded for java
        requires=("/usr/bin/javac", JAVA, JUNIT_JAR),
        apt=("openjdk-17-jdk-headless", "junit5", "libassertj-core-java", "maven"),
        packages=(JARS_DIR,),
        pids=64,
        summary="JUnit 5 (Jupiter) console launcher, with AssertJ, org.json and RxJava 2; test "
        "classes from the code and `files`",
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
            "scala.tools.nsc.Main -nowarn -d classes -cp '.:*' main.scala "
            # the judge's split (sandlot/judge/split_managed.py): the answer's own file
            f'$(for f in {SPLIT_DIR}/*.scala; do [ -e "$f" ] && printf \'%s \' "$f"; done)',
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
        summary="Kotlin/JVM compiler from npm's kotlin-compiler, compiling Kotlin 2.0 (as "
        "SandboxFusion's); `fun main` in main.kt",
    ),
    Language(
        name="kotlin_script",
        aliases=("kts",),
        source="main.kts",
        # kotlinc compiles the script and runs it in one JVM: without an archive of the
        # compiler's classes a hello world took 2.6 s of CPU, 8.9 s of wall time at a load of
        # 4-9, close to the default run_timeout (docs/benchmarks.md).
        run=(*kotlinc(f"{CDS}/kotlin-script.jsa"), "-nowarn", "-script", "{src}"),
        version=(*kotlinc(), "-version"),
        binds=("/etc/java-17-openjdk", "{runtime}/node", CDS),
        requires=(JAVA, f"{KOTLIN_HOME}/lib/kotlin-compiler.jar"),
        apt=("openjdk-17-jdk-headless",),
        npm=(KOTLIN,),
        pids=64,
        cds=f"{CDS}/kotlin-script.jsa",
        sample="val xs = listOf(1, 2).map { it * 2 }\nprintln(xs.joinToString() + readLine())\n",
        summary="a Kotlin script (.kts) in Kotlin 2.0, compiled and run by kotlinc -script",
    ),
)
