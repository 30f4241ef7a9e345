"""What the start-up caches of the languages table may and may not change.

JVM rows map class-data archives `sandlot setup` recorded (javac's, kotlinc's, scalac's, Scala's
runtime): a run in the jail takes its classes from them, prints exactly what it prints without
them, works the same (only slower) when an archive is missing, stale (recorded for another class
path, as after a JDK or jar upgrade) or not an archive at all, and cannot change one for the
next run (nor its cached build, which the compile cache hands out). Node rows keep their
snapshot's hash seed, which no script can observe. Ruby starts from the boot file setup writes
in place of RubyGems: its programs see what they would see with RubyGems, and with a boot file
written for other gems RubyGems is loaded. R starts with no default package attached, from a
boot file that attaches each at its first use: its programs see what they would see had R
attached them at the start, and with a boot file written for another R they are. Real runs in
the real jail, through the engine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gzip
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandlot.config import Config
from sandlot.executor import CodeRequest, Execution, Executor
from sandlot.executor.guards import Seal
from sandlot.executor.seal import SEAL_FILE, Opened, open_frame
from sandlot.install import Setup
from sandlot.install.jvm import ensure_cds
from sandlot.install.r import ensure_r_boot
from sandlot.install.ruby import ensure_ruby_boot
from sandlot.languages import LANGUAGES, Language, Registry
from sandlot.languages.hello import HELLO_WORLDS
from sandlot.languages.jvm import JAVAC_SAMPLE, JVM_START
from sandlot.languages.scripting import R_BOOT, RUBY_BOOT
from sandlot.service import Service
from tests.languages.test_languages import HELLO

STATE = f"/run/sandlot-warmtest-{os.getpid()}"
ARCHIVE = re.compile(r"-XX:SharedArchiveFile=\S+")
JUNIT_HELLO = (
    "import org.junit.jupiter.api.Test;\n"
    'public class MainTest { @Test void t() { System.out.println("hello"); } }\n'
)


def archived(row: Language) -> bool:
    return any(ARCHIVE.search(part) for part in (*(row.compile or ()), *row.run))


PROGRAMS = {**HELLO, "junit": JUNIT_HELLO}
ARCHIVED = sorted(row.name for row in LANGUAGES if archived(row) and row.name in PROGRAMS)
# Every flag a row has only to start faster, and what it replaces (Serial GC for G1 with its
# thread caps; nothing for the rest): a row without them is the row as it was before warm starts.
WARM_FLAGS = re.compile(
    r"(?:-J)?(?:"
    + "|".join(re.escape(f) for f in (*JVM_START, "-XX:ParallelGCThreads=2", "-XX:ConcGCThreads=1",
                                      "--no-rehash-snapshot", "--disable-gems"))
    + r"|-XX:SharedArchiveFile=\S+|-r\S+/boot\.rb)(?=\s|$)"
)  # fmt: skip
WARM_ENV = ("R_DEFAULT_PACKAGES", "R_PROFILE")  # what R's row sets only to start faster
# Programs that do more than print a line (collections, lambdas, formatting, stdin, hash and
# iteration orders), for comparing a warm row's output with its plain twin's.
NODE_PROGRAM = """\
const o = {}, m = new Map(), s = new Set();
for (let i = 0; i < 500; i++) {
  const k = "k" + ((i * 7919) % 500); o[k] = i; m.set(k, i); s.add(k);
}
console.log(JSON.stringify(Object.entries(o).slice(0, 5)), [...m.keys()].slice(-3), s.size);
console.log(require("lodash").chunk([1, 2, 3], 2), [3, 1, 2].sort(), (0.1 + 0.2).toFixed(20));
"""
# Bundled gems (on no load path without RubyGems), default gems, `Gem` and `gem`, and the
# messages did_you_mean and error_highlight add to an exception.
RUBY_PROGRAM = """\
require "prime"; require "matrix"; require "rexml/document"; require "set"; require "json"
p Prime.first(5), Matrix[[1, 2], [3, 4]].determinant, REXML::Document.new("<a>x</a>").root.text
p Set[3, 1].to_a, JSON.generate({"a" => [1, 2.5, nil]}), defined?(Gem), defined?(DidYouMean)
begin
  lenght = 3
  length + 1
rescue NameError => e
  puts e.message
end
begin
  [1, 2].frist
rescue NoMethodError => e
  puts e.message
