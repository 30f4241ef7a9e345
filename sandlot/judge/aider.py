"""aider polyglot: each language's exercise as a program of its test runner, named functions the
language rows (dialects.py) reference. An exercise holds its tests, its stubs and, as the
answer, the solution files.
"""

from __future__ import annotations

import io
import re
import shlex
import zipfile
from pathlib import Path

from sandlot.executor import SEAL_FILE as SEAL
from sandlot.judge import braces, python_tests, reports, split, split_java
from sandlot.judge.extract import Extracted, fenced_blocks
from sandlot.judge.plans import Assembled, Program
from sandlot.judge.scripts import js as scripts_js
from sandlot.judge.splices import Row
from sandlot.judge.split import cpp as split_cpp
from sandlot.judge.split import go as split_go
from sandlot.judge.split import rust as split_rust
from sandlot.languages import RUST_CRATES


def _test_texts(row: Row) -> dict[str, str]:
    return {**row.get("test_files", {}), **row.get("editor_files", {})}


def _test_files(row: Row) -> dict[str, bytes]:
    tests: dict[str, str] = {**row.get("test_files", {}), **row.get("editor_files", {})}
    return {path: text.encode() for path, text in tests.items()}


def _sources(row: Row) -> list[str]:
    return [s for s in row.get("solution_files", {}) if not s.endswith((".toml", ".json"))]


def python(row: Row, completion: str, ex: Extracted) -> Assembled:
    # The test file runs as pytest's own file; the solution sits beside it under its name.
    files = _test_files(row)
    files[_sources(row)[0]] = ex.code.encode()
    test_path, test_text = next(iter(row.get("test_files", {}).items()))
    files.pop(test_path, None)
    count = python_tests.collect(test_text, pytest=True).tests
    return Assembled(ex, Program("pytest", test_text, test_text, files=files, run_timeout=60,
                                 tests=count))  # fmt: skip


def rust(row: Row, completion: str, ex: Extracted) -> Assembled:
    crate = _cargo_name(row.get("manifest_files", {}).get("Cargo.toml", "")) or "solution"
    # The solution a crate of its own, each test file a module of the harness that runs them.
    built = split_rust.exercise(ex.code, crate, _test_texts(row))
    if built is not None:
        return split.assembled(ex, "rust", built, "\n".join(_test_texts(row).values()),
                               run_timeout=120)  # fmt: skip
    files = _test_files(row)
    files["src/lib.rs"] = ex.code.encode()
    script = _rust_script(crate, list(row.get("test_files", {})))
    return Assembled(ex, Program("bash", script, script, files=files, run_timeout=120,
                                 seal=True))  # fmt: skip


def _first_test_as_program(row: Row, ex: Extracted) -> tuple[dict[str, bytes], str]:
    """The files with the solution under its stub's name, and the first test file's text (the
    program), which is not among them."""
    files = _test_files(row)
    files[_sources(row)[0]] = ex.code.encode()
    first, text = next(iter(row.get("test_files", {}).items()))
    files.pop(first, None)
    return files, text


def go(row: Row, completion: str, ex: Extracted) -> Assembled:
    # The solution a package of its own, which the test files import (split/go.py).
    built = split_go.exercise(ex.code, _test_texts(row))
    if built is not None:
        return split.assembled(ex, "go_test", built, "\n".join(_test_texts(row).values()),
                               run_timeout=60)  # fmt: skip
    # go_test builds the directory: the first test file is the program, the rest beside it.
    files, text = _first_test_as_program(row, ex)
    return Assembled(ex, Program("go_test", text, text, files=files, run_timeout=60))


def javascript(row: Row, completion: str, ex: Extracted) -> Assembled:
    files, text = _first_test_as_program(row, ex)
    text = unskipped(text)  # Exercism skips all but the first; run all
    return Assembled(ex, Program("jest", text, text, files=files, run_timeout=60,
                                 fetch=reports.fetch_for("jest"),
                                 tests=scripts_js.jest_tests(text)))  # fmt: skip


