"""How far each dataset family's verdict can be trusted: its integrity class, one row per language
and, where a family or dataset judges a language differently, one of its own, as data that
/v1/datasets, the docs' table and `strict` read.

A verdict is a reward, and a policy tuned for reward searches for the ways to fake it. What an
answer can change about how it is judged is decided by how its family assembles the program, so
each (family, language) says which of three classes it is in:

- `split`: the answer is its own compilation unit, module or class, compiled (or loaded) apart
  from the tests; the harness owns the entry point, the test runner, the seal and every name
  they use, and the seal attests how many tests passed, a count the judge checks against the one
  it reads from the dataset's test text;
- `in-process`: sealed the same way, but the answer shares the tests' process and scope (a
  scripting language, or a driver that runs both): what reaches into that process (reflection,
  frames, its own memory) is out of reach of any guard, and `strict` narrows it where it can;
- `output-checked`: the answer is the program's output for each case, compared outside the box
  with an expected output the box never holds (stdin/stdout problems): nothing to forge but the
  output itself;
- `unsealed`: judged on the exit status or the output alone; `strict` refuses it unless the
  request opts in (`config.extra.allow_unsealed`).

The rows are layers of `ByLanguage`, looked up most specific first: a dataset's own
(DatasetSpec.integrity, datasets.py), its family's (Family.integrity, families.py), the
language's own (LANGUAGE_ROWS, here); each by the language's name, then "*" (any language). The
texts of every row live here; a family or dataset holds the rows that are its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Level(StrEnum):
    SPLIT = "split"
    OUTPUT = "output-checked"
    IN_PROCESS = "in-process"
    UNSEALED = "unsealed"


# Weakest first: a dataset of several languages is as strong as its weakest.
ORDER = (Level.UNSEALED, Level.IN_PROCESS, Level.OUTPUT, Level.SPLIT)


@dataclass(frozen=True, slots=True)
class Integrity:
    level: Level
    sealed_by: str  # what writes the seal, and where
    attests: str  # what a valid seal says
    split: str  # how the answer is kept apart from the harness ("" for none)
    out_of_reach: str  # what no assembly here can stop
    tests: str  # the tests that show it (a file, or file::test)
    # whether the verdict rests on a seal the job must carry (a job of a sealed row that has no
    # place for it is unsealed); False for verdicts read outside the box
    by_seal: bool = True

    def as_dict(self) -> dict[str, str]:
        return {
            "integrity": self.level.value,
            "sealed_by": self.sealed_by,
            "attests": self.attests,
            "split": self.split,
            "out_of_reach": self.out_of_reach,
        }


@dataclass(frozen=True, slots=True, eq=False)
class ByLanguage:
    """Classes by language name ("*": any language): one layer of the lookup. `apart` holds the
    rows that hold for programs built apart (Program.apart) only: a problem whose tests its
    language's splitter cannot split is one program, judged by the layers below."""

    rows: Mapping[str, Integrity] = field(default_factory=dict)
    apart: Mapping[str, Integrity] = field(default_factory=dict)

    def get(self, language: str, apart: bool = True) -> Integrity | None:
        if apart and language in self.apart:
            return self.apart[language]
        return self.rows.get(language) or self.rows.get("*")

    def items(self) -> Iterator[tuple[str, Integrity]]:
        """Every row, as the docs' table lists them."""
        yield from self.rows.items()
        yield from self.apart.items()

    @property
    def whole(self) -> Integrity | None:
        """The class of every job whatever its language: a row for any language that rests on no
        seal of the job's (stdin/stdout problems), or None."""
        row = self.rows.get("*")
        return row if row is not None and not row.by_seal else None


NONE = ByLanguage()  # a family or dataset with no rows of its own


UNSEALED = Integrity(
    Level.UNSEALED,
    sealed_by="nothing: the verdict is the program's exit status (or its output)",
    attests="",
    split="",
    out_of_reach="an exit with success before the tests ran, and anything the program prints",
    tests="tests/judge/test_integrity_table.py",
)

