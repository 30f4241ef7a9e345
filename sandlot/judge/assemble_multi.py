"""Program assembly for the multi-language families: HumanEval-X, MultiPL-E, aider polyglot."""

from __future__ import annotations

import io
import re
import shlex
import zipfile
from pathlib import Path

from sandlot.judge import braces, guards, harnesses, reports
from sandlot.judge.assemble import CPP_HEADERS, Row, build_humaneval, no_code
from sandlot.judge.extract import Extracted, cut_at, extract, fenced_blocks
from sandlot.judge.plans import Assembled, JudgeConfig, Program
from sandlot.languages.table import RUST_CRATES

# Crates every HumanEval-X Rust declaration `use`s (`use rand::Rng; use regex::Regex; use md5;`),
# though few tasks need them: the rust row has them (install.py builds them).
_RUST_CRATE_USES = re.compile(r"^use (rand|regex|md5)\b(?:::(\w+))?.*$", re.M)


def _rust_used_crates(declaration: str, code: str) -> str:
    """The declaration without its crate `use`s that `code` needs not: nothing to load."""
    blanked = braces.blank(code)

    def keep(m: re.Match[str]) -> str:
        names = [n for n in m.groups() if n]
        return m.group() if any(re.search(rf"\b{n}\b", blanked) for n in names) else ""

    return _RUST_CRATE_USES.sub(keep, declaration)


def _declared_name(line: str, language: str) -> str | None:
    """The last name `line` (without comments and literals) declares as a function, if any."""
    for name in reversed(re.findall(r"[A-Za-z_]\w*", line)):
        if declares(line, name, language):
            return name
    return None


def _signature_name(prompt: str, language: str) -> str | None:
    """The function a prompt ends by declaring: in its last lines, the last name the language
    would declare there (`sub f {`, `f <- function(x)`, `bool f(int x) {`)."""
    lines = [ln for ln in prompt.rstrip().split("\n") if ln.strip()][-3:]
    for line in reversed(lines):
        name = _declared_name(braces.blank(line), language)
        if name is not None:
            return name
    for line in reversed(lines):  # else the identifier before the last `(` of a code line
        m = re.search(r"([A-Za-z_]\w*)\s*(=\s*\([^)]*\)\s*=>|\()", line)
        if m and not line.lstrip().startswith(("//", "#", "/*", "*")):
            return m.group(1)
    return None


def _freeform(ex: Extracted, name: str | None, language: str) -> bool:
    """Whether the extracted code is a whole solution (it declares the function) or a body (which
    may well call the function: a recursive body is still a body)."""
    if ex.continuation or not name:
        return False
    blanked = braces.blank(ex.code)
    if declares(blanked, name, language):
        return True
    # An answer that opens with a directive or a declaration of its own (a helper, or the
    # function under another name) is a whole program too; a body opens with a statement.
    first = next((ln for ln in blanked.split("\n") if ln.strip()), "")
    return _PRELUDE.match(first) is not None or _declared_name(first, language) is not None


# How a function is declared, per language ({n}: its name); a call never looks like these.
_DECLARATIONS = {
    "rust": r"\bfn\s+{n}\b", "go": r"\bfunc\s+(\([^)]*\)\s*)?{n}\b",
    "go_test": r"\bfunc\s+(\([^)]*\)\s*)?{n}\b",
    "nodejs": r"\bfunction\s*\*?\s*{n}\b|\b{n}\s*=(?!=)|^\s*(async\s+)?{n}\s*\([^)]*\)\s*\{{",
    "typescript": r"\bfunction\s*\*?\s*{n}\b|\b{n}\s*=(?!=)",
    "php": r"\bfunction\s+&?{n}\b", "lua": r"\bfunction\s+([\w.:]+[.:])?{n}\b|\b{n}\s*=(?!=)",
    "perl": r"\bsub\s+{n}\b", "ruby": r"\bdef\s+(self\.)?{n}\b", "scala": r"\bdef\s+{n}\b",
    "kotlin": r"\bfun\s+{n}\b", "racket": r"\(define\s+\(\s*{n}\b",
    "R": r"\b{n}\s*(<-|=)\s*function\b",
    "bash": r"^\s*(function\s+)?{n}\s*\(\s*\)|^\s*function\s+{n}\b",
    "python": r"^\s*(async\s+)?def\s+{n}\b",
}  # fmt: skip
# C-like declarations: a type (words, `::`, `<...>`, `*`, `&`, `[]`, D's `Tuple!(long, long)`,
# C#'s `(int, string)`), the name, its parameters, and no `;` after them on that line; a
# statement that calls it starts with a keyword or has `=`, `(`, `<<`... before the name.
_C_DECLARATION = (
    r"^[ \t]*(?!(?:return|else|case|throw|new|delete|co_return|yield|await)\b)"
    r"(?:(?:[A-Za-z_][\w:<>,.\[\]*&?]*(?:!(?:\([^()\n]*\)|\w+)[\[\]*&]*)?"
    r"|\([\w<>,.\[\]? ]*\))[ \t]+)+"
    r"[*&]?{n}\s*\([^;]*$"
)


