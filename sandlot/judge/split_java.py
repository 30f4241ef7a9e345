"""Java's split: the answer's classes are a compilation unit of their own, the tests another, and
the harness (the tests' `Main`, which owns `main` and the seal) calls the answer from outside.

The answer goes in `ANSWER_DIR/<Class>.java`, the harness in `Main.java`; the java row compiles
both in one javac run (one JVM start-up, as before the split): a compilation unit cannot change
another's text, so nothing the answer writes closes the tests' class, adds a `main` of theirs or
renames what they call. What remains shared is the package (the answer's package-private
classes and members must stay reachable, as they are in the one file SandboxFusion compiles), so
an answer's top-level class could stand for a name the tests take from an import or from
`java.lang` (`Arrays`, `String`, even the package `java`): the names the harness uses, less the
classes the problem asks for, are listed in `RESERVED`, and the java row's compile step refuses
an answer that declared a class of one of them (it reads javac's output, so no spelling of a
declaration escapes it).

The seal is read by the first statement of the tests' main, into a local (no field that
reflection could read), before any class of the answer is initialized: the JVM initializes a
class at its first use, and only the tests use the answer. It is written by the last statement
of main, with the number of assertion sites (sites.py) that ran and held.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from sandlot.executor import SEAL_FILE
from sandlot.judge import braces, returns, sites
from sandlot.judge.plans import Program
from sandlot.judge.splices import open_scope
from sandlot.languages import SPLIT_DIR as ANSWER_DIR

Row = dict[str, Any]
RESERVED = f"{ANSWER_DIR}/reserved"
SITES = sites.Dialect(calls=(), check="SandlotSeal.check", fails="SandlotSeal.fails", keyword=True)
SEAL_VAR = "sandlot$seal"

SEAL_CLASS = """
// sandlot's seal (sandlot/judge/split_java.py): read by the tests' main, first; written at its
// end with the number of assertion sites that ran and held.
final class SandlotSeal {
    private static final java.util.BitSet passed = new java.util.BitSet();

    private SandlotSeal() {}

    static String read() {
        try {
            java.nio.file.Path path = java.nio.file.Paths.get("SEAL_FILE");
            String text = new String(java.nio.file.Files.readAllBytes(path), "ISO-8859-1");
            java.nio.file.Files.delete(path);
            return text;
        } catch (Exception e) {
            return "";
        }
    }

    static void check(int site, boolean ok) {
        if (!ok) throw new AssertionError("sandlot: assertion " + site + " failed");
        passed.set(site);
    }