OUTPUT = Integrity(
    Level.OUTPUT,
    sealed_by="no seal: each case's stdout is compared outside the box",
    attests="",
    split="the expected output never enters the box",
    out_of_reach="nothing known: the program must print the right output for inputs it sees once",
    tests="tests/judge/test_integrity_table.py",
    by_seal=False,
)
# A row whose tests have no place for the seal (no main to end, say): judged on its exit.
NO_PLACE = Integrity(
    Level.UNSEALED,
    sealed_by="nothing: this problem's tests have no place for the seal (no main to end)",
    attests="",
    split="",
    out_of_reach=UNSEALED.out_of_reach,
    tests="tests/judge/test_integrity_table.py",
)

# Python, where the problem's tests only call the answer's functions (unless the request sends
# config.extra.split false).
PYTHON_SPLIT = Integrity(
    Level.SPLIT,
    sealed_by="the Python driver, in a process the answer never ran in, after the tests' last "
    "statement",
    attests="the tests ran to their end",
    split="the answer runs in a process of its own, forked before the secret or the tests were "
    "read; the tests call its functions through a socket, plain data both ways (what the "
    "answer returns is compared as data of built-in types), and the tests' process is not the "
    "answer's to read. The default wherever the tests only call the answer; "
    "config.extra.split false runs it in the tests' process",
    out_of_reach="nothing known (problems whose tests build the answer's own objects, MBPP 367 "
    "and 927, stay in-process)",
    tests="tests/security/test_reward_hacks_python.py::"
    "test_python_trace_jump_over_the_asserts_is_stopped_by_the_split",
)


_IN_PROCESS_REACH = (
    "the answer runs in the tests' process: it can reach the seal's secret through reflection or "
    "its own memory, redefine what the tests call, and make the tests' own frame skip its "
    "asserts (a trace function that moves f_lineno)"
)


_SCRIPT_LIMITS = "tests/security/test_reward_hacks_script.py::test_script_limit_is_shown"


def _script(sealed_by: str, attests: str, split: str, out_of_reach: str) -> Integrity:
    return Integrity(Level.IN_PROCESS, sealed_by=sealed_by, attests=attests, split=split,
                     out_of_reach=out_of_reach, tests=_SCRIPT_LIMITS)  # fmt: skip