end
p Gem::Version.new("1.10") > Gem::Version.new("1.9")
gem "minitest"
require "minitest"
puts Minitest::VERSION, $stdin.read.to_s.split.map(&:to_i).sum
"""
# Objects of every default package (a model, S4 classes and methods, datasets, formatting), a
# program's own `library`, `get` and an object a package it attaches later has too (`filter`),
# stdin, a warning and a message.
R_PROGRAM = """\
library <- function(...) stop("a program's own library()")
get <- function(...) stop("a program's own get()")
filter <- function(x) rev(x)
x <- c(4, 8, 15, 16, 23, 42)
print(c(median(x), sd(x), var(x))); print(quantile(x))
print(setNames(1:3, c("a", "b", "c"))); print(head(letters, 3)); print(tail(x, 2))
str(list(a = 1, b = "x")); print(combn(4, 2)[, 1:3]); print(filter(1:3))
print(nrow(mtcars)); print(summary(iris$Sepal.Length)); print(as.roman(2026))
fit <- lm(mpg ~ wt, data = mtcars); print(round(coef(fit), 4))
setClass("Point", representation(x = "numeric", y = "numeric"))
setGeneric("norm2", function(p) standardGeneric("norm2"))
setMethod("norm2", "Point", function(p) sqrt(p@x^2 + p@y^2))
p <- new("Point", x = 3, y = 4); print(norm2(p)); print(is(p, "Point")); p
print(exists("median")); print(environmentName(environment(sd)))
print(sum(as.integer(unlist(strsplit(readLines(file("stdin")), " ")))))
print(rgb(1, 0, 0)); print(xy.coords(1:2, 3:4)$y); print(getOption("repos"))
warning("a warning")
message("to stderr")
"""
RICHER = {
    "R": R_PROGRAM,
    "ruby": RUBY_PROGRAM,
    "java": JAVAC_SAMPLE,
    "junit": JUNIT_HELLO,
    "kotlin": next(r for r in LANGUAGES if r.name == "kotlin").sample,
    "kotlin_script": next(r for r in LANGUAGES if r.name == "kotlin_script").sample,
    "scala": next(r for r in LANGUAGES if r.name == "scala").sample,
    "nodejs": NODE_PROGRAM,
    "typescript": NODE_PROGRAM,
}


def rewritten(row: Language, pattern: re.Pattern[str], new: str, name: str = "") -> Language:
    """The row with `pattern` replaced by `new` in its compile and run argv templates (an
    argument left empty is dropped)."""

    def swap(template: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return (
            None if template is None else tuple(q for p in template if (q := pattern.sub(new, p)))
        )

    return dataclasses.replace(
        row, name=name or row.name, compile=swap(row.compile), run=swap(row.run)
    )


def with_archive(row: Language, variant: str) -> Language:
    """The row with each archive it maps replaced by `variant`.jsa in the work dir."""
    return rewritten(row, ARCHIVE, f"-XX:SharedArchiveFile={variant}.jsa", f"{row.name}-{variant}")


def plain(row: Language) -> Language:
    """The row without any of its warm-start flags: no archive, Serial GC, the JVM's defaults,
    R's default packages attached at its start."""
    row = rewritten(row, WARM_FLAGS, "", f"{row.name}-plain")
    row = rewritten(row, re.compile(re.escape("-XX:+UseG1GC")), "-XX:+UseSerialGC")
    return dataclasses.replace(row, env={k: v for k, v in row.env.items() if k not in WARM_ENV})


def logged(row: Language) -> Language:
    """The row with the JVM's class-loading log on stdout, where JVM_QUIET silences CDS."""
    return rewritten(row, re.compile(re.escape("-Xlog:cds*=off:stderr")), "-Xlog:class+load:stdout")


def execute(service: Service, row: Language, code: str, files: dict[str, bytes]) -> Execution:
    """One request for `row` (which need not be in the service's table), compile cache empty."""
    executor = Executor(service.config, service.jail, Registry([row], service.config.runtime_dir))
    return asyncio.run(
        executor.execute(
            CodeRequest(language=row.name, code=code, files=files, compile_timeout=120,
                        run_timeout=60)
        )
    )  # fmt: skip


# JUnit's console launcher reports how long the tests took: the one line that differs by run.
ELAPSED = re.compile(rb"Test run finished after \d+ ms")


