"""What judging knows of each language, one row per language: how its functions are declared,
how an answer and its tests make one program (per dataset family), its guard of the seal, and how
its test framework reports failure.

Keyed by the row's name in sandlot/languages (whose row says how to compile and run it);
a language unknown here is judged with the defaults (C-like declarations, no guard: judged on
its exit). Adding a language to judging is one row here plus its tests; logic only one language
needs is a named function in splices.py, aider.py or guard_texts.py that its row references.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sandlot.judge import aider, guard_texts, splices, split_java, split_managed
from sandlot.judge.extract import Extracted
from sandlot.judge.guard_texts import MainGuard, ScriptGuard
from sandlot.judge.plans import Assembled, Program
from sandlot.judge.scripts import Joined
from sandlot.judge.scripts import bash as scripts_bash
from sandlot.judge.scripts import js as scripts_js
from sandlot.judge.scripts import lua as scripts_lua
from sandlot.judge.scripts import perl as scripts_perl
from sandlot.judge.scripts import php as scripts_php
from sandlot.judge.scripts import r as scripts_r
from sandlot.judge.scripts import racket as scripts_racket
from sandlot.judge.scripts import ruby as scripts_ruby
from sandlot.judge.splices import Row
from sandlot.judge.split import Splitter, families
from sandlot.judge.split import cpp as split_cpp
from sandlot.judge.split import d as split_d
from sandlot.judge.split import go as split_go
from sandlot.judge.split import rust as split_rust
from sandlot.languages import CPP_PRELUDE

# C-like declarations: a type (words, `::`, `<...>`, `*`, `&`, `[]`, D's `Tuple!(long, long)`,
# C#'s `(int, string)`), the name, its parameters, and no `;` after them on that line; a
# statement that calls it starts with a keyword or has `=`, `(`, `<<`... before the name.
C_DECLARATION = (
    r"^[ \t]*(?!(?:return|else|case|throw|new|delete|co_return|yield|await)\b)"
    r"(?:(?:[A-Za-z_][\w:<>,.\[\]*&?]*(?:!(?:\((?:[^()\n]|\([^()\n]*\))*\)|\w+)[\[\]*&]*)?"
    r"|\([\w<>,.\[\]? ]*\))[ \t]+)+"
    r"[*&]?{n}\s*\((?:[^;]*$|[^;{{}}]*\)[^;{{}}]*\{{)"  # (a body opening on that line)
)
# Headers HumanEval-X's C++ tests use without including them.
CPP_HEADERS = CPP_PRELUDE

# (row, answer's code, whether it is a whole solution, the guarded tests) -> the program
Splice = Callable[[Row, str, bool, str], str]
AiderBuilder = Callable[[Row, str, Extracted], Assembled]


@dataclass(frozen=True, slots=True)
class Split:
    """A compiled language's split (split_java.py, split_managed.py; the native languages' in
    split/): for each family, the program in which the answer is a compilation unit of its own
    and the harness, which owns the entry point and the seal, calls it from outside (None: these
    tests have no main to seal, or cannot be split; a text: why the answer is refused before it
    runs).

    It keeps the answer apart from its tests, as a scripting language's harness
    (`Dialect.script`) does, but it is not the same mechanism, for three reasons:

    - it takes the family's row as the family holds it (one entry per family) because the
      harness must declare what it calls of the answer, typed as the dataset declares it (a
      prompt's signature, an `#<INSERT>` table's code block): a script harness takes only the
      answer's text and the tests' text, which the family cuts as it would paste them into one
      program, because its language binds the tests' calls to the answer's names when it runs;
    - its program is two units that the executor builds apart and links once it has checked the
      answer's symbols (Program.harness, Program.apart; sandlot/executor/split.py), and the
      families' split integrity rows hold for such programs only; a script harness's run is one
      program in one process, of its language's in-process row;
    - it may decline (the family then pastes one program, sealed by the language's guard) or
      refuse the answer; a script harness always makes the run.

    A script harness is the sibling of the guard (guards.py: `join` beside `guard_end` and
    `with_start`): both seal a program whose text the family made; a split makes the program.
    """

    # (row, answer's code, whether it is a whole solution, **program fields)
    humaneval_x: Callable[..., Program | str | None]
    # (prompt, answer's code cut at the stop tokens, whole, tests, **program fields)
    multiple: Callable[..., Program | str | None]
    # (template with its #<INSERT> slot, answer's code, the row's prompt, **program fields)
    insert: Callable[..., Program | str | None]
    # (the row's code, its test with the answer in its blank, **program fields)
    cruxeval: Callable[..., Program | str | None]


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    # How a function `{n}` is declared (a call never looks like it): whole answer or body?
    declaration: str = C_DECLARATION
    # Sealing (guards.py): a row with a driver (its `harness` in the language table) is sealed
    # by the executor; else by its guard, if it has one; else the program is judged on its exit.
    driven: bool = False
    # Python's own programs (python_tests.py): the executor's Python driver seals them and can
    # split the answer from the tests; a CRUXEval answer is read by Python's parser (crux.py).
    python_driver: bool = False
    guard: ScriptGuard | MainGuard | None = None
    # A compiled language's split (Split: why it is not `script`): the answer compiled apart
    # from its tests; it replaces the family's splicing below, and seals the program itself.
    split: Split | None = None
    # A scripting language's harness (sandlot/judge/scripts/, through guards.join): (the answer's
    # text, the tests' text, as the family cut them) -> the run, in which the answer is its own
    # file (or script), loaded apart, and the tests' assertion sites are counted.
    script: Callable[[str, str], Joined] | None = None
    # What the test framework prints when a test fails though it exits 0.
    fail_markers: tuple[bytes, ...] = ()
    # HumanEval-X: the tests as they run (`hx_tests`), the program (`hx_head` + `hx_splice`).
    hx_tests: Callable[[str], str] | None = None
    hx_head: str = ""
    hx_splice: Splice = splices.hx_default
    # MultiPL-E: text replaced in prompt and tests (what sandlot runs differs from its harness);
    # a whole answer reshaped for the prompt's scope (code, prompt) -> code; a whole answer's
    # program when prelude + answer + tests is not one (prompt, code, tests) -> program.
    mp_renames: tuple[tuple[str, str], ...] = ()
    # Put before every MultiPL-E program (SandboxFusion's import helper, which answers rely on).
    mp_prelude: str = ""
    mp_whole: Callable[[str, str], str] | None = None
    mp_program: Callable[[str, str, str], str] | None = None
    # CRUXEval-X: how the row's test calls the function; `????` is the blank.
    crux_call: str | None = None
    # `#<INSERT>` slots (MBXP, HumanEvalDS...): a slot inside the test's class takes an answer's
    # class members; imports (marker, line) dropped unless the answer names the marker; what an
    # MBXP answer may not say.
    slot_members: bool = False
    # The test template as it runs (before the seal is placed in it).
    slot_template: Callable[[str], str] | None = None
    optional_imports: tuple[tuple[str, str], ...] = ()
    mbxp_forbidden: tuple[str, ...] = ()
    # Why an answer may not be put in the tests (a name it declares that stands for the guard's).
    refuse_answer: Callable[[str], str | None] | None = None
    # aider polyglot: its exercise's program, and a host file it needs (path, Debian package).
    aider: AiderBuilder | None = None
    aider_needs: tuple[str, str] | None = None


# A script's top-level names are in scope in all of it, before and after the answer's code:
# the guard's locals are drawn per submission, and the answer may declare none of the names the
# guard calls (guard_texts.shadowing).
_KOTLIN_SCRIPT_GUARD = ScriptGuard(
    'val {v}: () -> Unit = run {{ val {v}f = java.io.File("{seal}"); val {v}s = {v}f.readText(); '
    '{v}f.delete(); {{ -> print({v}s + {v}s + "\\n"); System.out.flush() }} }}\n',
    "{v}()",
    place_start=guard_texts.kotlin_script_start,
)


def _managed(language: split_managed.Managed) -> Split:
    """C#'s or Scala's split (split_managed.py): MultiPL-E's and the `#<INSERT>` slots inside
    the tests' class; HumanEval-X has neither language, CRUXEval-X's answer is a value."""
    return Split(_unsplit, partial(split_managed.multiple, language),
                 partial(split_managed.insert, language), _unsplit)  # fmt: skip


def _unsplit(*args: object, **kw: object) -> None:
    return None


def _native(
    splitter: Splitter, language: str, fences: tuple[str, ...], hx_head: str = "",
    multiple_head: str = "",
) -> Split:  # fmt: skip
    """A native language's split (sandlot/judge/split/): its splitter, handed each family's
    submission (split/families.py); `fences` name its code blocks in a table's prompt."""
    return Split(
        partial(families.humaneval_x, splitter, language, hx_head),
        partial(families.multiple, splitter, language, multiple_head),
        partial(families.insert, splitter, language, fences),
        families.cruxeval,
    )


_JS_DECLARATION = r"\bfunction\s*\*?\s*{n}\b|\b{n}\s*=(?!=)"
_GO_DECLARATION = r"\bfunc\s+(\([^)]*\)\s*)?{n}\b"

DIALECTS: dict[str, Dialect] = {d.name: d for d in (
    Dialect("python", declaration=r"^\s*(async\s+)?def\s+{n}\b", driven=True,
            python_driver=True, crux_call="candidate(????)", mbxp_forbidden=("exit(0)",),
            aider=aider.python),
    Dialect("nodejs", declaration=_JS_DECLARATION + r"|^\s*(async\s+)?{n}\s*\([^)]*\)\s*\{{",
            driven=True, script=scripts_js.join, crux_call="candidate(????)",
            aider=aider.javascript),
    Dialect("typescript", declaration=_JS_DECLARATION, driven=True,
            script=scripts_js.join_typescript, crux_call="candidate(????)"),
    Dialect("cpp", guard=MainGuard("sandlot_seal::end();", guard_texts.cpp_start),
            hx_head=CPP_HEADERS, hx_splice=splices.hx_cpp, crux_call="candidate(????)",
            mbxp_forbidden=("exit(0)",), aider=aider.cpp,
            split=_native(split_cpp.split, "cpp", ("cpp", "c++"), CPP_HEADERS)),
    Dialect("java", split=Split(split_java.humaneval_x, split_java.multiple, split_java.insert,
                                split_java.cruxeval),
            hx_splice=splices.hx_whole,
            # sandlot runs class Main; MultiPL-E's harness names it Problem. Its prompts import
            # org.javatuples (Pair, Triplet...): the java row has it.
            mp_renames=(("class Problem", "class Main"),), mp_whole=splices.java_open_class,
            crux_call="f(????)", slot_members=True,
            optional_imports=(("javatuples", "import org.javatuples.*;\n"),),
            aider=aider.java,
            # What the exercises need beyond their language row (from its apt packages).
            aider_needs=("/usr/share/java/assertj-core.jar", "libassertj-core-java")),
    Dialect("csharp", guard=MainGuard("global::SandlotSeal.End();", guard_texts.csharp_start,
                                      sites=split_managed.CSHARP_SITES),
            mp_whole=splices.csharp_open_class, crux_call="F(????)", slot_members=True,
            split=_managed(split_managed.CSHARP)),
    Dialect("scala", declaration=r"\bdef\s+{n}\b",
            guard=MainGuard("_root_.sandlot.SandlotSeal.end()", guard_texts.scala_start,
                            sites=split_managed.SCALA_SITES),
            mp_whole=splices.scala_open_object, crux_call="f(????)",
            slot_template=splices.scala_app_as_main, split=_managed(split_managed.SCALA)),
    Dialect("rust", declaration=r"\bfn\s+{n}\b",
            guard=MainGuard("sandlot_seal_end(&sandlot_seal);", guard_texts.rust_start),
            hx_tests=splices.rust_tests_as_main, hx_splice=splices.hx_rust,
            crux_call="candidate(????)", aider=aider.rust,
            split=_native(split_rust.split, "rust", ("rust", "rs"))),
    Dialect("go", declaration=_GO_DECLARATION, aider=aider.go),
    Dialect("go_test", declaration=_GO_DECLARATION, hx_splice=splices.hx_go,
            mp_program=splices.go_whole_multiple, crux_call="candidate(????)",
            split=_native(split_go.split, "go_test", ("go", "go_test"))),
    Dialect("kotlin", declaration=r"\bfun\s+{n}\b"),
    Dialect("D_ut", crux_call="candidate(????)",
            mp_prelude=split_d.PRELUDE,
            split=_native(split_d.split, "D_ut", ("d", "D_ut"), multiple_head=split_d.PRELUDE)),
    Dialect("julia", crux_call="candidate(????)"),
    Dialect("swift", crux_call="f(????)"),
    Dialect("php", declaration=r"\bfunction\s+&?{n}\b", script=scripts_php.join,
            mp_whole=splices.php_untagged, crux_call="candidate(????)"),
    Dialect("perl", declaration=r"\bsub\s+{n}\b", script=scripts_perl.join,
            crux_call="$candidate->(????)"),
    Dialect("R", declaration=r"\b{n}\s*(<-|=)\s*function\b", script=scripts_r.join,
            crux_call="candidate(????)"),
    Dialect("bash", declaration=r"^\s*(function\s+)?{n}\s*\(\s*\)|^\s*function\s+{n}\b",
            script=scripts_bash.join, crux_call="$(candidate ????)"),
    Dialect("racket", declaration=r"\(define\s+\(\s*{n}\b", script=scripts_racket.join,
            fail_markers=(b"FAILURE",),  # rackunit reports, exits 0
            crux_call="(candidate ????)"),
    Dialect("kotlin_script", guard=_KOTLIN_SCRIPT_GUARD,
            refuse_answer=guard_texts.shadowing(_KOTLIN_SCRIPT_GUARD)),
    Dialect("ruby", declaration=r"\bdef\s+(self\.)?{n}\b", script=scripts_ruby.join,
            crux_call="candidate.call(????)"),
    Dialect("lua", declaration=r"\bfunction\s+([\w.:]+[.:])?{n}\b|\b{n}\s*=(?!=)",
            script=scripts_lua.join, crux_call="candidate(????)"),
)}  # fmt: skip


def dialect(language: str) -> Dialect:
    """The row of `language` (a language table row's name), or the defaults."""
    return DIALECTS.get(language) or Dialect(language)
