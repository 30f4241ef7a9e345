"""Rust: the answer is a library crate of its own (`sandlot_answer`), the harness a binary crate
that links it.

The answer's top-level items are made `pub` (nothing else of its text changes) and its own `main`
is dropped. The harness names each function the dataset declares as a typed constant
(`const f: fn(Vec<f32>, f32) -> bool = sandlot_answer::f;`), so the tests call the answer
through the dataset's signature: an answer returning a type of its own whose `==` always holds
does not compile. The harness imports nothing else of the answer's (no glob, no
`#[macro_use]`): its `assert_eq!` is std's whatever macros the answer exports. HumanEval-X's
`#[test]` functions become plain functions the harness's `main` calls; MultiPL-E's `main`
becomes one. Every `assert!`, `assert_eq!` and `assert_ne!` marks its site when it passed.
"""

from __future__ import annotations

import re

from sandlot.executor import SEAL_FILE
from sandlot.judge import braces, splices
from sandlot.judge.split import (
    Built,
    Side,
    call_sites,
    mark_sites,
    matching,
    top_level_commas,
    view,
)

CRATE = "sandlot_answer"
ANSWER = "answer.rs"  # the rust row's Split.answer
HARNESS = "main.rs"

_GUARD = """
// sandlot's harness (sandlot/judge/split/rust.py): the seal's secret, read first in main (Rust
// runs nothing before it; the answer may have no constructor section) and kept masked; the
// tests' assertion sites; the seal, written when the tests returned.
#[allow(clippy::declare_interior_mutable_const)]
const sandlot_not_passed: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static sandlot_sites: [std::sync::atomic::AtomicBool; @SITES@] = [sandlot_not_passed; @SITES@];

fn sandlot_pass(site: usize) {
    sandlot_sites[site].store(true, std::sync::atomic::Ordering::SeqCst);
}

fn sandlot_mask(length: usize) -> Vec<u8> {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    (0..length).map(|i| { let mut h = state.build_hasher(); h.write_usize(i); h.finish() as u8 })
        .collect()
}

fn sandlot_read() -> (Vec<u8>, Vec<u8>) {
    let text = std::fs::read("@SEAL@").unwrap_or_default();
    let _ = std::fs::remove_file("@SEAL@");
    let mask = sandlot_mask(text.len());
    (text.iter().zip(&mask).map(|(t, m)| t ^ m).collect(), mask)
}

fn sandlot_end(seal: &(Vec<u8>, Vec<u8>)) {
    use std::io::Write;
    let passed = sandlot_sites.iter().filter(|s| s.load(std::sync::atomic::Ordering::SeqCst))
        .count();
    let text: Vec<u8> = seal.0.iter().zip(&seal.1).map(|(t, m)| t ^ m).collect();
    let payload = format!("passed={} failed=0 skipped=0", passed);
    let mut out = std::io::stdout();
    let _ = out.flush();
    let _ = out.write_all(&[&text[..], payload.as_bytes(), &text[..], b"\\n"].concat());
    let _ = out.flush();
}

"""
_MAIN = """
fn main() {
    let seal = sandlot_read();
    sandlot_tests_main();
    sandlot_end(&seal);
}
"""
_ASSERTS = r"assert(?:_eq|_ne)?!"
_ALLOW = (
    "#![allow(unused_imports, dead_code, non_upper_case_globals, non_snake_case, "
    "unused_variables, unused_mut, unused_parens)]\n"
)
_ITEM = re.compile(
    r"^(?P<lead>[ \t]*)(?!pub\b)(?P<item>(?:(?:unsafe|const|async|default)\s+|extern\s+"
    r'"[^"]*"\s+)*(?:fn|struct|enum|type|const|static|trait|union|mod)\b)',
    re.M,
)


