"""Text surgery one language needs to splice an answer into its tests, each a named function a
language row (dialects.py) references: Go's one file of imports, Rust's `#[test]`s as a main,
Java's, Scala's and C#'s scope left open for the tests to close.
"""

from __future__ import annotations

import re
from typing import Any

from sandlot.judge import braces

Row = dict[str, Any]

# Crates every HumanEval-X Rust declaration `use`s (`use rand::Rng; use regex::Regex; use md5;`),
# though few tasks need them: the rust row has them (install/rust.py builds them).
_RUST_CRATE_USES = re.compile(r"^use (rand|regex|md5)\b(?:::(\w+))?.*$", re.M)


def rust_used_crates(declaration: str, code: str) -> str:
    """The declaration without its crate `use`s that `code` needs not: nothing to load."""
    blanked = braces.blank(code)

    def keep(m: re.Match[str]) -> str:
        names = [n for n in m.groups() if n]
        return m.group() if any(re.search(rf"\b{n}\b", blanked) for n in names) else ""

    return _RUST_CRATE_USES.sub(keep, declaration)


def rust_tests_as_main(test: str) -> str:
    """HumanEval-X's `#[test]` module as a plain program: rustc without --test runs it."""
    names = re.findall(r"#\[test\]\s*fn\s+(\w+)", test)
    body = re.sub(r"#\[cfg\(test\)\]\s*", "", test)
    body = re.sub(r"#\[test\]\s*fn\s+", "pub fn ", body)
    calls = "".join(f"    tests::{n}();\n" for n in names)
    return f"{body}\n#[allow(dead_code)]\nfn main() {{\n{calls}}}\n"


_GO_STD = {"strings": "strings", "strconv": "strconv", "math": "math", "sort": "sort",
           "fmt": "fmt", "unicode": "unicode", "bytes": "bytes", "regexp": "regexp"}  # fmt: skip


def go_program(row: Row, code: str, whole: bool) -> str:
    """test_setup's package and imports merged with the prompt's and the answer's, then solution
    and tests."""
    imports = go_imports(row.get("test_setup", "") + row.get("import", ""))
    if whole:
        imports += go_imports(code)
        code = go_without_head(code)
        head = ""
    else:
        head = re.sub(r"^import\s*\(.*?\)\s*", "", row["prompt"], flags=re.M | re.S)
    return go_file("main", imports, f"{head}{code}\n{row['test']}")


def go_without_head(code: str) -> str:
    """A whole Go answer without its package clause, imports and own main."""
    code = re.sub(r"^package\s+\w+\s*$", "", code, flags=re.M)
    code = re.sub(r"^import\s*\(.*?\)|^import\s+(\w+\s+|[._]\s+)?\"[^\"]+\"", "", code,
                  flags=re.M | re.S)  # fmt: skip
    return braces.drop_main(code, "go")


def go_file(package: str, imports: list[str], body: str) -> str:
    """One Go file of `body` with the imports it uses. Go refuses an import nothing uses, and a
    prompt's imports are for its reference solution: those no code here uses are dropped
    (SandboxFusion keeps them all, so an answer that solves the task another way fails to
    compile there); standard packages used but not imported are added."""
    used = braces.blank(body)
    kept = [spec for spec in dict.fromkeys(imports) if go_import_used(spec, used)]
    paths = {spec.split()[-1] for spec in kept}
    for ident, path in _GO_STD.items():
        if f'"{path}"' not in paths and re.search(rf"\b{ident}\.\w", used):
            kept.append(f'"{path}"')
    block = "\n".join(f"    {i}" for i in kept)
    return f"package {package}\n\nimport (\n{block}\n)\n\n{body}"


_GO_IMPORT_SPEC = re.compile(r'^\s*((?:[\w.]+\s+)?"[^"]+")', re.M)


def go_imports(source: str) -> list[str]:
    """The import specs (`"strings"`, `str "strings"`, `_ "embed"`) of `source`'s imports."""
    specs: list[str] = []
    for block in re.findall(r"^import\s*\((.*?)\)", source, flags=re.M | re.S):
        specs += [" ".join(m.split()) for m in _GO_IMPORT_SPEC.findall(block)]
    for m in re.finditer(r'^import\s+((?:[\w.]+\s+)?"[^"]+")', source, flags=re.M):
        specs.append(" ".join(m.group(1).split()))
    return specs