def seen(result: Execution) -> tuple:
    """All a caller sees of a result: each step's output and how it ended."""
    return tuple(
        (ELAPSED.sub(b"", step.stdout), step.stderr, step.exit_code, step.signal, step.limit)
        if step
        else None
        for step in (result.compile, result.run)
    )


@functools.cache
def cold(service: Service, name: str, code: str) -> tuple:
    """What the row's program shows with none of the row's warm-start flags."""
    return seen(execute(service, plain(service.registry.get(name)), code, {}))


@pytest.fixture(scope="module")
def service():
    config = Config.load(slots=1, uid_base=64300, state_dir=STATE)
    service = Service(config).start()
    assert service.problem is None, service.problem
    yield service
    service.close()


@pytest.fixture(scope="module")
def stale_archive(tmp_path_factory) -> bytes:
    """A real archive, recorded for another class path: the JVM must refuse it."""
    path = tmp_path_factory.mktemp("stale") / "stale.jsa"
    subprocess.run(
        ["/usr/bin/java", f"-XX:ArchiveClassesAtExit={path}",
         "-cp", "/usr/share/java/javatuples.jar", "-version"],
        check=True, capture_output=True,
    )  # fmt: skip
    return path.read_bytes()


@pytest.mark.parametrize("variant", ["missing", "stale", "garbage"])
@pytest.mark.parametrize("name", ARCHIVED)
def test_a_missing_or_stale_archive_only_slows_a_run(service, stale_archive, name, variant):
    base = service.registry.get(name)
    if not service.registry.available(name).available:
        pytest.fail(f"{name} is not installed: run `make setup`")
    row = with_archive(base, variant)
    contents = {"stale": stale_archive, "garbage": b"not a class-data archive\n" * 100}
    files = {f"{variant}.jsa": contents[variant]} if variant in contents else {}
    result = execute(service, row, PROGRAMS[name], files)
    assert result.error is None, result.error
    if base.compile:  # kotlin_script compiles in its run step
        assert result.compile is not None and result.compile.ok, result.compile
        # javac, kotlinc and scalac print nothing for a program that compiles: nor about an
        # archive.
        assert result.compile.stdout == result.compile.stderr == b""
    assert result.run is not None and result.run.ok, result.run
    assert seen(result) == cold(service, name, PROGRAMS[name])


def test_plain_strips_every_warm_flag():
    """The comparison below is against the rows as they were: nothing of a warm start is left."""
    for name in RICHER:
        row = plain(next(r for r in LANGUAGES if r.name == name))
        text = " ".join((*(row.compile or ()), *row.run))
        assert not WARM_FLAGS.search(text) and "UseG1GC" not in text, text
        assert "-J " not in text and not text.endswith("-J"), text
        assert not set(row.env) & set(WARM_ENV), row.env


@pytest.mark.parametrize("name", sorted(RICHER))
def test_warm_starts_change_nothing_a_caller_sees(service, name):
    """Compile and run output, exit codes and signals: the same as the row's without any of its
    warm-start flags (no archive, Serial GC, relocation, every stub, Node's rehash)."""
    result = execute(service, service.registry.get(name), RICHER[name], {})
    assert result.error is None, result.error
    assert result.run is not None and result.run.ok, result.run
    assert seen(result) == cold(service, name, RICHER[name])


@pytest.mark.parametrize("name", ARCHIVED)
def test_the_jail_maps_each_archive_a_row_names(service, name):
    """In the box, the steps that name a row's archive load classes from it ("shared objects
    file (top)" is the JVM's name for an archive given by -XX:SharedArchiveFile)."""
    row = logged(service.registry.get(name))
    result = execute(service, row, PROGRAMS[name], {})
    assert result.error is None, result.error
    for step, template in ((result.compile, row.compile), (result.run, row.run)):
        if template and any(ARCHIVE.search(part) for part in template):
            assert step is not None and step.ok, step
            assert b"source: shared objects file (top)" in step.stdout, step.stdout[-2000:]


