"""The seal and the guards, without a server: frames, and what the judge's guards put in a
program's text (the runs themselves are in test_integrity.py)."""

from __future__ import annotations

import re

import pytest

from sandlot.executor import seal
from sandlot.executor.guards import PY_PRELUDES, Seal, driver, frameworks
from sandlot.judge import guards
from sandlot.judge.dialects import DIALECTS, dialect
from sandlot.languages import LANGUAGES

SECRET = seal.new()


def test_a_fresh_secret_each_time() -> None:
    assert len(SECRET) == 32 and seal.new() != SECRET


@pytest.mark.parametrize(
    ("stdout", "payload", "rest"),
    [
        (b"out\n" + SECRET + SECRET + b"\n", b"", b"out\n"),
        (b"a" + SECRET + b"13" + SECRET + b"\nb", b"13", b"ab"),
        # the last frame counts (a program whose tests ran twice), the others are left as printed
        (SECRET + b"0x" + SECRET + b"\n" + SECRET + b"1y" + SECRET, b"1y", SECRET + b"0x" + SECRET
         + b"\n"),
        (b"no frame " + SECRET + b"\n", None, b"no frame " + SECRET + b"\n"),
        (b"", None, b""),
        (SECRET[:-1] + SECRET[:-1], None, SECRET[:-1] + SECRET[:-1]),  # another secret's frame
    ],
)  # fmt: skip
def test_open_frame(stdout: bytes, payload: bytes | None, rest: bytes) -> None:
    opened = seal.open_frame(stdout, SECRET)
    assert opened.payload == payload and opened.stdout == rest


def test_counts() -> None:
    assert seal.counts(b"passed=3 failed=0 skipped=2") == {"passed": 3, "failed": 0, "skipped": 2}
    assert seal.counts(b"") == {} and seal.counts(b"1'3'") == {}


def test_the_driven_languages_are_the_rows_with_a_driver() -> None:
    assert {row.name for row in LANGUAGES if row.harness} == guards.DRIVEN
    assert {row.guard for row in LANGUAGES if row.guard} == {"pytest", "jest", "junit", "go_test",
                                                               "catch2", "D"}  # fmt: skip


def test_every_judging_row_is_a_language_row() -> None:
    """A misspelt key would judge its language with the defaults (unsealed, C-like)."""
    assert set(DIALECTS) <= {row.name for row in LANGUAGES}
    assert all(name == d.name for name, d in DIALECTS.items())


@pytest.mark.parametrize("language", ["", "nosuch", "__class__", "get", "python\n", "PYTHON"])
def test_a_language_unknown_to_judging_is_judged_on_its_exit(language: str) -> None:
    d = dialect(language)
    assert d.guard is None and not d.driven and d.name == language
    assert guards.guard_end("check()\n", language) == ("check()\n", False)
    assert guards.with_start("check()\n", language) == "check()\n"


@pytest.mark.parametrize("language", sorted(n for n, d in DIALECTS.items() if d.guard))
def test_every_guard_row_seals_its_tests(language: str) -> None:
    main = {
        "cpp": "int main() {\n    check();\n}\n",
        "rust": "fn main() {\n    check();\n}\n",
        "java": "public class Main {\n    public static void main(String[] a) {\n"
        "        check();\n    }\n}\n",
        "csharp": "class P {\n    static void Main() {\n        check();\n    }\n}\n",
        "scala": "object P {\n  def main(args: Array[String]) = {\n    check()\n  }\n}\n",
    }
    guarded, sealed = guards.guard_end(main.get(language, "check()\n"), language)
    assert sealed and guarded.rstrip().endswith(("}", "?>")) == (language in main)
    one = guards.with_start(guarded, language)
    assert guards.SEAL in one and "__SANDLOT_SEAL_NAME__" not in one
    if language not in main:  # a script reads it in its first statement
        assert one.index(guards.SEAL) < one.rindex("check")
    else:  # written after the tests, in their main
        assert one.index("check") < one.rindex(dialect(language).guard.end) < one.rindex("}")