def go_import_used(spec: str, blanked: str) -> bool:
    """Whether code (without comments and literals) uses the package an import spec names."""
    parts = spec.split()
    alias = parts[0] if len(parts) == 2 else None
    if alias in ("_", "."):  # imported for its side effects, or into the file's scope
        return True
    name = alias or parts[-1].strip('"').rsplit("/", 1)[-1]
    name = re.sub(r"^v\d+$", "", name) or parts[-1].strip('"').rsplit("/", 2)[-2]
    return re.search(rf"\b{re.escape(name)}\.\w", blanked) is not None


def open_scope(code: str, prompt: str, keyword: str) -> str:
    """A whole Java or Scala answer with the prompt's class (object) left open, as the tests
    close it after their main: the answer's imports and other types first, then the scope's
    head and the members of the answer's scope of that name (else of its first one; else the
    answer is bare members)."""
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
    spans: list[tuple[int, int]] = []
    for m in _TYPE_HEAD.finditer(blanked):
        end = braces.closing(blanked, m.end() - 1)
        if end is not None and (not spans or m.start() > spans[-1][1]):
            spans.append((m.start(), end + 1))
    return [code[a:b] + "\n" for a, b in spans]


def csharp_open_class(code: str, prompt: str) -> str:
    """A whole C# answer as its directives and `class Problem {` with the members of its class
    (or its bare methods), left open: the tests hold the prompt's Main and close the class."""
    body = braces.class_body(code, "Problem")
    members = braces.without_directives(code if body is None else body)
    return "\n".join([*braces.directives(code), "class Problem {", members])


def java_open_class(code: str, prompt: str) -> str:
    return open_scope(code, prompt, "class")


def scala_open_object(code: str, prompt: str) -> str:
    return open_scope(code, prompt, "object")


_SCALA_APP = re.compile(r"^([ \t]*object\s+\w+)\s+extends\s+App\s*\{", re.M)


def scala_app_as_main(template: str) -> str:
    """An `object Main extends App { ... }` test (MBXP's Scala) as an object whose `main` holds
    the body's statements: App runs them from its own main, where no seal can tell the tests'
    end; as a main of the object's own, the guard seals it as any other. The `#<INSERT>` slot
    (the answer's members) stays a member of the object."""
    m = _SCALA_APP.search(template)
    if m is None:
        return template
    blanked = braces.blank(template)
    end = braces.closing(blanked, m.end() - 1)
    if end is None:
        return template
    body = template[m.end() : end]
    slot = "#<INSERT>" if "#<INSERT>" in body else ""
    statements = body.replace("#<INSERT>", "", 1)
    return (f"{template[: m.start()]}{m.group(1)} {{\n{slot}\n"
            f"  def main(args: Array[String]): Unit = {{\n{statements}\n  }}\n"
            f"{template[end:]}")  # fmt: skip


def php_untagged(code: str, prompt: str) -> str:
    """A whole PHP answer without its tags: the prompt opened the one the program needs."""
    return code.strip().removeprefix("<?php").removesuffix("?>")


def go_whole_multiple(prompt: str, code: str, tail: str) -> str:
    """A whole Go answer to a MultiPL-E prompt: one package clause, the imports of prompt and
    answer."""
    package = re.search(r"^package\s+(\w+)", prompt, re.M)
    return go_file(package.group(1) if package else "main", go_imports(prompt) + go_imports(code),
                   f"{go_without_head(code)}\n{tail}")  # fmt: skip


# -- HumanEval-X: how the prompt (or a whole answer) and the tests make one program -------------


def hx_default(row: Row, code: str, whole: bool, tests: str) -> str:
    return row["prompt"] + code + "\n" + tests


def hx_whole(row: Row, code: str, whole: bool, tests: str) -> str:
    """A whole answer replaces the prompt."""
    return (code if whole else row["prompt"] + code) + "\n" + tests


def hx_go(row: Row, code: str, whole: bool, tests: str) -> str:
    return go_program(row, code, whole)


def hx_rust(row: Row, code: str, whole: bool, tests: str) -> str:
    decl = rust_used_crates(row.get("declaration", ""), code + row["test"])
    uses = "\n".join(ln for ln in decl.split("\n") if ln.startswith("use "))
    head = (uses + "\n") if whole else decl + row["prompt"]
    return head + code + "\n" + tests


def hx_cpp(row: Row, code: str, whole: bool, tests: str) -> str:
    """A whole answer without its own main."""
    if whole:
        code = re.split(r"\nint\s+main\s*\(", "\n" + code)[0]
    return hx_whole(row, code, whole, tests)