def split(side: Side) -> Built | str | None:
    tests = side.tests
    if "#[test]" in tests:
        tests = splices.rust_tests_as_main(tests)
    if braces.main_span(tests, "rust") is None:
        return None
    crates = splices.rust_used_crates(side.interface, side.code + side.tests)
    uses = [f"{ln}\n" for ln in crates.split("\n") if ln.startswith("use ")]
    present = {ln.strip() for ln in side.code.split("\n")}
    missing = "".join(ln for ln in uses if ln.strip() not in present)
    # HumanEval-X declares apart from its prompt (a comment); MultiPL-E's prompt declares.
    opening = side.prompt if side.interface == side.prompt else crates + side.prompt
    answer = _as_library(side.head + (missing if side.whole else opening) + side.code)
    sites = call_sites(tests, _ASSERTS)
    tests = mark_sites(tests, sites, lambda text, n: f"{{ {text}; sandlot_pass({n}) }}")
    tests = re.sub(r"\bfn\s+main\s*\(\s*\)", "fn sandlot_tests_main()", tests, count=1)
    guard = _GUARD.replace("@SITES@", str(max(1, len(sites)))).replace("@SEAL@", SEAL_FILE) + _MAIN
    bindings = _bindings(side.interface, answer, tests)
    harness = f"{_ALLOW}extern crate {CRATE};\n{''.join(uses)}{bindings}{guard}\n{tests}\n"
    return Built(answer, {HARNESS: harness.encode()}, len(sites) or None,
                 view({ANSWER: answer, HARNESS: harness}))  # fmt: skip


_RUNNER = """
fn main() {
    let seal = sandlot_read();
    let mut failed = 0;
@RUNS@    if failed == 0 {
        sandlot_end(&seal);
    } else {
        std::process::exit(101);
    }
}

trait SandlotOutcome {
    fn passed(self) -> bool;
}

impl SandlotOutcome for () {
    fn passed(self) -> bool {
        true
    }
}

impl<T, E: std::fmt::Debug> SandlotOutcome for Result<T, E> {
    fn passed(self) -> bool {
        self.map_err(|e| eprintln!("Error: {:?}", e)).is_ok()
    }
}

fn sandlot_test(site: usize, name: &str, should_panic: bool, test: fn() -> bool) -> bool {
    let passed = match std::panic::catch_unwind(test) {
        Ok(passed) => passed && !should_panic,
        Err(_) => should_panic,
    };
    if passed {
        sandlot_pass(site);
    } else {
        eprintln!("test {} ... FAILED", name);
    }
    passed
}
"""
# What an exercise's tests may not have taken from the answer's crate by its glob import: the
# standard prelude (a second glob: an item of the answer's of the same name is ambiguous, an
# error) and std's macros (explicit imports, which a glob never shadows).
_STD_NAMES = (
    "    use std::prelude::rust_2021::*;\n"
    "    use std::{assert, assert_eq, assert_ne, debug_assert, debug_assert_eq, debug_assert_ne,\n"
    "        eprint, eprintln, format, matches, panic, print, println, todo, unimplemented,\n"
    "        unreachable, vec, write, writeln};\n"
)
_TEST_FN = re.compile(r"#\[test\]\s*((?:#\[[^\]]*\]\s*)*)fn\s+(\w+)\s*\(\s*\)\s*(->)?")


def exercise(code: str, crate: str, tests: dict[str, str]) -> Built | str | None:
    """An Exercism exercise (aider polyglot): the solution as the answer's crate, each test file
    a module of the harness, whose main runs every test (the ignored ones too), counting those
    that passed (a `#[should_panic]` test when it panicked)."""
    modules, runs, count = [], [], 0
    for n, (path, text) in enumerate(t for t in tests.items() if t[0].endswith(".rs")):
        text = re.sub(rf"\b{re.escape(crate)}::", f"{CRATE}::", text)
        text = re.sub(rf"^\s*extern\s+crate\s+{re.escape(crate)}\s*;", "", text, flags=re.M)
        text = re.sub(r"#\[cfg\(test\)\]\s*", "", text)  # the tests are compiled as such
        for m in _TEST_FN.finditer(braces.blank(text)):
            if "cfg(" in m.group(1):
                continue  # behind a feature cargo test leaves off: compiled out, as there
            name, panics = m.group(2), "true" if "should_panic" in m.group(1) else "false"
            runs.append(
                f'    if !sandlot_test({count}, "{name}", {panics}, '
                f"|| sandlot_t{n}::{name}().passed()) {{\n        failed += 1;\n    }}\n"
            )
            count += 1
        text = re.sub(r"#\[test\]\s*", "", text)
        text = re.sub(r"#\[ignore(?:\s*=\s*\"[^\"]*\")?\]\s*|#\[should_panic[^\]]*\]\s*", "",
                      text)  # fmt: skip
        text = re.sub(r"^fn\s", "pub fn ", text, flags=re.M)
        modules.append(f"#[allow(unused_imports)]\nmod sandlot_t{n} {{ // {path}\n{_STD_NAMES}"
                       f"{text}\n}}\n")  # fmt: skip
    if not count:
        return None
    guard = _GUARD.replace("@SITES@", str(count)).replace("@SEAL@", SEAL_FILE)
    guard += _RUNNER.replace("@RUNS@", "".join(runs))
    harness = f"{_ALLOW}extern crate {CRATE};\n{guard}\n{''.join(modules)}"
    return Built(code, {HARNESS: harness.encode()}, count,
                 view({ANSWER: code, HARNESS: harness}))  # fmt: skip