@pytest.mark.parametrize(
    ("language", "tests"),
    [("cpp", "int main() {\n    assert(f() == 1);\n}\n"),
     ("csharp", "class Problem {\n    public static void Main(string[] a) {\n"
                "        Debug.Assert(f() == 1);\n    }\n}\n"),
     ("scala", "object Problem {\n    def main(args: Array[String]) = {\n"
               "    assert(f() == 1);\n    }\n}\n"),
     ("rust", "fn main() {\n    assert_eq!(f(), 1);\n}\n")],
)  # fmt: skip
def test_compiled_guards_are_fixed_read_first_written_last(language: str, tests: str) -> None:
    guarded, sealed = guards.guard_end(tests, language)
    assert sealed
    one = guards.with_start(guarded, language)
    assert one == guards.with_start(guards.guard_end(tests, language)[0], language)
    assert guards.SEAL in one and seal.SEAL_FILE == guards.SEAL
    last_test = one.rindex("f() == 1" if language != "rust" else "f(), 1")
    end = one.rindex({"cpp": "sandlot_seal::end()",
                      "csharp": "SandlotSeal.End()", "scala": "SandlotSeal.end()",
                      "rust": "sandlot_seal_end("}[language])  # fmt: skip
    assert last_test < end
    read = {"cpp": ".preinit_array", "csharp": "sandlotSealRead",
            "scala": "sandlotSealRead", "rust": "let sandlot_seal = "}[language]  # fmt: skip
    assert one.index(read) < one.index("f() == 1" if language != "rust" else "f(), 1")


def test_kotlin_script_guard_draws_a_name_per_submission() -> None:
    guarded, sealed = guards.guard_end("check()\n", "kotlin_script")
    one, two = (guards.with_start(guarded, "kotlin_script") for _ in range(2))
    assert sealed and one != two
    name = re.search(r"sandlot_[0-9a-f]{16}", one).group()
    assert one.count(name) >= 2 and name not in two
    assert one.index(guards.SEAL) < one.index("check")


def test_go_guard_is_in_the_codes_package_unless_it_has_a_test_main() -> None:
    files = frameworks.build_files("go_test", 'package foo_test\n\nimport "testing"\n')
    assert files[frameworks.GO_FILE].startswith(b"//") and b"package foo_test\n" in files[
        frameworks.GO_FILE]  # fmt: skip
    own = 'package main\nimport "testing"\nfunc TestMain(m *testing.M) { m.Run() }\n'
    assert frameworks.build_files("go_test", own) == {}
    assert not frameworks.sealed("go_test", own) and frameworks.sealed("go_test", "package x")


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("case", [None, ("f(1)", "2")])
def test_every_python_driver_begins_with_a_prelude_the_zygote_compiles(strict, case) -> None:
    """A sealed Python run's main.py begins with one of the texts a warm zygote compiles once
    (JailConfig.warm_preludes): were the driver's text to drift from them, every sealed run
    would compile its driver again (0.85 ms of its CPU)."""
    from sandlot.executor import guards as run_guards

    text = run_guards.driver("python", "def f(x):\n    return 2\n", run_guards.Seal(strict=strict),
                             case)  # fmt: skip
    begins = [p for p in run_guards.PY_PRELUDES if text.startswith(p)]
    assert begins and max(begins, key=len).count("__sandlot_") >= 1
    assert text[len(max(begins, key=len)) :].lstrip().startswith("__sandlot_driver(")


DRIVERS = {
    f"{name}{' case' if case else ''}": (seal, case)
    for name, seal in (("plain", Seal()), ("strict", Seal(strict=True)),
                       ("split", Seal(strict=True, split=True)))
    for case in (None, ("f(1)", "1"))
} | {"unittest": (Seal(unittest=("T",)), None)}  # fmt: skip


@pytest.mark.parametrize("name", DRIVERS)
def test_every_python_driver_begins_with_a_prelude_the_zygote_compiled(name: str) -> None:
    """What of a driver is none of the zygote's preludes is compiled again in every run."""
    seal_, case = DRIVERS[name]
    text = driver("python", "x = 1\n", seal_, case)
    longest = max((p for p in PY_PRELUDES if text.startswith(p)), key=len, default="")
    assert "def " not in text[len(longest) :], "a part of the driver is compiled in each run"