_DRAWN = "the harness, which reads the secret first, under a name drawn per submission; "
# The scripting languages' harnesses (sandlot/judge/scripts/): what each one does and leaves.
SCRIPTS: dict[str, Integrity] = {
    "php": _script(
        _DRAWN + "it writes the seal after the tests' last statement",
        "passed=N for the N `if (...) { throw ... }` assertions of the tests' text, none failed",
        "the answer is a file of its own, required after the secret was read: its text (a "
        "heredoc, a comment, `?>`, __halt_compiler) ends with it; PHP cannot redeclare the "
        "tests' functions",
        "reflection: get_declared_classes and the Reflection API find the harness's class",
    ),
    "perl": _script(
        _DRAWN + "a lexical of its own file, which no other file can name",
        "passed=N for the N comparisons (eq_deeply, Compare) of the tests' text that held, "
        "none failed",
        "the answer is a file of its own, compiled by `do` after the secret was read: its "
        "BEGIN blocks, CORE::GLOBAL overrides, __END__ and POD stay in it; the tests call the "
        "comparisons through copies taken before it ran",
        "the comparison libraries' own subroutines (Test::Deep::cmp_details...), which the answer "
        "can redefine; reflection (B, the debugger)",
    ),
    "ruby": _script(
        _DRAWN + "a global (a test method reaches nothing else)",
        "passed=N for the N assertions (assert_equal, an `if` that raises) of the tests' text "
        "that held, none failed",
        "the answer is a file of its own, loaded after the secret was read (__END__, =begin, "
        "at_exit and test-unit's runner patched change nothing the harness checks: its own "
        "`expected == actual`)",
        "reflection: global_variables finds the harness's object, whose checks and end the "
        "answer can call; patching the core classes its checks and seal use (Hash, IO#write)",
    ),
    "R": _script(
        _DRAWN + "a closure over base, removed from the global environment before the tests run",
        "passed=N for the N stopifnot checks of the tests' text that held, none failed",
        "the answer is a file of its own, sourced after the secret was read; the tests run in "
        "an environment over base, with the answer's function bound in it: no redefinition of "
        "stopifnot, isTRUE, all.equal or `{` in the global environment reaches them",
        "reflection: the environment of the harness's closure (found with ls(all.names = "
        "TRUE)) holds the secret; sys.frames, parent.frame, unlockBinding",
    ),
    "lua": _script(
        _DRAWN + "a local of the chunk; luaunit's runner reports to it",
        "passed=N for the N lu.assertEquals of the tests' text that held, none failed",
        "no split (MultiPL-E's functions are locals of the tests' chunk): Lua runs nothing while "
        "it compiles, and the assertions go to the harness's own luaunit, loaded before the "
        "answer over a copy of the globals",
        "the debug library (debug.getlocal, debug.setupvalue reach the harness)",
    ),
    "bash": _script(
        _DRAWN + "its seal written through built-ins no function can stand for",
        "passed=N for the N `[[ ... ]]` tests of the tests' text that held, none failed",
        "the answer is a file of its own, sourced inside one `{ ... }` group parsed before it "
        "runs (aliases, heredocs, quotes stay in it); then the answer's functions named like "
        "the built-ins the tests call, its traps and extdebug are removed (in POSIX mode)",
        "the harness's variable holds the secret from before the answer is sourced: "
        "${!sandlot_*} names it and the answer can write the seal; a DEBUG trap reads each "
        "command ($BASH_COMMAND) before it runs",
    ),
    "racket": _script(
        "a launcher module that reads the secret before the answer's module is compiled",
        "passed=N for the N rackunit checks of the tests' text that held (each raises when "
        "it fails), none failed",
        "the answer is a module of its own, compiled and instantiated in a namespace of its "
        "own after the secret was read; the tests' namespace has racket and, from the answer, "
        "only the function they test: no macro, #%app or `#;` of the answer's reaches them",
        "the process's own memory (ffi/unsafe); no test shows an attack through it",
    ),
}