def digests(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


ARCHIVE_ATTACK = """\
import java.io.*;
import java.nio.file.*;
public class Main {
  static void attempt(String what, Callable c) {
    try { c.call(); System.out.println("CHANGED " + what); }
    catch (Exception e) { System.out.println("refused " + what); }
  }
  interface Callable { void call() throws Exception; }
  public static void main(String[] args) throws Exception {
    for (String path : new String[] {%s}) {
      File f = new File(path);
      attempt("append " + f.getName(), () -> { try (var o = new FileOutputStream(f, true)) {
        o.write(new byte[4096]); } });
      attempt("replace " + f.getName(), () -> Files.move(Files.write(
        Paths.get(f.getParent(), ".x"), new byte[] {1}), f.toPath(),
        StandardCopyOption.REPLACE_EXISTING));
      attempt("chmod " + f.getName(), () -> { if (!f.setWritable(true, false)) throw new
        IOException(); });
    }
    // A JVM asked to (re)record an archive at exit, or to dump the JDK's default one.
    for (String[] argv : new String[][] {
        {"/usr/bin/java", "-XX:ArchiveClassesAtExit=%s", "-version"},
        {"/usr/bin/java", "-Xshare:dump"}}) {
      Process p = new ProcessBuilder(argv).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      System.out.println("jvm exited " + (p.waitFor() >= 0));
    }
    System.out.println("hello");
  }
}
"""


def test_a_run_cannot_change_an_archive_for_the_next(service):
    """A program appends to, replaces and re-records every archive a JVM here maps (sandlot's
    and the JDK's own): each is refused (the archives are bound read-only), the files are
    unchanged, and the next run prints exactly what it printed before."""
    runtime = Path(service.config.runtime_dir)
    jdk = Path(os.path.realpath("/usr/bin/java")).parents[1] / "lib" / "server"
    archives = sorted((runtime / "cds").glob("*.jsa")) + sorted(jdk.glob("*.jsa"))
    assert any(p.name == "javac.jsa" for p in archives), "run `sandlot setup --languages java`"
    before = digests(archives)
    java = service.registry.get("java")
    first = execute(service, java, JAVAC_SAMPLE, {})
    assert first.run is not None and first.run.ok, first.run
    listed = ", ".join(f'"{p}"' for p in archives)
    attack = execute(service, java, ARCHIVE_ATTACK % (listed, runtime / "cds" / "javac.jsa"), {})
    assert attack.run is not None and attack.run.ok, attack.run
    lines = attack.run.stdout.decode().splitlines()
    assert lines[-1] == "hello" and len(lines) == 3 * len(archives) + 3, lines
    assert all(line.startswith(("refused ", "jvm exited ")) for line in lines[:-1]), lines
    assert digests(archives) == before
    assert seen(execute(service, java, JAVAC_SAMPLE, {})) == seen(first)


def test_setup_records_javacs_archive_and_javac_maps_it(tmp_path):
    """The java row's archive, recorded into a runtime dir of its own: a second setup finds it
    current, and javac loads its own classes from it."""
    row = next(r for r in LANGUAGES if r.name == "java")
    tmp_path.chmod(0o755)
    setup = Setup(tmp_path, (row,), log=lambda line: None)
    assert "javac.jsa recorded" in ensure_cds(setup)
    assert "already present" in ensure_cds(setup)
    (tmp_path / "Main.java").write_text(HELLO["java"])
    argv = [a.replace("-Xlog:cds*=off:stderr", "-Xlog:class+load:stdout")
            for a in row.argv(row.compile, str(tmp_path), 1024)]  # fmt: skip
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True)
    from_archive = [line for line in done.stdout.splitlines() if "(top)" in line]
    assert any("com.sun.tools.javac" in line for line in from_archive), done.stdout[-2000:]


def test_run_step_is_the_box_execute_runs(service):
    executor = service.require_executor()
    req = CodeRequest(language="c", code=HELLO["c"])
    step = asyncio.run(executor.run_step(req))
    assert step is not None
    spec, secret = step
    assert spec.argv == ("./main",) and "main" in spec.files and secret is None
    outcome = asyncio.run(executor.run_box(spec))
    assert outcome.ok and outcome.stdout == HELLO_WORLDS["c"].output.encode()
    assert asyncio.run(executor.run_step(CodeRequest(language="c", code="int main(){"))) is None


def test_run_step_of_a_sealed_request_is_its_sealed_box(service):
    """A benchmark's box of a judged program is the one execute runs: with its seal's file and
    driver, the frame only this step's secret opens."""
    executor = service.require_executor()
    step = asyncio.run(executor.run_step(CodeRequest(language="python", code="print(1)",
                                                     seal=Seal())))  # fmt: skip
    assert step is not None
    spec, secret = step
    assert (
        secret is not None
        and SEAL_FILE in spec.files
        and secret.decode() not in " ".join(spec.argv)
    )
    outcome = asyncio.run(executor.run_box(spec))
    assert open_frame(outcome.stdout, secret) == Opened(b"", b"1\n")