# jest's skipped tests and suites (xtest, xit, xdescribe, test.skip, it.skip, describe.skip) as
# the ones that run; a run that still skips any is rejected.
_SKIPS = re.compile(r"\b(?:x(test|it|describe)|(test|it|describe)\.skip)(\s*)\(")


def unskipped(test: str) -> str:
    return _SKIPS.sub(lambda m: f"{m.group(1) or m.group(2)}{m.group(3)}(", test)


# Debian's jars (libassertj-core-java), reached through a manifest-only jar in the work dir:
# javac and the JVM follow its Class-Path, so nothing big is copied per run.
ASSERTJ_JARS = ("/usr/share/java/assertj-core.jar", "/usr/share/java/byte-buddy.jar")


def class_path_jar(paths: tuple[str, ...]) -> bytes:
    """A jar with nothing but a manifest whose Class-Path names `paths` (byte-identical per call,
    so the compile cache still hits)."""
    manifest = "Manifest-Version: 1.0\r\nClass-Path: " + " ".join(paths) + "\r\n\r\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", (1980, 1, 1, 0, 0, 0)), manifest)
    return buf.getvalue()


def _solution_blocks(completion: str, ex: Extracted, languages: tuple[str, ...]) -> list[str]:
    """Every closed fenced block in `languages` (or untagged); else the extracted code alone."""
    wanted = (None, *languages)
    blocks = [b.code for b in fenced_blocks(completion)
              if b.closed and b.code.strip() and b.language in wanted]  # fmt: skip
    return blocks or [ex.code]


_JAVA_TYPE = re.compile(
    r"^\s*(public\s+)?((abstract|final|sealed|static)\s+)*(class|interface|enum|record)\s+(\w+)",
    re.M,
)


def _java_file_name(code: str, fallback: str) -> str:
    types = [(m.group(1) is not None, m.group(5)) for m in _JAVA_TYPE.finditer(code)]
    public = [name for is_public, name in types if is_public]
    return f"{(public or [name for _, name in types] or [fallback])[0]}.java"


def java(row: Row, completion: str, ex: Extracted) -> Assembled:
    # JUnit 5 (junit row) with AssertJ: each block of the answer is one source file named after
    # its type; the test class is the program. Exercism disables all tests but the first: run all.
    stub = Path(next(iter(row.get("solution_files", {})), "Solution.java")).stem
    files = {"assertj.jar": class_path_jar(ASSERTJ_JARS)}
    blocks = _solution_blocks(completion, ex, ("java",))
    sources = [b for b in blocks if _JAVA_TYPE.search(b)] or blocks[:1]  # not prose or output
    for code in sources:
        files[_java_file_name(code, stub)] = code.encode()
    # The first test file is the program; the exercise's other test sources (support classes
    # such as an extension) compile beside it: javac takes every .java in the work dir.
    tests = [(Path(path).name, _enable_all(text)) for path, text in
             {**row.get("test_files", {}), **row.get("editor_files", {})}.items()
             if path.endswith(".java")]  # fmt: skip
    (_, test_text), others = tests[0], tests[1:]
    files.update({name: text.encode() for name, text in others})
    count = split_java.junit_tests(*(text for _, text in tests))
    asked = {**row.get("solution_files", {}), **row.get("example_files", {})}
    expected = {t for text in asked.values() for t in split_java.declared_types(text)}
    files.update(split_java.junit_reserved([text for _, text in tests], expected))
    return Assembled(ex, Program("junit", test_text, test_text, files=files, run_timeout=60,
                                 compile_timeout=60, tests=count))  # fmt: skip


def _enable_all(text: str) -> str:
    return re.sub(r"^\s*@Disabled(\([^)]*\))?[ \t]*$", "", text, flags=re.M)


# Exercism's C++ tests include Debian's Catch2 v2 under this macro, and run every case under
# the other; the catch2 row compiles them with Catch's main and header prebuilt at setup.
_EXERCISM_DEFINES = "#define EXERCISM_TEST_SUITE\n#define EXERCISM_RUN_ALL_TESTS\n"