# C# and Scala (split_managed.py): what the seal of their split attests, and what is out of reach.
_MANAGED_ATTESTS = (
    "how many of the tests' assertion sites ran and held (each {asserted}, and each `if` whose "
    "branch throws, rewritten to report to the seal), a number the judge counts in the tests' "
    "text; none where a `throw` stands elsewhere (then: main ran to its end)"
)
_CS_ASSERTED = "Debug.Assert, and each `if` whose branch throws,"
_CLR_REACH = (
    "the answer runs in the harness's process: reflection reaches the seal's marks of the sites "
    "(not the secret, a local of Main), Marshal or /proc/self/mem its memory; a value it returns "
    "is compared with its own operators and Equals (a whole answer that changes the declared "
    "return type to a type of its own can make `==` lie)"
)
_SCALA_REACH = (
    "the answer runs in the harness's JVM: reflection reaches the seal's marks of the sites (not "
    "the secret, a local of main), Unsafe or /proc/self/mem its memory; a value it returns is "
    "compared with its own `==`/equals (a whole answer that changes the declared return type to "
    "a type of its own can make it lie)"
)
# What the split's vetting of values (returns.py) leaves out of reach, in each split JVM/.NET row.
_VETTED = (
    "a value the tests use from a call of the answer's functions is vetted before they compare "
    "it (sandlot/judge/returns.py): every object reachable in it must be of a short list of the "
    "platform's own classes, exact (boxed numbers, strings, the standard lists, sets, maps, "
    "tuples, options and arrays; a sorted one only in its natural order), else the run ends "
    "unsealed, so no equals, Equals or == of the answer's decides a comparison; what reaches "
    "the tests by another path (an argument the answer changes, an exception it throws, a "
    "static field) is not vetted, and no shipped test compares one"
)
_CLR_SPLIT_REACH = (
    "the answer runs in the harness's process: reflection reaches the seal's marks of the sites "
    "(not the secret, a local of Main), Marshal or /proc/self/mem its memory; " + _VETTED
)
_SCALA_SPLIT_REACH = (
    "the answer runs in the harness's JVM: reflection reaches the seal's marks of the sites (not "
    "the secret, a local of main), Unsafe or /proc/self/mem its memory; " + _VETTED
)
CSHARP_SPLIT = Integrity(
    Level.SPLIT,
    sealed_by="the harness's Main (its own source, main.exe): its first statement reads the "
    "secret into a local, its last writes the seal",
    attests=_MANAGED_ATTESTS.format(asserted="Debug.Assert, Trace.Assert"),
    split="the answer is compiled alone into an assembly of its own (sandlot_answer.dll), which "
    "the harness references under an extern alias only: no type of the answer's (a Main, a "
    "Debug, a SandlotSeal, a `namespace System`) is in the harness's global namespace; the "
    "tests call the answer's functions as SandlotAnswer::Problem.F(...), and its internals are "
    "visible to them (InternalsVisibleTo), as in one file",
    out_of_reach=_CLR_SPLIT_REACH,
    tests="tests/security/test_reward_hacks_jvm.py",
)
SCALA_SPLIT = Integrity(
    Level.SPLIT,
    sealed_by="the harness's main (its own source file, main.scala): its first statement reads "
    "the secret into a local, its last writes the seal",
    attests=_MANAGED_ATTESTS.format(asserted="assert"),
    split="the answer is a source file of its own in a package of its own (`package "
    "sandlotanswer`; its own package clauses dropped), compiled in the same scalac run as the "
    "harness, which never imports it: the tests call the answer's functions as "
    "_root_.sandlotanswer.Problem.f(...), and nothing the answer declares (an object Main, an "
    "`assert`, an object List, a package `sandlot`) is in their scope",
    out_of_reach=_SCALA_SPLIT_REACH,
    tests="tests/security/test_reward_hacks_jvm.py",
)
_BATTERY = "tests/security/test_reward_hacks_native.py"
# The same, for a program whose tests share the answer's unit, module or package.
_SHARED_MEMORY = "its code can read and write the process's memory (the seal's secret among it)"
_MEMORY = (
    "the answer's code runs in the harness's process: it can read and write that process's "
    "memory (the masked secret, the sites' marks, the stack the tests return through) by "
    "pointers or /proc/self/mem"
)
# The compiled languages whose answers are built apart (sandlot/judge/split/), in the families
# that judge them with the dataset's tests (HumanEval-X, MultiPL-E, the #<INSERT> tables).
SPLIT_NATIVE = {
    "cpp": Integrity(
        Level.SPLIT,
        sealed_by="the harness's own main (main.cpp), which calls the tests' main as a function "
        "and seals when it returned 0; the secret is read by a pre-init function, kept masked",
        attests="how many distinct assertion sites (assert, if ... throw) passed, against the "
        "count the judge takes from the tests' text",
        split="the answer is compiled alone (answer.cpp) and linked after a check of its "
        "symbols: no main, no symbol of the harness's or of libc/libstdc++/libgcc, no use of "
        "the harness's, no .preinit_array or ifunc; the harness declares it from the dataset's "
        "prompt (or the answer's signature, in a closed grammar of type names)",
        out_of_reach=_MEMORY,
        tests=_BATTERY,
    ),
    "rust": Integrity(
        Level.SPLIT,
        sealed_by="the harness crate's main, after the tests' (the secret read first: Rust "
        "runs nothing before main and the answer may have no constructor), kept masked",
        attests="how many distinct assert!/assert_eq!/assert_ne! sites passed, against the "
        "count the judge takes from the tests' text",
        split="the answer is a library crate of its own; the harness binds each function "
        "the dataset declares as a constant of its type (no glob import, no #[macro_use]); "
        "the answer's symbols stay in its crate's namespace (no #[no_mangle], #[export_name]; "
        "other crates' generics it instantiates excepted, when the harness neither defines nor "
        "uses them) and it has no .init_array or .preinit_array",
        out_of_reach=_MEMORY + " (in unsafe code)",
        tests=_BATTERY,
    ),
    "D_ut": Integrity(
        Level.SPLIT,
        sealed_by="the harness module's own unit tester, installed after the answer's module "
        "constructors, once its unittests all passed; the secret is read by a pre-init "
        "function, kept masked",
        attests="how many distinct assert sites of the harness's unittests passed, against "
        "the count the judge takes from the tests' text",
        split="the answer is a module of its own, compiled without -funittest (its unittests "
        "never run) and imported statically; the harness binds each function the dataset "
        "declares as a typed function pointer; symbols checked as C++'s (no main, no "
        "druntime/phobos or libc symbol, no use of the harness's)",
        out_of_reach=_MEMORY,
        tests=_BATTERY,
    ),
    "go_test": Integrity(
        Level.SPLIT,
        sealed_by="the harness's TestMain, through a seal package that the answer's package "
        "imports first (Go initializes it, and it reads the secret, before any of the "
        "answer's code); kept masked",
        attests="how many of the tests' Test functions ran to their end without failing, "
        "against the count the judge takes from the tests' text",
        split="the answer is a package of its own (standard-library imports only: no unsafe, "
        "so no //go:linkname); its TestMain, Test functions and init are its package's, which "
        "go test does not run as tests; the harness binds each function the dataset declares "
        "as a typed variable",
        out_of_reach="the answer's code runs in the test binary's process: it can read its "
        "memory through /proc/self/mem (the masked secret)",
        tests=_BATTERY,
    ),
}
# C# and Scala: MultiPL-E's and the `#<INSERT>` tables' programs (split_managed.py).
SPLIT_MANAGED = {"csharp": CSHARP_SPLIT, "scala": SCALA_SPLIT}