def test_hash_seed_of_node_is_not_observable(run):
    """Node keeps its snapshot's hash seed (--no-rehash-snapshot): insertion order still rules."""
    code = (
        "const o = {}; const m = new Map(); const keys = [];\n"
        "for (let i = 0; i < 2000; i++) { const k = 'k' + ((i * 7919) % 2000); keys.push(k);"
        " o[k] = i; m.set(k, i); }\n"
        "console.log(Object.keys(o).join() === keys.join() && [...m.keys()].join() === keys.join())"
    )
    out = run(code, "nodejs")
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == "true\n"


RUBYGEMS_LOADED = 'puts $LOADED_FEATURES.any? { |f| f.end_with?("/rubygems.rb") }\n'


def with_boot(row: Language) -> Language:
    """The ruby row starting from the boot.rb in its work dir."""
    return rewritten(row, re.compile(r"-r\S+/boot\.rb"), "-r./boot.rb", "ruby-booted")


def test_ruby_starts_without_rubygems_until_a_program_uses_it(service):
    """The point of the boot file: a program that uses no `Gem` runs without RubyGems loaded;
    one that names `Gem` loads it, as the autoload says."""
    ruby = service.registry.get("ruby")
    result = execute(service, ruby, RUBYGEMS_LOADED, {})
    assert result.run is not None and result.run.ok and result.run.stdout == b"false\n", result
    result = execute(service, ruby, "Gem::Version\n" + RUBYGEMS_LOADED, {})
    assert result.run is not None and result.run.ok and result.run.stdout == b"true\n", result


def test_a_stale_ruby_boot_file_loads_rubygems_and_changes_nothing(service):
    """A boot file written for other gems (one installed or removed since, Ruby upgraded: a gem
    dir's mtime differs from its stamp) loads RubyGems, and programs see what they always do."""
    ruby = service.registry.get("ruby")
    text = Path(RUBY_BOOT.format(runtime=service.config.runtime_dir)).read_text()
    stale, changed = re.subn(r"\[\d+, \d+\]", "[1, 2]", text, count=1)
    assert changed == 1, text
    files = {"boot.rb": stale.encode()}
    result = execute(service, with_boot(ruby), RUBYGEMS_LOADED, files)
    assert result.run is not None and result.run.ok and result.run.stdout == b"true\n", result
    result = execute(service, with_boot(ruby), RUBY_PROGRAM, files)
    assert result.run is not None and result.run.ok, result.run
    assert seen(result) == cold(service, "ruby", RUBY_PROGRAM)


SEARCH_PATH = "cat(search(), sep = ' ')\n"
DEFAULT_SEARCH_PATH = (
    b".GlobalEnv package:stats package:graphics package:grDevices package:utils package:datasets "
    b"package:methods Autoloads package:base"
)


def test_r_starts_with_no_default_package_until_a_program_uses_one(service):
    """The point of R's boot file: a program that uses none of them runs with no default package
    attached; the first use of one of an object's attaches its package (and only it)."""
    r = service.registry.get("R")
    result = execute(service, r, SEARCH_PATH, {})
    assert result.run is not None and result.run.ok, result.run
    assert result.run.stdout == b".GlobalEnv Autoloads package:base", result.run
    result = execute(service, r, "invisible(median(1:3))\n" + SEARCH_PATH, {})
    assert result.run is not None and result.run.ok, result.run
    assert result.run.stdout == b".GlobalEnv package:stats Autoloads package:base", result.run


