"""Program assembly for the multi-language families: HumanEval-X, MultiPL-E, aider polyglot."""

from __future__ import annotations

import io
import re
import shlex
import zipfile
from pathlib import Path

from sandlot.judge import braces, harnesses, reports
from sandlot.judge.assemble import (
    CPP_HEADERS,
    Row,
    build_humaneval,
    guard_end,
    no_code,
)
from sandlot.judge.extract import Extracted, cut_at, extract, fenced_blocks
from sandlot.judge.plans import Assembled, JudgeConfig, Program

# Crates HumanEval-X's Rust declarations `use`; the sandbox has no crates (tasks 0-19 need none).
_RUST_CRATE_USES = re.compile(r"^use (rand|regex|md5)\b.*$", re.M)


def _signature_name(prompt: str) -> str | None:
    """The function a prompt ends by declaring (the identifier before its last `(`)."""
    lines = [ln for ln in prompt.rstrip().split("\n") if ln.strip()]
    for line in reversed(lines[-3:]):
        m = re.search(r"([A-Za-z_]\w*)\s*(=\s*\([^)]*\)\s*=>|\()", line)
        if m and not line.lstrip().startswith(("//", "#", "/*", "*")):
            return m.group(1)
    return None


def _freeform(ex: Extracted, name: str | None) -> bool:
    """Whether the extracted code is a whole solution (it defines the function) or a body."""
    if ex.continuation or not name:
        return False
    return re.search(rf"\b{re.escape(name)}\b\s*(\(|=)", ex.code) is not None


def _rust_tests_as_main(test: str) -> str:
    """HumanEval-X's `#[test]` module as a plain program: rustc without --test runs it."""
    names = re.findall(r"#\[test\]\s*fn\s+(\w+)", test)
    body = re.sub(r"#\[cfg\(test\)\]\s*", "", test)
    body = re.sub(r"#\[test\]\s*fn\s+", "pub fn ", body)
    calls = "".join(f"    tests::{n}();\n" for n in names)
    return f"{body}\n#[allow(dead_code)]\nfn main() {{\n{calls}}}\n"