# What a language adds to the split of its JavaScript driver's row.
_SCRIPT_SPLIT_NOTE = {"typescript": " (TypeScript: the tests are transpiled apart)"}

# Each language's own class: its guard's, in every family whose row does not say otherwise;
# "*", the last row, is the default of a language that has none.
_LANGUAGES: dict[str, Integrity] = {
    "python": Integrity(
        Level.IN_PROCESS,
        sealed_by="the Python driver, after the tests' last statement",
        attests="the tests ran to their end",
        split="the answer is compiled on its own, before the tests; the tests are in memory only "
        "(a problem whose tests build the answer's own objects, or a request with "
        "config.extra.split false; a problem whose tests only call the answer is split, as each "
        "result's extra.integrity says)",
        out_of_reach=_IN_PROCESS_REACH,
        tests="tests/security/test_integrity.py",
    ),
    **{
        lang: Integrity(
            Level.IN_PROCESS,
            sealed_by="the JavaScript driver, after the tests' last statement; each assertion "
            "site of the tests' text (an assert call, console.assert, an `if` that throws) reports "
            "to it when it held",
            attests="passed=N for the N assertion sites of the tests' text, none failed (a "
            "program without tests: that it ran to its end)",
            split="the answer runs as a script of its own before the tests (one left open does "
            "not parse), which run as a function's body made before the answer ran: their "
            "declarations are its locals, their require gives frozen copies of assert and lodash, "
            "their console.assert throws" + _SCRIPT_SPLIT_NOTE.get(lang, ""),
            out_of_reach="the answer shares the tests' process: reflection into it (a test "
            "function's source through Function.prototype.caller, the inspector), values whose "
            "comparison lies (a Proxy; strict refuses them on /run_code), built-ins the comparison "
            "itself uses",
            tests=_SCRIPT_LIMITS,
        )
        for lang in ("nodejs", "typescript")
    },
    **{
        lang: Integrity(
            Level.UNSEALED,
            sealed_by="statements in the program's text: the secret read before any code under "
            "test runs, the seal written at the end of the tests' main",
            attests="the tests' main ran to its end",
            split="none: the answer's text is pasted into the tests' program (an `#<INSERT>` row "
            "whose slot lies in the tests' main, sent in provided_data; every shipped row of "
            f"{name} is split)",
            out_of_reach=f"the answer shares the tests' unit: {reach}",
            tests="tests/security/test_reward_hacks_native.py::"
            "test_one_program_rows_are_unsealed_and_refused_under_strict",
        )
        for lang, name, reach in (
            (
                "cpp",
                "C++",
                "its macros rename or empty the tests' assertions (`#define assert`), "
                "and it may define the runtime's names (an assertion handler, `abort`) or read the "
                "seal's secret through its symbol",
            ),
            (
                "rust",
                "Rust",
                "a `macro_rules!` of its own shadows the tests' assert macros for the "
                "rest of main, and the seal's functions and secret are in its scope",
            ),
        )
    },
    **{
        lang: Integrity(
            Level.IN_PROCESS,
            sealed_by="statements in the program's text, naming the seal from the root "
            f"({root}): the secret read before any code under test runs, the seal written at "
            "the end of the tests' main",
            attests="how many of the tests' assertion sites ran and held: each "
            f"{asserted} rewritten to the seal's own check, so that nothing the answer declares "
            "or changes (a trace listener, a member of the same name) stands for it",
            split="",
            out_of_reach=f"the answer shares the tests' {scope}: a member it declares can "
            f"stand for a name the tests use unqualified; and {reach}",
            tests="tests/security/test_reward_hacks_jvm.py",
        )
        for lang, root, asserted, scope, reach in (
            ("csharp", "global::", _CS_ASSERTED, "class", _CLR_REACH),
            ("scala", "_root_.sandlot", "assert", "object", _SCALA_REACH),
        )
    },
    "java": Integrity(
        Level.SPLIT,
        sealed_by="the harness's main (class Main, its own source file): its first statement "
        "reads the secret into a local, its last writes the seal",
        attests="how many of the tests' assertion sites ran and held (each `assert`, and each "
        "`if` whose branch throws, rewritten to report to the seal), a number the judge counts "
        "in the tests' text; none where a `throw` stands elsewhere (then: main ran to its end)",
        split="the answer's classes are a compilation unit of their own "
        "(.sandlot_answer/<Class>.java), compiled in the same javac run as the harness, which "
        "calls them from outside; an answer class named like anything the harness uses (a JDK "
        "class, the package `java`, Main, the seal's class) is refused, as javac's output shows",
        out_of_reach="the answer runs in the harness's JVM: Unsafe, /proc/self/mem or the "
        "answer's own threads reach what the harness holds; " + _VETTED,
        tests="tests/security/test_reward_hacks_jvm.py",
    ),
    "kotlin_script": Integrity(
        Level.IN_PROCESS,
        sealed_by="a closure under a name drawn per submission, read by the script's first "
        "statement after its imports, called after the tests' last statement",
        attests="the tests ran to their end",
        split="",
        out_of_reach=_IN_PROCESS_REACH + "; an answer that declares or imports, at the script's "
        "top level, a name the guard calls (`java`, `print`, `System`...) is refused",
        tests="tests/security/test_reward_hacks_jvm.py",
    ),
    **SCRIPTS,
    **{
        lang: Integrity(
            Level.UNSEALED,
            sealed_by="nothing: the verdict is the program's exit status; no harness was built "
            f"for {lang}, which has no Debian 12 package (sandlot setup does not install it)",
            attests="",
            split="",
            out_of_reach=UNSEALED.out_of_reach,
            tests="tests/judge/test_integrity_table.py",
        )
        for lang in ("julia", "swift")
    },
    **{
        lang: Integrity(
            Level.IN_PROCESS,
            sealed_by="the test framework's own hook, once it reported every test passed",
            attests="the framework's counts of passed, failed and skipped tests",
            split="",
            out_of_reach=reach,
            tests="tests/security/test_integrity.py",
        )
        for lang, reach in (
            ("pytest", _IN_PROCESS_REACH),
            ("jest", _IN_PROCESS_REACH),
            # No shipped row of these comes here (the splits take them: SPLIT_NATIVE); a row
            # sent in provided_data whose tests no splitter takes does.
            (
                "go_test",
                "the answer is in the tests' package: its init and TestMain run before "
                "(or instead of) the tests, and its names are theirs; and " + _SHARED_MEMORY,
            ),
            (
                "catch2",
                "the answer shares the tests' unit: its macros rename Catch's and the "
                "tests' names, its overloads and specializations reach their comparisons; and "
                + _SHARED_MEMORY,
            ),
            (
                "D_ut",
                "the answer is in the tests' module: its unittest blocks run with theirs, it "
                "may install its own module unit tester, and its overloads are theirs; and "
                + _SHARED_MEMORY,
            ),
        )
    },
    "junit": Integrity(
        Level.IN_PROCESS,
        sealed_by="JUnit's own listener, once the platform reported every test passed",
        attests="JUnit's counts, where passed must equal the `@Test` methods of the row's test "
        "sources (the judge counts them; none claimed for parameterized or repeated tests), none "
        "failed or skipped",
        split="the answer's classes are their own source files; an answer class named like "
        "anything the tests use (an import's, java.lang's) is refused, as javac's output shows",
        out_of_reach=_IN_PROCESS_REACH,
        tests="tests/security/test_reward_hacks_jvm.py",
    ),
    "*": UNSEALED,
}
LANGUAGE_ROWS = ByLanguage(_LANGUAGES)