def test_a_stale_r_boot_file_attaches_rs_packages_at_the_start(service):
    """A boot file written for another R or other packages (a DESCRIPTION's mtime differs from
    its stamp) attaches the default packages at the start, in R's order, and programs see what
    they always do."""
    r = service.registry.get("R")
    text = Path(R_BOOT.format(runtime=service.config.runtime_dir)).read_text()
    stale, changed = re.subn(
        r'DESCRIPTION" = "[0-9.]+"', 'DESCRIPTION" = "1.000000"', text, count=1
    )
    assert changed == 1, text[:2000]
    booted = dataclasses.replace(r, name="R-booted", env={**r.env, "R_PROFILE": "boot.R"})
    files = {"boot.R": stale.encode()}
    result = execute(service, booted, SEARCH_PATH, files)
    assert result.run is not None and result.run.stdout == DEFAULT_SEARCH_PATH, result.run
    result = execute(service, booted, R_PROGRAM, files)
    assert result.run is not None and result.run.ok, result.run
    assert seen(result) == cold(service, "R", R_PROGRAM)
    assert seen(execute(service, plain(r), SEARCH_PATH, {}))[1][0] == DEFAULT_SEARCH_PATH


def multiple_r_programs(count: int) -> list[str]:
    """MultiPL-E's R rows, each its GPT answer (right or wrong) followed by the row's tests."""
    path = Path(__file__).parents[2] / "sandlot/judge/data/multiple_humaneval_r.jsonl.gz"
    with gzip.open(path, "rt") as f:
        rows = [json.loads(line) for line in itertools.islice(f, count)]
    fenced = re.compile(r"```[rR]?\n(.*?)```", re.S)
    return [
        ((m.group(1) if (m := fenced.search(r["gpt_solution"])) else r["gpt_solution"]) + "\n"
         + r["tests"])
        for r in rows
    ]  # fmt: skip


# The one line that differs by run: how close a deep recursion came to the stack's limit.
STACK_USAGE = re.compile(rb"C stack usage +\d+")


def test_r_boot_file_changes_no_multiple_verdict(service):
    """40 of MultiPL-E's R programs (they pass, fail their tests or recurse too deep) through the
    jail, with the row and with R's default start: the same output and exit, program by program."""
    r = service.registry.get("R")
    exits = set()
    for program in multiple_r_programs(40):
        results = [execute(service, row, program, {}) for row in (r, plain(r))]
        booted, cold_start = (STACK_USAGE.sub(b"", repr(seen(x)).encode()) for x in results)
        assert booted == cold_start, program
        exits.add(results[0].run.exit_code)
    assert exits == {0, 1}, exits


# A program that tries to write, open up and move its row's boot file: {path} is the file.
BOOT_ATTACKS = {
    "ruby": (
        'path = "{path}"\n'
        'begin; File.write(path, "exit 0"); puts "CHANGED"; rescue SystemCallError; puts "refused"'
        "; end\n"
        'begin; File.chmod(0o666, path); puts "CHANGED"; rescue SystemCallError; puts "refused"'
        "; end\n"
        'begin; File.rename(path, path + ".x"); puts "CHANGED"; rescue SystemCallError'
        '; puts "refused"; end\n'
    ),
    "R": (
        'path <- "{path}"\n'
        "w <- tryCatch({{ writeLines('quit()', path); TRUE }}, warning = function(w) FALSE,"
        " error = function(e) FALSE)\n"
        "for (changed in c(w, Sys.chmod(path, '666'), file.rename(path, paste0(path, '.x'))))\n"
        "  cat(if (isTRUE(changed)) 'CHANGED' else 'refused', '\\n', sep = '')\n"
    ),
}
BOOT_FILES = {"ruby": RUBY_BOOT, "R": R_BOOT}