    static boolean fails(int site, boolean failed) {
        if (!failed) passed.set(site);
        return failed;
    }

VET
    static void end(String secret) {
        if (secret.isEmpty()) return;
        String counts = "passed=" + passed.cardinality() + " failed=0";
        try {
            java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);
            System.out.flush();
            out.write((secret + counts + secret + "\\n").getBytes("ISO-8859-1"));
            out.flush();
        } catch (Exception e) {
            return;
        }
    }
}
""".replace("SEAL_FILE", SEAL_FILE).replace("VET", returns.JAVA_VET.strip("\n") + "\n", 1)

_TYPE_DECL = re.compile(r"(?<![\w$])(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_IDENT = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*")
_IMPORT = re.compile(r"^[ \t]*import\s+(?!static\b)[\w.*\s]+;[ \t]*$", re.M)
_PACKAGE = re.compile(r"^[ \t]*package\s+[\w.]+\s*;", re.M)
_METHOD = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*\([^;{}]*\)\s*(?:throws[^{;]*)?\{")
_KEYWORDS = frozenset({
    "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "const",
    "continue", "default", "do", "double", "else", "enum", "extends", "final", "finally", "float",
    "for", "goto", "if", "implements", "import", "instanceof", "int", "interface", "long",
    "native", "new", "package", "private", "protected", "public", "return", "short", "static",
    "strictfp", "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try",
    "void", "volatile", "while", "true", "false", "null", "var", "record", "yield",
})  # fmt: skip


def declared_types(code: str) -> list[str]:
    """The type names `code` declares (classes, interfaces, enums, records), at any depth. Java
    has no backquote: a Markdown fence around it (a prompt's) is no literal."""
    return _TYPE_DECL.findall(braces.blank(code.replace("`", " ")))


def imports(code: str) -> str:
    """`code`'s (non-static) import lines, each once."""
    return "".join(dict.fromkeys(m.group().strip() + "\n" for m in _IMPORT.finditer(code)))


def methods(code: str) -> set[str]:
    """The names of the methods `code` declares (a Markdown fence around it is no literal)."""
    return set(_METHOD.findall(braces.blank(code.replace("`", " ")))) - _KEYWORDS


def qualify_calls(tests: str, owner: str, skip: set[str]) -> str:
    """Unqualified calls in `tests` of methods it does not declare itself (`f(x)`, not `a.f(x)`
    or `new F(x)`), as calls of `owner`'s static methods: the tests' calls of the answer's."""
    blanked = braces.blank(tests)
    own = set(_METHOD.findall(blanked))
    out, last = [], 0
    for m in re.finditer(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*\(", blanked):
        name = m.group(1)
        before = blanked[: m.start()].rstrip()
        if name in _KEYWORDS or name in own or name in skip or before.endswith("new"):
            continue
        out += [tests[last : m.start()], f"{owner}."]
        last = m.start()
    out.append(tests[last:])
    return "".join(out)


def harness(tests: str, calls: Collection[str] = ()) -> tuple[str, int | None] | None:
    """The tests as the harness: their calls of the answer's methods `calls` vetted (returns.py),
    their assertion sites reporting to the seal, the seal read first in main and written last,
    the seal's class after them; and how many sites there are. None: the tests have no complete
    main."""
    vetted = returns.vet_calls(tests, calls, "SandlotSeal.vet")
    instrumented, count = sites.instrument(vetted, SITES)
    ended = braces.at_end_of_main(instrumented, "java", f"SandlotSeal.end({SEAL_VAR});")
    if ended is None:
        return None
    read = f"final String {SEAL_VAR} = SandlotSeal.read();"
    return braces.at_start_of_main(ended, "java", read) + SEAL_CLASS, count


def reserved(harness_text: str, expected: set[str]) -> list[str]:
    """The names the harness uses that no top-level class of the answer may take: all of them
    but the classes the problem asks for and the harness's own."""
    blanked = braces.blank(harness_text)
    own = set(declared_types(harness_text))
    used = set(_IDENT.findall(blanked)) - _KEYWORDS
    return sorted(used - expected - own)


def program(
    answer: str | None, tests: str, expected: set[str], *, test_code: str | None = None,
    calls: Collection[str] = (), **kw: Any,
) -> Program | None:  # fmt: skip
    """The split program: `answer` (a compilation unit declaring the classes `expected` of it;
    None: the program has no answer of its own to keep apart) beside `tests` (a compilation unit
    whose main calls them, the methods `calls` of them among it). None when the tests have no
    main to seal."""
    built = harness(tests, calls)
    if built is None:
        return None
    text, count = built
    files = dict(kw.pop("files", None) or {})
    if answer is not None:
        answer = _PACKAGE.sub("", answer)  # the answer shares the tests' (unnamed) package
        name = next((n for n in declared_types(answer) if n in expected), "Answer")
        files[f"{ANSWER_DIR}/{name}.java"] = _one_public(answer, name).encode()
        files[RESERVED] = "".join(f"{n}\n" for n in reserved(text, expected)).encode()
    return Program("java", text, test_code if test_code is not None else tests, files=files,
                   seal=True, tests=count, **kw)  # fmt: skip


# -- the families: where the answer and the tests come from in each ------------------------------


def humaneval_x(row: Row, code: str, whole: bool, **kw: Any) -> Program | None:
    """HumanEval-X: the prompt's class (completed, or the whole answer) is the answer; the tests'
    `Main`, with the prompt's imports, the harness."""
    prompt = row["prompt"]
    expected = set(declared_types(row.get("declaration") or prompt))
    answer = code if whole else prompt + code
    return program(answer, imports(prompt) + row["test"], expected, test_code=row["test"],
                   calls=methods(row.get("declaration") or prompt), **kw)  # fmt: skip


def multiple(prompt: str, code: str, whole: bool, tests: str, **kw: Any) -> Program | None:
    """MultiPL-E: the prompt's class (`Problem`) with the answer's body, closed, is the answer;
    the tests' main (which the tests open inside that class, after closing the prompt's function)
    becomes `Main`'s, calling the answer's functions as `Problem.f(...)`. Tests that are a unit of
    their own (HumanEval-X's `public class Main`, sent as a HumanEvalDataset row) stay as they are,
    and the answer closes its class itself."""
    expected = set(declared_types(prompt))
    owner = next(iter(expected), "Problem")
    first, _, rest = tests.partition("\n")
    opened = first.strip() == "}"  # the tests close the prompt's function, then open main
    if whole:
        code = braces.drop_main(code, "java")
        if owner not in declared_types(code):
            code = open_scope(code, prompt, "class") + "\n}\n"
        # an answer cut off inside its class (the drop of its own main took its end): closed
        code += "\n}" * max(0, _depth(braces.blank(code), len(code)))
        answer = imports(prompt) + code
    else:
        answer = prompt + code + ("\n    }\n}\n" if opened else "\n")
    if opened:
        harness_text = qualify_calls(f"{imports(prompt)}public class Main {{\n{rest}", owner, set())
    else:
        harness_text = imports(prompt) + tests
    return program(answer, harness_text, expected, test_code=tests, calls=methods(prompt), **kw)


def insert(template: str, code: str, prompt: str, **kw: Any) -> Program | None:
    """A `#<INSERT>` row: a slot at the top of the tests takes the answer's compilation unit (its
    imports are the tests' too, as they are in SandboxFusion's one file); a slot inside the tests'
    class takes the members of the answer's class (or its bare methods), which become a class of
    their own whose static methods the tests call."""
    slot = template.find("#<INSERT>")
    owner = braces.enclosing_class(template, slot)
    harness_text = template.replace("#<INSERT>", "", 1)
    calls = methods(prompt) or methods(code)
    if owner is None:
        expected = set(declared_types(prompt)) or set(_IDENT.findall(prompt))
        return program(code, imports(code) + harness_text, expected, calls=calls, **kw)
    body = braces.class_body(code, owner)
    members = braces.drop_main(_without_imports(code if body is None else body), "java")
    used = set(_IDENT.findall(braces.blank(harness_text)))
    name = next((n for n in (*declared_types(code), "Problem", "Solution", "Answer")
                 if n not in used), "SandlotAnswer")  # fmt: skip
    answer = f"{imports(code)}class {name} {{\n{members}\n}}\n"
    return program(answer, imports(code) + qualify_calls(harness_text, name, set()), {name},
                   calls=calls, **kw)  # fmt: skip


def cruxeval(code: str, test: str, **kw: Any) -> Program | None:
    """CRUXEval-X: the row's function and its test make the harness (the answer is a literal in
    the test); nothing of it is a unit of its own."""
    return program(None, code + test, set(), **kw)


_JUNIT_TEST = re.compile(r"@(?:org\.junit\.jupiter\.api\.)?Test\b(?!\w)")
_JUNIT_MANY = re.compile(r"@\w*(?:ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b")


def junit_reserved(tests: list[str], expected: set[str]) -> dict[str, bytes]:
    """The file that makes the junit row's compile step refuse an answer class named like
    anything the tests use but the classes the problem asks for (the tests and the answer share
    the unnamed package: a class of the answer's would stand for an import's or java.lang's)."""
    names: set[str] = set()
    for text in tests:
        names.update(reserved(text, expected))
    names -= {t for text in tests for t in declared_types(text)}  # one test source's, another's
    return {RESERVED: "".join(f"{n}\n" for n in sorted(names)).encode()}


def junit_tests(*texts: str) -> int | None:
    """How many tests JUnit reports for these test sources: one per `@Test` method (None: some
    test runs a number of times their text does not say, a parameterized or repeated one)."""
    blanked = [braces.blank(text) for text in texts]
    if any(_JUNIT_MANY.search(b) for b in blanked):
        return None
    return sum(len(_JUNIT_TEST.findall(b)) for b in blanked)


def _without_imports(code: str) -> str:
    return _IMPORT.sub("", _PACKAGE.sub("", code))


def _one_public(code: str, name: str) -> str:
    """A file holds one public top-level type, named as the file: others lose `public` (the
    tests, in the same package, still reach them)."""
    blanked = braces.blank(code)
    spans = [m for m in re.finditer(r"(?<![\w$])public(\s+(?:final\s+|abstract\s+)*"
                                    r"(?:class|interface|enum|record)\s+([\w$]+))", blanked)
             if m.group(2) != name and _depth(blanked, m.start()) == 0]  # fmt: skip
    for m in reversed(spans):
        code = code[: m.start()] + code[m.start(1) :]
    return code


def _depth(blanked: str, at: int) -> int:
    return blanked.count("{", 0, at) - blanked.count("}", 0, at)