# -- the families' and datasets' rows, where they differ from their languages' own: each family's
# row (families.py: Family.integrity) and dataset's (datasets.py: DatasetSpec.integrity) says
# which of these hold for which of its languages.
AIDER_RUST = Integrity(
    Level.SPLIT,
    sealed_by="the harness crate's main, which runs every test function of the exercise "
    "(the ignored ones too) and seals when all passed",
    attests="how many test functions passed (a #[should_panic] one when it panicked), "
    "against the count of #[test] functions in the exercise's tests",
    split="the solution is a crate of its own (symbols in its namespace, no constructor "
    "section); each test file is a module of the harness that keeps its `use <crate>::*` "
    "beside std's prelude and macros, so that the crate shadows none of them",
    out_of_reach=_MEMORY + " (in unsafe code)",
    tests=_BATTERY,
)
AIDER_GO_TEST = Integrity(
    Level.SPLIT,
    sealed_by=SPLIT_NATIVE["go_test"].sealed_by,
    attests=SPLIT_NATIVE["go_test"].attests,
    split="the solution is a package of its own (standard-library imports only), which the "
    "exercise's test files import with a dot: they call its exported API as before, and "
    "nothing of it can stand in for theirs",
    out_of_reach=SPLIT_NATIVE["go_test"].out_of_reach,
    tests=_BATTERY,
)
AIDER_CATCH2 = Integrity(
    Level.IN_PROCESS,
    sealed_by="Catch's listener (its own unit), once Catch reported every test case passed",
    attests="how many test cases passed, against the count of TEST_CASEs in the tests",
    split="the solution's .cpp is a unit of its own; its header, which the tests include, "
    "may define no macro the tests or Catch name",
    out_of_reach="the exercise's tests include the solution's header, which shares their "
    "unit: what it declares (operators, overloads, specializations) reaches their "
    "comparisons; and " + _MEMORY,
    tests=_BATTERY,
)
BIGCODEBENCH_PYTHON = Integrity(
    Level.IN_PROCESS,
    sealed_by="the Python driver runs the tests' TestCase classes itself, with the unittest "
    "it imported before the answer ran: no load_tests, runner or module of the answer's is "
    "asked",
    attests="passed=N for the N test methods in the tests' text, none failed or skipped",
    split="the answer is compiled on its own, before the tests; the tests are in memory only",
    out_of_reach=_IN_PROCESS_REACH + " (unittest's own classes and assertions among it)",
    tests="tests/security/test_reward_hacks_python.py::test_unittest_suite_hack_is_rejected",
)
INSERT_PYTHON = Integrity(
    Level.IN_PROCESS,
    sealed_by="the Python driver, after the tests' last statement; a row's unittest classes "
    "(and the test module it loads, read into memory) are run by the driver itself",
    attests="the tests ran to their end; for unittest rows, passed=N for their N test methods",
    split="the answer is compiled on its own, before the tests; the tests are in memory only",
    out_of_reach=_IN_PROCESS_REACH,
    tests="tests/security/test_reward_hacks_python.py::test_unittest_suite_hack_is_rejected",
)
NCB_PYTEST = Integrity(
    Level.IN_PROCESS,
    sealed_by="sandlot's pytest plugin, loaded before any test module, once pytest reported "
    "every test passed",
    attests="passed=N for the N tests pytest collects from the tests' text (a test the answer "
    "brings along changes N), none failed or skipped",
    split="the answer is a module of its own (solution.py) that the tests import",
    out_of_reach=_IN_PROCESS_REACH + " (pytest's own internals among it)",
    tests="tests/security/test_reward_hacks_python.py::test_ncb_pytest_hack_is_rejected",
)
AIDER_JEST = Integrity(
    Level.IN_PROCESS,
    sealed_by="sandlot's jest reporter, loaded before any test file, once jest reported "
    "every test passed",
    attests="passed=N for the N tests (`test(...)`, `it(...)`) of the exercise's spec, none "
    "failed or skipped",
    split="the answer is the exercise's module, which the spec imports",
    out_of_reach=_IN_PROCESS_REACH + " (jest's globals among it: an answer that replaces "
    "`expect` when the spec imports it passes)",
    tests="tests/security/test_reward_hacks_script.py::"
    "test_jest_globals_replaced_by_the_answer_are_beyond_a_guard",
)
AIDER_PYTEST = Integrity(
    Level.IN_PROCESS,
    sealed_by="sandlot's pytest plugin, once pytest reported every test passed",
    attests="passed=N for the N tests of the exercise's test file, none failed or skipped",
    split="the answer is the exercise's module, which the test file imports",
    out_of_reach=_IN_PROCESS_REACH + " (pytest's own internals among it)",
    tests="tests/security/test_integrity.py",
)
CRUXEVAL = Integrity(
    Level.SPLIT,
    sealed_by="the language's seal (Python's driver, or the guard of CRUXEval-X's language)",
    attests="the test ran to its end",
    split="the answer is data: parsed (Python) or scanned as a literal of its language, and "
    "written into the test anew; no code of the answer's runs (Python input-mode lambdas "
    "hold only comparisons and methods of their own parameters)",
    out_of_reach="a row whose test ignores the answer (CRUXEval-X perl_0, as in SandboxFusion)",
    tests="tests/security/test_reward_hacks_python.py",
)
VERILOG = Integrity(
    Level.SPLIT,
    sealed_by='no seal: the testbench\'s one summary line ("Mismatches: 0 in N samples", '
    "N > 0) is the verdict",
    attests="",
    split="the answer is one module whose only channel to the testbench is its ports: "
    "system tasks (but pure functions such as $bits), hierarchical names, force, defparam, "
    "compiler directives and the testbench's own modules are refused before it runs",
    out_of_reach="nothing known",
    tests="tests/security/test_reward_hacks_python.py::"
    "test_verilog_answer_reaching_past_its_ports_is_refused",
    by_seal=False,
)
REPOBENCH = Integrity(
    Level.OUTPUT,
    sealed_by="no seal: the answer's first line of code is compared token by token with the "
    "row's next line, outside the box",
    attests="",
    split="nothing of the answer runs",
    out_of_reach="nothing known",
    tests="tests/judge/test_judge_datasets.py",
    by_seal=False,
)


def lookup(language: str, *layers: ByLanguage, apart: bool = True) -> Integrity:
    """The row for a language, most specific layer first (a dataset's, then its family's), then
    the language's own; `apart`: whether the program was built apart (a row of `apart` holds
    for such programs only)."""
    for layer in (*layers, LANGUAGE_ROWS):
        row = layer.get(language, apart=apart)
        if row is not None:
            return row
    return UNSEALED


def of_job(
    language: str, *layers: ByLanguage, sealed: bool, stdio: bool, split: bool = False
) -> Integrity:
    """The class of one assembled job: its row, unless the job itself is weaker (a problem whose
    tests left no place for the seal; `sealed` counts a test framework's own seal; a one-program
    job of a language whose family splits it gets the row below the split's)."""
    if stdio:
        return OUTPUT
    row = lookup(language, *layers, apart=split)
    if row.by_seal and row.level is not Level.UNSEALED and not sealed:
        return NO_PLACE
    return row


def weakest(levels: list[Level]) -> Level:
    return min(levels, key=ORDER.index) if levels else Level.UNSEALED