def _as_library(code: str) -> str:
    """The answer as a library crate: its inner attributes first, its top-level items public
    (its own `main` is one more function of the library's)."""
    inner = re.findall(r"^[ \t]*#!\[[^\n]*\][ \t]*\n?", code, re.M)
    for attribute in inner:
        code = code.replace(attribute, "", 1)
    blanked = braces.blank(code)
    depth, out, at = 0, [], 0
    for i, c in enumerate(blanked):  # the items at brace depth 0
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and (i == 0 or blanked[i - 1] == "\n"):
            m = _ITEM.match(blanked, i)
            if m is not None:
                start = m.start("item")
                out += [code[at:start], "pub "]
                at = start
    return "".join(inner) + "".join(out) + code[at:]


def _signatures(code: str) -> dict[str, str]:
    """Each top-level function of `code`: its name and its text up to its body."""
    blanked = braces.blank(code)
    out = {}
    for m in re.finditer(r"^[ \t]*(?:pub\s+)?fn\s+(\w+)", blanked, re.M):
        body = blanked.find("{", m.end())
        params = blanked.find("(", m.end())
        if body < 0 or params < 0 or blanked[: m.start()].count("{") != blanked[
                : m.start()].count("}"):  # fmt: skip
            continue
        close = matching(blanked, params)
        if close is not None and close < body:
            out[m.group(1)] = code[m.start() : body].strip()
    return out


def _bindings(declarations: str, answer: str, tests: str) -> str:
    """The harness's names for the answer's functions: each the dataset declares, typed as it
    declares it; and each other function of the answer's the tests call, typed as the answer
    declares it, in types the harness resolves (std's, never the answer's own)."""
    theirs, mine = _signatures(declarations), _signatures(answer)
    used = set(re.findall(r"[A-Za-z_]\w*", braces.blank(tests)))
    used -= set(re.findall(r"\bfn\s+(\w+)", braces.blank(tests)))  # the tests' own
    out = []
    for name, sig in theirs.items():
        # the answer's own signature where it declares other (std's) types: an `i64` for an
        # `isize` the tests' literals fit as well
        other = mine.get(name)
        own = (
            _binding(name, other, trusted=False) if other and _plain(other) != _plain(sig) else None
        )
        out.append(own or _binding(name, sig) or f"use {CRATE}::{name};\n")
    for name, sig in mine.items():
        if name not in theirs and name in used and name != "main":
            out.append(_binding(name, sig, trusted=False) or "")
    return "".join(out)


def _plain(signature: str) -> str:
    """A signature without its spacing, `pub` and parameter names' spelling to compare by."""
    return re.sub(r"\s+|\bpub\b", "", re.sub(r"\b\w+\s*:(?!:)", ":", signature))


def _binding(name: str, signature: str, *, trusted: bool = True) -> str | None:
    """`name` in the harness: a constant of the function's type, or None where the signature is
    not plain (generics, `impl`, `where`; for the answer's own, anything but type names)."""
    path = f"{CRATE}::{name}"
    blanked = braces.blank(signature)
    opening = blanked.find("(", blanked.index(name) + len(name))
    close = matching(blanked, opening)
    generic = "<" in blanked[:opening] or re.search(r"\b(impl|where|dyn)\b", blanked)
    if close is None or generic:
        return None
    if not trusted and re.search(r"[{}\"!=#]|\bsandlot", signature[opening:]):
        return None
    types = []
    for param in top_level_commas(signature[opening + 1 : close], "()<>[]"):
        if not param.strip():
            continue
        colon = _top_level_colon(param)
        if colon is None:
            return None
        types.append(param[colon + 1 :].strip())
    ret = signature[close + 1 :].strip()
    ret = ret[2:].strip() if ret.startswith("->") else ""
    arrow = f" -> {ret}" if ret else ""
    return f"const {name}: fn({', '.join(types)}){arrow} = {path};\n"


def _top_level_colon(param: str) -> int | None:
    depth = 0
    for i, c in enumerate(param):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c == ":" and depth == 0 and param[i : i + 2] != "::" and param[i - 1 : i] != ":":
            return i
    return None