@pytest.mark.parametrize("name", sorted(BOOT_ATTACKS))
def test_a_run_cannot_change_its_rows_boot_file_for_the_next(service, name):
    boot = Path(BOOT_FILES[name].format(runtime=service.config.runtime_dir))
    before = digests([boot])
    attack = BOOT_ATTACKS[name].format(path=boot)
    result = execute(service, service.registry.get(name), attack, {})
    assert result.run is not None and result.run.stdout == b"refused\n" * 3, result.run
    assert digests([boot]) == before


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A dir the box's uids can reach (pytest's tmp_path is under a dir closed to them)."""
    path = Path(tempfile.mkdtemp(prefix="sandlot-test-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_setup_writes_rubys_boot_file_once_and_ruby_finds_gems_from_it(open_dir):
    """Into a runtime dir of its own: written, then found current; a Ruby started from it
    without RubyGems finds a bundled gem, as a plain Ruby does."""
    row = next(r for r in LANGUAGES if r.name == "ruby")
    setup = Setup(open_dir, (row,), log=lambda line: None)
    assert "gem load paths" in ensure_ruby_boot(setup)
    assert ensure_ruby_boot(setup) == "ok (already present)"
    boot = RUBY_BOOT.format(runtime=open_dir)
    program = 'require "prime"; require "test/unit/assertions"; p Prime.take(4)\n'
    for argv in (["/usr/bin/ruby", "--disable-gems", f"-r{boot}"], ["/usr/bin/ruby"]):
        done = subprocess.run([*argv, "-e", program], capture_output=True, text=True)
        assert (done.returncode, done.stdout, done.stderr) == (0, "[2, 3, 5, 7]\n", ""), argv


def test_setup_writes_rs_boot_file_once_and_r_attaches_a_package_from_it(open_dir):
    """Into a runtime dir of its own: written, then found current; an Rscript started from it
    with no default package runs a program that uses stats and utils, as a plain Rscript does,
    and has Debian's site profile's settings."""
    row = next(r for r in LANGUAGES if r.name == "R")
    setup = Setup(open_dir, (row,), log=lambda line: None)
    assert "objects of" in ensure_r_boot(setup)
    assert ensure_r_boot(setup) == "ok (already present)"
    program = 'cat(median(c(5, 1, 3)), head(letters, 2), getOption("repos")[["CRAN"]], "\\n")'
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    outputs = set()
    for extra in ({}, {"R_DEFAULT_PACKAGES": "NULL", "R_PROFILE": R_BOOT.format(runtime=open_dir)}):
        done = subprocess.run(["/usr/bin/Rscript", "-e", program], capture_output=True,
                              text=True, env={**env, **extra})  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done
        outputs.add(done.stdout)
    assert outputs == {"3 a b https://cloud.r-project.org \n"}


# The main classes of the JVM compilers: loading their classes is most of what a start costs.
JVM_COMPILERS = ("org.jetbrains.kotlin.cli.jvm.K2JVMCompiler", "scala.tools.nsc.Main", "javac")


def test_every_step_that_starts_a_jvm_compiler_maps_an_archive():
    """kotlin_script compiles its script in its run step: without kotlinc's classes archived
    that step took 2.6 s of CPU for a hello world (bench/NOTES.md)."""
    for row in LANGUAGES:
        for template in (row.compile, row.run):
            text = " ".join(template or ())
            if any(c in text for c in JVM_COMPILERS):
                assert ARCHIVE.search(text), (row.name, text[:200])


def test_stamp_paths_are_what_the_rows_map():
    """Every archive a row maps is one `sandlot setup` records (or javac's, which java records)."""
    recorded = {p for row in LANGUAGES for p in (row.cds, row.run_cds) if p}
    for row in LANGUAGES:
        for part in (*(row.compile or ()), *row.run):
            for found in ARCHIVE.findall(part):
                assert found.split("=", 1)[1] in recorded, (row.name, found)


# Programs that replace their own build in the work dir with garbage once they have run.
SELF_CORRUPTING = {
    "java": "import java.nio.file.*;\npublic class Main {\n"
    "  public static void main(String[] a) throws Exception {\n"
    '    System.out.println("hello");\n'
    '    Files.write(Paths.get("classes", "Main.class"), new byte[] {0, 1, 2});\n'
    '    System.out.println(Files.size(Paths.get("classes", "Main.class")));\n  }\n}\n',
    "c": "#include <stdio.h>\n#include <unistd.h>\nint main(void) {\n"
    '  puts("hello"); unlink("main"); FILE *f = fopen("main", "w");\n'
    '  puts(f && fputs("garbage", f) >= 0 && fclose(f) == 0 ? "replaced" : "refused");\n}\n',
}


@pytest.mark.parametrize("name", sorted(SELF_CORRUPTING))
def test_a_run_cannot_change_its_cached_build_for_the_next(service, name):
    """A run that overwrites its build in its work dir changes only its own copy: the next
    request for the same source, served by the compile cache, runs the build as it was made."""
    executor = service.require_executor()
    req = CodeRequest(language=name, code=SELF_CORRUPTING[name], compile_timeout=120)
    first = asyncio.run(executor.execute(req))
    assert first.run is not None and first.run.ok, first.run
    assert first.run.stdout.split(b"\n")[1] in (b"3", b"replaced"), first.run.stdout
    second = asyncio.run(executor.execute(req))
    assert second.cached, "the second request was not served by the compile cache"
    assert seen(second)[1] == seen(first)[1]