def declares(blanked: str, name: str, language: str) -> bool:
    """Whether `blanked` (code without comments and literals) declares the function `name`."""
    pattern = _DECLARATIONS.get(language, _C_DECLARATION).format(n=re.escape(name))
    return re.search(pattern, blanked, re.M) is not None


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
    name = _signature_name(row.get("declaration") or prompt, language)
    ex = extract(completion, language, name, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    whole = _freeform(ex, name, language)
    code = ex.code
    # The seal goes in the tests' main before the answer is put in, never in an answer's own.
    tests = _rust_tests_as_main(test) if language == "rust" else test
    tests, sealed = guards.guard_end(tests, language)
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
        decl = _rust_used_crates(row.get("declaration", ""), code + test)
        uses = "\n".join(ln for ln in decl.split("\n") if ln.startswith("use "))
        head = (uses + "\n") if whole else decl + prompt
        full = head + code + "\n" + tests
    else:
        full = prompt + code + "\n" + tests
    if sealed:
        full = guards.with_start(full, language)
    return Assembled(ex, Program(language, full, test, run_timeout=p.get("run_timeout"),
                                 seal=sealed))  # fmt: skip


_GO_STD = {"strings": "strings", "strconv": "strconv", "math": "math", "sort": "sort",
           "fmt": "fmt", "unicode": "unicode", "bytes": "bytes", "regexp": "regexp"}  # fmt: skip


def _go_program(row: Row, code: str, whole: bool) -> str:
    """test_setup's package and imports merged with the prompt's and the answer's, then solution
    and tests."""
    imports = _go_imports(row.get("test_setup", "") + row.get("import", ""))
    if whole:
        imports += _go_imports(code)
        code = _go_without_head(code)
        head = ""
    else:
        head = re.sub(r"^import\s*\(.*?\)\s*", "", row["prompt"], flags=re.M | re.S)
    return _go_file("main", imports, f"{head}{code}\n{row['test']}")


def _go_without_head(code: str) -> str:
    """A whole Go answer without its package clause, imports and own main."""
    code = re.sub(r"^package\s+\w+\s*$", "", code, flags=re.M)
    code = re.sub(r"^import\s*\(.*?\)|^import\s+(\w+\s+|[._]\s+)?\"[^\"]+\"", "", code,
                  flags=re.M | re.S)  # fmt: skip
    return braces.drop_main(code, "go")


def _go_file(package: str, imports: list[str], body: str) -> str:
    """One Go file of `body` with the imports it uses. Go refuses an import nothing uses, and a
    prompt's imports are for its reference solution: those no code here uses are dropped
    (SandboxFusion keeps them all, so an answer that solves the task another way fails to
    compile there); standard packages used but not imported are added."""
    used = braces.blank(body)
    kept = [spec for spec in dict.fromkeys(imports) if _go_import_used(spec, used)]
    paths = {spec.split()[-1] for spec in kept}
    for ident, path in _GO_STD.items():
        if f'"{path}"' not in paths and re.search(rf"\b{ident}\.\w", used):
            kept.append(f'"{path}"')
    block = "\n".join(f"    {i}" for i in kept)
    return f"package {package}\n\nimport (\n{block}\n)\n\n{body}"


_GO_IMPORT_SPEC = re.compile(r'^\s*((?:[\w.]+\s+)?"[^"]+")', re.M)


def _go_imports(source: str) -> list[str]:
    """The import specs (`"strings"`, `str "strings"`, `_ "embed"`) of `source`'s imports."""
    specs: list[str] = []
    for block in re.findall(r"^import\s*\((.*?)\)", source, flags=re.M | re.S):
        specs += [" ".join(m.split()) for m in _GO_IMPORT_SPEC.findall(block)]
    for m in re.finditer(r'^import\s+((?:[\w.]+\s+)?"[^"]+")', source, flags=re.M):
        specs.append(" ".join(m.group(1).split()))
    return specs


def _go_import_used(spec: str, blanked: str) -> bool:
    """Whether code (without comments and literals) uses the package an import spec names."""
    parts = spec.split()
    alias = parts[0] if len(parts) == 2 else None
    if alias in ("_", "."):  # imported for its side effects, or into the file's scope
        return True
    name = alias or parts[-1].strip('"').rsplit("/", 1)[-1]
    name = re.sub(r"^v\d+$", "", name) or parts[-1].strip('"').rsplit("/", 2)[-2]
    return re.search(rf"\b{re.escape(name)}\.\w", blanked) is not None


# -- MultiPL-E ----------------------------------------------------------------------------------

_PRELUDE = re.compile(r"^(#include|import |using |use |require|const \w+ = require|<\?php)")


def build_multiple(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = p["language"]
    prompt, tests = row["prompt"], row["tests"]
    if language == "java":
        # sandlot runs class Main; MultiPL-E's harness names it Problem.
        prompt = prompt.replace("class Problem", "class Main")
        tests = tests.replace("class Problem", "class Main")
    name = _signature_name(prompt, language)
    ex = extract(completion, language, name, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    stops = tuple(s for s in row.get("stop_tokens") or () if not s.startswith("re:"))
    program_tests, sealed = guards.guard_end(tests, language)
    if _freeform(ex, name, language):
        code = braces.drop_main(ex.code, language)
        if language in _SCOPES:
            code = _open_scope(code, prompt, language)
        elif language == "csharp":
            code = _csharp_open_class(code)
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
        if language == "go_test":  # one package clause, the imports of prompt and answer
            package = re.search(r"^package\s+(\w+)", prompt, re.M)
            full = _go_file(package.group(1) if package else "main",
                            _go_imports(prompt) + _go_imports(code),
                            f"{_go_without_head(code)}\n{tail}")  # fmt: skip
    else:
        full = prompt + cut_at(ex.code, stops) + program_tests
    if sealed:
        full = guards.with_start(full, language)
    markers = (b"FAILURE",) if language == "racket" else ()  # rackunit reports, exits 0
    # MultiPL-E's Java prompts import org.javatuples (Pair, Triplet...): the java row has it.
    return Assembled(ex, Program(language, full, tests, run_timeout=p.get("run_timeout"),
                                 fail_markers=markers, seal=sealed))  # fmt: skip


# Languages whose MultiPL-E prompt opens a scope the tests close after their main.
_SCOPES = {"java": "class", "scala": "object"}


def _open_scope(code: str, prompt: str, language: str) -> str:
    """A whole Java or Scala answer with the prompt's class (object) left open, as the tests
    close it after their main: the answer's imports and other types first, then the scope's
    head and the members of the answer's scope of that name (else of its first one; else the
    answer is bare members)."""
    keyword = _SCOPES[language]
    head = re.search(rf"^[^\n]*\b{keyword}\s+(\w+)[^{{\n]*\{{[ \t]*$", prompt, re.M)
    if head is None:
        return code
    blanked = braces.blank(code)
    found = list(re.finditer(rf"^[ \t]*(?:(?:public|private|protected|final|static|abstract"
                             rf"|case)\s+)*{keyword}\s+(\w+)[^{{;=]*\{{", blanked,
                             re.M))  # fmt: skip
    scope = next((m for m in found if m.group(1) in (head.group(1), "Problem", "Main")),
                 found[0] if found else None)  # fmt: skip
    if scope is None:
        imports = re.compile(r"^[ \t]*import\s[^\n]*\n?", re.M)
        return "".join(imports.findall(code)) + head.group(0) + "\n" + imports.sub("", code)
    end = braces.closing(blanked, scope.end() - 1)
    if end is None:  # an answer cut off inside its scope: its members run to the end
        return f"{code[: scope.start()].strip()}\n{head.group(0)}\n{code[scope.end() :]}"
    after = "".join(_top_level_types(code[end + 1 :]))  # not a usage example's statements
    return f"{code[: scope.start()].strip()}\n{after}\n{head.group(0)}\n{code[scope.end() : end]}"


_TYPE_HEAD = re.compile(
    r"^(?:(?:public|final|abstract|sealed|case|static)\s+)*"
    r"(?:class|object|trait|interface|enum|record)\s+\w+[^{;]*\{",
    re.M,
)


def _top_level_types(code: str) -> list[str]:
    """The type declarations at column 0 of `code`, each to its closing brace."""
    blanked = braces.blank(code)
    spans = []
    for m in _TYPE_HEAD.finditer(blanked):
        end = braces.closing(blanked, m.end() - 1)
        if end is not None and (not spans or m.start() > spans[-1][1]):
            spans.append((m.start(), end + 1))
    return [code[a:b] + "\n" for a, b in spans]


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
    if ex.empty:
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
        return Assembled(ex, Program("bash", script, script, files=files, run_timeout=120,
                                     seal=True))  # fmt: skip
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
        text = _unskipped(text)  # Exercism skips all but the first; run all
        return Assembled(ex, Program("jest", text, text, files=files, run_timeout=60,
                                     fetch=reports.fetch_for("jest")))  # fmt: skip
    if language in _NEEDS:
        path, package = _NEEDS[language]
        if not Path(path).exists():  # the jail sees the host's /usr
            return Assembled(ex, None, f"aider polyglot {language} exercises need {path} (Debian "
                             f"package {package}; `sandlot setup` installs it)")  # fmt: skip
        return _aider_java(row, completion, ex)
    if language == "cpp":
        return _aider_cpp(row, completion, ex)
    return Assembled(ex, None, f"aider polyglot {language} exercises have no test runner here")


# jest's skipped tests and suites (xtest, xit, xdescribe, test.skip, it.skip, describe.skip) as
# the ones that run; a run that still skips any is rejected.
_SKIPS = re.compile(r"\b(?:x(test|it|describe)|(test|it|describe)\.skip)(\s*)\(")


def _unskipped(test: str) -> str:
    return _SKIPS.sub(lambda m: f"{m.group(1) or m.group(2)}{m.group(3)}(", test)


# What the java exercises need beyond their language row (from the java row's apt packages).
_NEEDS = {"java": ("/usr/share/java/assertj-core.jar", "libassertj-core-java")}

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
    # The first test file is the program; the exercise's other test sources (support classes
    # such as an extension) compile beside it: javac takes every .java in the work dir.
    tests = [(Path(path).name, _enable_all(text)) for path, text in
             {**row.get("test_files", {}), **row.get("editor_files", {})}.items()
             if path.endswith(".java")]  # fmt: skip
    (_, test_text), others = tests[0], tests[1:]
    files.update({name: text.encode() for name, text in others})
    return Assembled(ex, Program("junit", test_text, test_text, files=files, run_timeout=60,
                                 compile_timeout=60))  # fmt: skip


def _enable_all(java: str) -> str:
    return re.sub(r"^\s*@Disabled(\([^)]*\))?[ \t]*$", "", java, flags=re.M)


# Exercism's C++ tests include Debian's Catch2 v2 under this macro, and run every case under
# the other; the catch2 row compiles them with Catch's main and header prebuilt at setup.
_EXERCISM_DEFINES = "#define EXERCISM_TEST_SUITE\n#define EXERCISM_RUN_ALL_TESTS\n"


def _aider_cpp(row: Row, completion: str, ex: Extracted) -> Assembled:
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
    if source and impl:
        files[source] = "\n".join(impl).encode()
    return Assembled(ex, Program("catch2", test_text, test_text, files=files, run_timeout=60,
                                 compile_timeout=120))  # fmt: skip


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
    lines = ["set -e", f"seal=$(cat {guards.SEAL} 2>/dev/null || true); rm -f {guards.SEAL}",
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


def reference_completion(row: Row) -> str | None:
    """The aider polyglot reference solution as a fenced completion (for tests and checks)."""
    examples = list(row.get("example_files", {}).values())
    if not examples:
        return None
    return "\n".join(f"```{row['language']}\n{text}\n```" for text in examples)