def build_humaneval_x(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = p["language"]
    if language == "python":
        return build_humaneval(row, completion, cfg, p)
    prompt, test = row["prompt"], row["test"]
    name = _signature_name(row.get("declaration") or prompt)
    ex = extract(completion, language, name, cfg.extra.get("code_block_idx"))
    if ex.kind == "empty":
        return no_code(ex)
    whole = _freeform(ex, name)
    code = ex.code
    # The nonce goes in the tests' main before the answer is put in, never in an answer's own.
    tests = _rust_tests_as_main(test) if language == "rust" else test
    tests, nonce = guard_end(tests, language)
    if language == "cpp":
        if whole:
            code = re.split(r"\nint\s+main\s*\(", "\n" + code)[0]
        full = CPP_HEADERS + (code if whole else prompt + code) + "\n" + tests
    elif language == "java":
        full = (code if whole else prompt + code) + "\n" + tests
    elif language == "nodejs":
        full = harnesses.JS_STRICT_ASSERT + (code if whole else prompt + code) + "\n" + tests
    elif language == "go_test":
        full = _go_program(row, code, whole)
    elif language == "rust":
        decl = _RUST_CRATE_USES.sub("", row.get("declaration", ""))
        uses = "\n".join(ln for ln in decl.split("\n") if ln.startswith("use "))
        head = (uses + "\n") if whole else decl + prompt
        full = head + code + "\n" + tests
    else:
        full = prompt + code + "\n" + tests
    return Assembled(ex, Program(language, full, test, run_timeout=p.get("run_timeout"),
                                 flag=nonce is not None, require_stdout=nonce))  # fmt: skip


_GO_STD = {"strings": "strings", "strconv": "strconv", "math": "math", "sort": "sort",
           "fmt": "fmt", "unicode": "unicode", "bytes": "bytes", "regexp": "regexp"}  # fmt: skip


def _go_program(row: Row, code: str, whole: bool) -> str:
    """test_setup's package and imports merged with the prompt's, then solution and tests."""
    imports = re.findall(r'"[^"]+"', row.get("test_setup", "") + row.get("import", ""))
    if whole:
        code = re.sub(r"^package\s+\w+\s*$", "", code, flags=re.M)
        for block in re.findall(r"^import\s*\((.*?)\)", code, flags=re.M | re.S):
            imports += re.findall(r'"[^"]+"', block)
        code = re.sub(r"^import\s*\(.*?\)|^import\s+\"[^\"]+\"", "", code, flags=re.M | re.S)
        code = braces.drop_main(code, "go")
        head = ""
    else:
        head = re.sub(r"^import\s*\(.*?\)\s*", "", row["prompt"], flags=re.M | re.S)
    body = f"{head}{code}\n{row['test']}"
    for ident, path in _GO_STD.items():  # what the tests use without importing it
        if f'"{path}"' not in imports and re.search(rf"\b{ident}\.\w", body):
            imports.append(f'"{path}"')
    block = "\n".join(f"    {i}" for i in dict.fromkeys(imports))
    return f"package main\n\nimport (\n{block}\n)\n\n{body}"


# -- MultiPL-E ----------------------------------------------------------------------------------

_PRELUDE = re.compile(r"^(#include|import |using |use |require|const \w+ = require|<\?php)")


def build_multiple(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = p["language"]
    prompt, tests = row["prompt"], row["tests"]
    if language == "java":
        # sandlot runs class Main; MultiPL-E's harness names it Problem.
        prompt = prompt.replace("class Problem", "class Main")
        tests = tests.replace("class Problem", "class Main")
    name = _signature_name(prompt)
    ex = extract(completion, language, name, cfg.extra.get("code_block_idx"))
    if ex.kind == "empty":
        return no_code(ex)
    stops = tuple(s for s in row.get("stop_tokens") or () if not s.startswith("re:"))
    program_tests, nonce = guard_end(tests, language)
    if _freeform(ex, name):
        code = ex.code
        if language == "java":
            code = code.replace("class Problem", "class Main")
            code = code.rstrip()
            code = code[:-1] if code.endswith("}") else code  # the class closes in the tests
        elif language == "csharp":
            code = _csharp_open_class(code)
        code = braces.drop_main(code, language)
        if language == "php":
            code = code.strip().removeprefix("<?php").removesuffix("?>")
        present = set(code.split("\n"))
        prelude = "\n".join(
            ln for ln in prompt.split("\n") if _PRELUDE.match(ln) and ln not in present
        )
        first, _, rest = program_tests.partition("\n")
        # MultiPL-E tests begin by closing the prompt's function; a whole solution closed it.
        tail = rest if first.strip() == "}" else program_tests
        full = f"{prelude}\n{code}\n{tail}"
    else:
        full = prompt + cut_at(ex.code, stops) + program_tests
    markers = (b"FAILURE",) if language == "racket" else ()  # rackunit reports, exits 0
    # MultiPL-E's Java prompts import org.javatuples (Pair, Triplet...): the java row has it.
    return Assembled(ex, Program(language, full, tests, run_timeout=p.get("run_timeout"),
                                 fail_markers=markers, flag=nonce is not None,
                                 require_stdout=nonce))  # fmt: skip


def _csharp_open_class(code: str) -> str:
    """A whole C# answer as its directives and `class Problem {` with the members of its class
    (or its bare methods), left open: the tests hold the prompt's Main and close the class."""
    body = braces.class_body(code, "Problem")
    members = braces.without_directives(code if body is None else body)
    return "\n".join([*braces.directives(code), "class Problem {", members])


# -- aider polyglot -----------------------------------------------------------------------------


def build_aider(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = row["language"]
    resolve = p.get("resolve", lambda x: x)
    target = resolve({"javascript": "nodejs"}.get(language, language))
    ex = extract(completion, target, None, cfg.extra.get("code_block_idx"))
    if ex.kind == "empty":
        return no_code(ex)
    tests: dict[str, str] = {**row.get("test_files", {}), **row.get("editor_files", {})}
    files = {path: text.encode() for path, text in tests.items()}
    sources = [s for s in row.get("solution_files", {}) if not s.endswith((".toml", ".json"))]
    if language == "python":
        # The test file runs as pytest's own file; the solution sits beside it under its name.
        files[sources[0]] = ex.code.encode()
        test_path, test_text = next(iter(row.get("test_files", {}).items()))
        files.pop(test_path, None)
        return Assembled(ex, Program("pytest", test_text, test_text, files=files, run_timeout=60))
    if language == "rust":
        crate = _cargo_name(row.get("manifest_files", {}).get("Cargo.toml", "")) or "solution"
        files["src/lib.rs"] = ex.code.encode()
        script = _rust_script(crate, list(row.get("test_files", {})))
        return Assembled(ex, Program("bash", script, script, files=files, run_timeout=120))
    tests_in_order = list(row.get("test_files", {}).items())
    if language == "go":
        # go_test builds the directory: the first test file is the program, the rest beside it.
        files[sources[0]] = ex.code.encode()
        first, text = tests_in_order[0]
        files.pop(first, None)
        return Assembled(ex, Program("go_test", text, text, files=files, run_timeout=60))
    if language == "javascript":
        files[sources[0]] = ex.code.encode()
        first, text = tests_in_order[0]
        files.pop(first, None)
        text = re.sub(r"\bxtest\(", "test(", text)  # Exercism skips all but the first; run all
        return Assembled(ex, Program("jest", text, text, files=files, run_timeout=60,
                                     fetch=reports.fetch_for("jest")))  # fmt: skip
    if language in _NEEDS:
        path, package = _NEEDS[language]
        if not Path(path).exists():  # the jail sees the host's /usr
            return Assembled(ex, None, f"aider polyglot {language} exercises need {path} (Debian "
                             f"package {package}; `sandlot setup` installs it)")  # fmt: skip
        return (_aider_java if language == "java" else _aider_cpp)(row, completion, ex)
    return Assembled(ex, None, f"aider polyglot {language} exercises have no test runner here")


# What the java and cpp exercises need beyond their language rows (from the rows' apt packages).
_NEEDS = {
    "java": ("/usr/share/java/assertj-core.jar", "libassertj-core-java"),
    "cpp": ("/usr/include/catch2/catch.hpp", "catch2"),
}

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


def _aider_java(row: Row, completion: str, ex: Extracted) -> Assembled:
    # JUnit 5 (junit row) with AssertJ: each block of the answer is one source file named after
    # its type; the test class is the program. Exercism disables all tests but the first: run all.
    stub = Path(next(iter(row.get("solution_files", {})), "Solution.java")).stem
    files = {"assertj.jar": class_path_jar(ASSERTJ_JARS)}
    blocks = _solution_blocks(completion, ex, ("java",))
    sources = [b for b in blocks if _JAVA_TYPE.search(b)] or blocks[:1]  # not prose or output
    for code in sources:
        files[_java_file_name(code, stub)] = code.encode()
    test_text = next(iter(row.get("test_files", {}).values()))
    test_text = re.sub(r"^\s*@Disabled(\([^)]*\))?[ \t]*$", "", test_text, flags=re.M)
    return Assembled(ex, Program("junit", test_text, test_text, files=files, run_timeout=60,
                                 compile_timeout=60))  # fmt: skip


# Catch2 v2 (Debian's catch2: <catch2/catch.hpp>, header only): its main in a unit of its own,
# compiled unoptimised beside the solution and the tests, which see every test case enabled.
_CATCH_MAIN = "#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n"


def _aider_cpp(row: Row, completion: str, ex: Extracted) -> Assembled:
    stubs = row.get("solution_files", {})
    header = next((s for s in stubs if s.endswith(".h")), None)
    source = next((s for s in stubs if s.endswith(".cpp")), None)
    files = {path: text.encode() for path, text in stubs.items()}
    tests = row.get("test_files", {})
    files.update({path: text.encode() for path, text in tests.items()})
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
    if source and impl:
        files[source] = "\n".join(impl).encode()
    files["catch_main.cpp"] = _CATCH_MAIN.encode()
    units = [u for u in (source, *tests) if u]
    flags = "-std=c++17 -DEXERCISM_TEST_SUITE -DEXERCISM_RUN_ALL_TESTS -I."
    script = "\n".join([
        "set -e",
        f"g++ {flags} -O0 -c -o catch_main.o catch_main.cpp & main=$!",
        *(f"g++ {flags} -O2 -c -o u{n}.o {shlex.quote(u)}" for n, u in enumerate(units)),
        "wait $main",
        "g++ -o tests catch_main.o " + " ".join(f"u{n}.o" for n in range(len(units))),
        "./tests",
    ]) + "\n"  # fmt: skip
    return Assembled(ex, Program("bash", script, script, files=files, run_timeout=120))


def _cargo_name(manifest: str) -> str | None:
    m = re.search(r'^name\s*=\s*"([^"]+)"', manifest, re.M)
    return m.group(1).replace("-", "_") if m else None


def _rust_script(crate: str, test_files: list[str]) -> str:
    # cargo needs the network for nothing here, but rustc alone is faster: build the library,
    # then each integration test against it, and run every test including the ignored ones.
    lines = ["set -e",
             f"rustc --edition 2021 --crate-type lib --crate-name {crate} -o lib{crate}.rlib "
             "src/lib.rs"]  # fmt: skip
    for n, path in enumerate(test_files):
        lines.append(f"rustc --edition 2021 --test -L . --extern {crate}=lib{crate}.rlib "
                     f"-o t{n} {shlex.quote(path)}")  # fmt: skip
        lines.append(f"./t{n} --include-ignored -q")
    return "\n".join(lines) + "\n"


def reference_completion(row: Row) -> str | None:
    """The aider polyglot reference solution as a fenced completion (for tests and checks)."""
    examples = list(row.get("example_files", {}).values())
    if not examples:
        return None
    return "\n".join(f"```{row['language']}\n{text}\n```" for text in examples)