def cpp(row: Row, completion: str, ex: Extracted) -> Assembled:
    stubs = row.get("solution_files", {})
    header = next((s for s in stubs if s.endswith(".h")), None)
    source = next((s for s in stubs if s.endswith(".cpp")), None)
    files = {path: text.encode() for path, text in stubs.items()}
    tests = [(path, _EXERCISM_DEFINES + text) for path, text in row.get("test_files", {}).items()]
    (_, test_text), others = tests[0], tests[1:]
    files.update({path: text.encode() for path, text in others})
    blocks = _solution_blocks(completion, ex, ("cpp", "c"))
    # A block that includes the header is the .cpp; the others make up the header. One block
    # that does not include it is a header-only solution (the .cpp then only includes it).
    includes = re.compile(rf'^\s*#\s*include\s*"{re.escape(header or "")}"', re.M)
    impl = [b for b in blocks if header and includes.search(b)]
    heads = [b for b in blocks if b not in impl]
    if header and heads:
        files[header] = "\n".join(heads).encode()
        if not impl and source:
            files[source] = f'#include "{header}"\n'.encode()
        why = split_cpp.header_refusal(files[header].decode(), "\n".join(t for _, t in tests))
        if why is not None:
            return Assembled(ex, None, why, refused=True)
    if source and impl:
        files[source] = "\n".join(impl).encode()
    # Catch's listener seals how many test cases passed: every TEST_CASE of the tests.
    cases = sum(len(re.findall(r"(?<![\w.])TEST_CASE\s*\(", braces.blank(t))) for _, t in tests)
    return Assembled(ex, Program("catch2", test_text, test_text, files=files, run_timeout=60,
                                 compile_timeout=120, tests=cases or None))  # fmt: skip


def _cargo_name(manifest: str) -> str | None:
    m = re.search(r'^name\s*=\s*"([^"]+)"', manifest, re.M)
    return m.group(1).replace("-", "_") if m else None


def _rust_script(crate: str, test_files: list[str]) -> str:
    # cargo needs the network for nothing here, but rustc alone is faster: build the library,
    # then each integration test against it, and run every test including the ignored ones.
    # The crates the exercises' Cargo.toml files name (rand, time, anyhow) are the rust row's,
    # in the dir the bash row names in $SANDLOT_RUST_CRATES.
    # The script holds the secret (out of the work dir before anything is compiled: no
    # include_str! reads it) and writes the seal only if every test binary reported all of its
    # tests passed: a test that exits 0 ends its binary before the report. Run unsealed (the
    # script sent to /run_code as it is), it has no secret and judges by its exit alone.
    crates = '-L "$SANDLOT_RUST_CRATES" ' + " ".join(f"--extern={n}" for n in RUST_CRATES)
    lines = ["set -e", f"seal=$(cat {SEAL} 2>/dev/null || true); rm -f {SEAL}",
             f"rustc --edition 2021 {crates} --crate-type lib --crate-name {crate} "
             f"-o lib{crate}.rlib src/lib.rs"]  # fmt: skip
    for n, path in enumerate(test_files):
        lines.append(f"rustc --edition 2021 --test -L . {crates} --extern {crate}=lib{crate}.rlib"
                     f" -o t{n} {shlex.quote(path)}")  # fmt: skip
    for n in range(len(test_files)):
        lines += [
            f"count=$(./t{n} --list --include-ignored | grep -c ': test$' || true)",
            f"out=$(./t{n} --include-ignored -q 2>&1) || {{ printf '%s\\n' \"$out\"; exit 1; }}",
            "printf '%s\\n' \"$out\"",
            "printf '%s\\n' \"$out\" | grep -q \"^test result: ok. $count passed; 0 failed; 0 "
            "ignored\" || { echo 'the tests did not all run to their end' >&2; exit 1; }",
        ]  # fmt: skip
    lines.append('printf \'%s%s\\n\' "$seal" "$seal"')
    return "\n".join(lines) + "\n"
