"""The pieces of split builds that need no jail: the symbol rule on real objects (compiled here
by the host's g++), the runtime's list, each language's assembly (the answer's unit, the
harness's bindings and its count of sites), and answers read as data.

The same rules on a real server, attack by attack: tests/security/test_reward_hacks_native.py.
"""

from __future__ import annotations

import glob
import subprocess
from pathlib import Path

import pytest

from sandlot.executor.guards import symbols
from sandlot.judge import Datasets
from sandlot.judge.engine import Judge
from sandlot.judge.families import reference
from sandlot.judge.plans import JudgeConfig, Program
from sandlot.judge.split import Side, cpp, d, go, rust
from sandlot.languages import LANGUAGES, Registry
from sandlot.languages.native import CPP_PRELUDE, CPP_SPLIT

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
JUDGE = Judge(DATASETS, lambda: None)  # type: ignore[arg-type,return-value]


def compiled(tmp_path: Path, name: str, source: str) -> symbols.Symbols:
    src = tmp_path / f"{name}.cpp"
    src.write_text("#include <vector>\n" + source)
    subprocess.run(["/usr/bin/g++", "-std=c++17", "-O2", "-c", str(src), "-o",
                    str(tmp_path / f"{name}.o")], check=True)  # fmt: skip
    return symbols.read_symbols((tmp_path / f"{name}.o").read_bytes())


@pytest.fixture(scope="module")
def runtime() -> set[str]:
    paths = sorted({p for pattern in CPP_SPLIT.runtime for p in glob.glob(pattern)})
    return set(symbols.runtime_symbols(paths))


HARNESS = """
#include <cassert>
#include <vector>
bool f(std::vector<int> v);
template <typename T> __attribute__((noinline)) bool compare(T a, T b) { return a == b; }
int main() { assert(compare(f({1}), true)); }
"""


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("bool f(std::vector<int> v) { return v.size() == 1; }", None),
        ("#include <vector>\nbool f(std::vector<int> v) { v.push_back(2); return true; }", None),
        ("bool f(std::vector<int> v) { return true; }\nint main() { return 0; }",
         "defines `main`, which the harness defines"),
        ('extern "C" void __assert_fail(const char*, const char*, unsigned, const char*) {}',
         "`__assert_fail`, which the runtime defines"),
        ('extern "C" __attribute__((weak)) void abort() noexcept {}',
         "`abort`, which the runtime defines"),
        ("template <typename T> bool compare(T a, T b);\n"
         "template <> bool compare<bool>(bool a, bool b) { return true; }",
         "`_Z7compareIbEbT_S0_`, which the harness defines"),
        ('static void g() {}\n__attribute__((section(".preinit_array"), used)) static void '
         "(*p)() = g;", ".preinit_array"),
        ('extern "C" int r() { return 0; }\nextern "C" void* pick() { return (void*)r; }\n'
         'extern "C" int early() __attribute__((ifunc("pick")));', "ifunc"),
        ('asm(".globl main\\nmain: ret");', "defines `main`"),
    ],
)  # fmt: skip
def test_the_symbol_rule(tmp_path: Path, runtime: set[str], answer: str, why: str | None) -> None:
    harness = compiled(tmp_path, "harness", HARNESS)
    refusal = symbols.refusal(compiled(tmp_path, "answer", answer), harness, runtime)
    assert refusal is None if why is None else why in (refusal or ""), refusal


def test_reaching_a_harness_symbol_is_refused(tmp_path: Path, runtime: set[str]) -> None:
    harness = compiled(tmp_path, "harness", HARNESS + "int sandlot_state = 3;\n")
    answer = compiled(tmp_path, "answer", "extern int sandlot_state;\n"
                      "bool f(std::vector<int> v) { return sandlot_state; }")  # fmt: skip
    assert "uses `sandlot_state`" in (symbols.refusal(answer, harness, runtime) or "")


def test_weak_library_instances_are_made_private_not_refused(runtime: set[str]) -> None:
    answer = symbols.Symbols(weak={"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
                                   "__assert_fail"})  # fmt: skip
    assert symbols.private(answer, runtime) == {
        "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv"
    }
    assert "`__assert_fail`" in (symbols.refusal(answer, symbols.Symbols(), runtime) or "")


def test_rust_answers_stay_in_their_namespace() -> None:
    answer = symbols.Symbols(strong={"_ZN14sandlot_answer1f17h0123456789abcdefE", "write_all"})
    why = symbols.refusal(answer, symbols.Symbols(), set(), own="sandlot_answer")
    assert "`write_all` outside its own namespace" in (why or "")
    answer.sections.add("init")
    assert "constructor" in (symbols.refusal(answer, symbols.Symbols(), set(), no_init=True) or "")


def test_rust_generic_instances_of_std_in_the_answer_are_its_own() -> None:
    # Rust 1.96 instantiates std's RawVec<T>::grow_one in the answer's crate, legacy-mangled
    grow = "_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17ha89b3672f68301b1E"
    answer = symbols.Symbols(strong={"_ZN14sandlot_answer1f17h0123456789abcdefE", grow})
    assert symbols.refusal(answer, symbols.Symbols(), set(), own="sandlot_answer") is None
    # the harness may use the answer's instance (rustc shares it, as for HumanEval_23's
    # assert_eq! on isize in both), but not define its own: then the answer's would replace it
    used = symbols.Symbols(undefined={grow})
    assert symbols.refusal(answer, used, set(), own="sandlot_answer") is None
    defined = symbols.Symbols(strong={grow})
    assert grow in (symbols.refusal(answer, defined, set(), own="sandlot_answer") or "")
    # a name of another form (an #[export_name] of std's v0 scheme, a C name) is refused
    answer = symbols.Symbols(strong={"_RNvCs1234_3std5write"})
    assert "outside its own namespace" in (
        symbols.refusal(answer, symbols.Symbols(), set(), own="sandlot_answer") or ""
    )


def test_odd_names_and_broken_objects_are_refused(tmp_path: Path) -> None:
    answer = symbols.Symbols(strong={"exit@GLIBC_2.2.5"})
    assert "no language here makes" in (symbols.refusal(answer, symbols.Symbols(), set()) or "")
    with pytest.raises(symbols.BadObject):
        symbols.read_symbols(b"\x7fELF\x02\x01" + b"\0" * 20)
    (tmp_path / "h").write_text("")
    (tmp_path / "r").write_text("")
    (tmp_path / "a.o").write_bytes(b"not an object")
    assert symbols.main(["check", str(tmp_path / "h"), str(tmp_path / "r"),
                         str(tmp_path / "a.o")]) == 1  # fmt: skip


def test_the_runtime_list_has_libc_and_libstdcxx(runtime: set[str]) -> None:
    assert {"__assert_fail", "exit", "write", "abort", "_Znwm"} <= runtime
    assert "main" not in runtime


# -- assembly -------------------------------------------------------------------------------------


def assembled(dataset: str, pid: str | int, completion: str | None = None) -> Program:
    spec = DATASETS.spec(dataset)
    row = DATASETS.get(dataset).get(pid)
    job = JUDGE.assemble(spec, row, completion or reference(spec.family, row), JudgeConfig()).job
    assert isinstance(job, Program) and job.harness is not None
    return job


def test_cpp_prototypes_from_the_declaration_and_the_tests_main_as_a_function() -> None:
    job = assembled("humaneval_x_cpp", "CPP/0")
    harness = job.harness["main.cpp"].decode()
    assert "bool has_close_elements(vector<float> numbers, float threshold);" in harness
    assert "int sandlot_tests_main(){" in harness.replace(" ", "").replace("\n", "") or (
        "sandlot_tests_main" in harness
    )
    assert "int main(int argc, char** argv)" in harness and job.tests == 7
    assert "threshold)" not in job.code.split("has_close_elements", 1)[0]  # the answer's unit
    assert "sandlot" not in job.code


def test_cpp_an_answers_other_types_stand_in_a_closed_grammar() -> None:
    theirs = "bool f(vector<int> v) {\n"
    used = {"f"}
    own = cpp._interface(theirs, "bool f(const vector<int>& v) { return true; }", used)
    assert "bool f(const vector<int>& v);" in own
    for hostile in ("bool f(vector<int> v, int x = (exit(0), 1)) { return 1; }",
                    'bool f(vector<int> v) asm("main");',
                    "bool f(vector<int> v __attribute__((unused))) { return 1; }"):  # fmt: skip
        assert "bool f(vector<int> v);" in cpp._interface(theirs, hostile, used), hostile


def test_cpp_mbxp_throws_are_sites_and_every_exit_of_main_comes_back() -> None:
    # issue 45 item 1: MBXP's tests end their main with `return 0;`, past which the old seal sat
    job = assembled("mbxp_v1_en", 465, "```cpp\nint findMinSum(int n) { return n; }\n```")
    harness = job.harness["main.cpp"].decode()
    assert job.tests == 3 and harness.count("sandlot_pass(") == 3 + 1  # 3 sites, 1 definition
    assert "int sandlot_tests_main(int argc, char* argv[])" in harness
    assert "sandlot_rc = sandlot_tests_main(argc, argv);" in harness


def test_cpp_without_a_prompt_the_answers_declarations_never_its_macros() -> None:
    own = cpp._from_answer("#include <vector>\n#include \"x.h\"\n#define INF 1000000\n"
                           "#define ll long long\n#define assert(x) 1\nusing namespace std;\n"
                           "typedef vector<vector<int>> Graph;\nint tsp(Graph& g, ll n) {\n"
                           "  return 0;\n}\nint main() { return 0; }\n")  # fmt: skip
    assert "const auto INF = (1000000);" in own and "typedef long long ll;" in own
    assert "#define" not in own and '"x.h"' not in own and "main" not in own
    assert "int tsp(Graph& g, ll n);" in own


def test_rust_typed_constants_and_a_library_crate() -> None:
    job = assembled("humaneval_x_rust", "Rust/0")
    harness = job.harness["main.rs"].decode()
    assert "const has_close_elements: fn(Vec<f32>, f32) -> bool = " in harness
    assert "#[macro_use]" not in harness and "sandlot_answer::*" not in harness
    assert "pub fn has_close_elements" in job.code and job.tests == 7
    library = rust._as_library("use std::fmt;\nfn a() {}\nstruct B;\npub fn c() {}\n"
                               "fn main() {}\nimpl B { fn d() {} }\n")  # fmt: skip
    assert "pub fn a()" in library and "pub struct B" in library and "pub pub" not in library
    assert "pub fn main() {}" in library and "impl B { fn d() {} }" in library


def test_rust_a_body_that_opens_with_use_is_a_body() -> None:
    # issue 45 item 5: README's rule, a body is whole only when it declares the function
    row = DATASETS.get("humaneval_x_rust").get("Rust/0")
    body = "    use std::cmp::Ordering;\n" + row["canonical_solution"]
    job = assembled("humaneval_x_rust", "Rust/0", body)
    assert "fn has_close_elements(numbers:Vec<f32>, threshold: f32) -> bool{" in job.code
    assert "use std::cmp::Ordering;" in job.code


def test_d_static_import_typed_pointers_and_the_prelude() -> None:
    row = DATASETS.get("multiple_d").get("HumanEval_8_sum_product")
    job = assembled("multiple_d", "HumanEval_8_sum_product", row["gpt_solution"])
    harness = job.harness["main.d"].decode()
    assert "static import sandlot_answer;" in harness
    assert ("immutable Tuple!(long, long) function(long[]) sum_product = "
            "&sandlot_answer.sum_product;") in harness  # fmt: skip
    assert job.code.startswith("module sandlot_answer;\n" + d.PRELUDE)


def test_go_typed_variables_and_params_grouped_by_type() -> None:
    job = assembled("humaneval_x_go", "Go/0")
    harness = job.harness["main_test.go"].decode()
    assert ("var HasCloseElements func([]float64, float64) bool = "
            "sandlot_answer.SandlotExport_HasCloseElements") in harness  # fmt: skip
    assert '_ "../sandlot_seal"' in job.code and job.tests == 1
    assert go._param_types("a, b int, s string, f func(int) (int, error)") == [
        "int", "int", "string", "func(int) (int, error)"]  # fmt: skip


def test_go_refuses_what_reaches_past_the_standard_library() -> None:
    code = 'package main\nimport (\n "unsafe"\n)\nfunc F() int { return int(unsafe.Sizeof(1)) }'
    side = Side(code, True, "", "func TestF(t *testing.T) {}\n", "func F() int {\n")
    assert "standard library only" in str(go.split(side))


# -- the precompiled C++ prelude ------------------------------------------------------------------


def pch_flag(runtime: Path, unit: str) -> str:
    """What the cpp row's split build passes g++ for `unit` (its `pch` function, run here)."""
    script = CPP_SPLIT.build[2].format(runtime=runtime)
    function = script[: script.index("}; ") + 3]
    (runtime / "unit.cpp").write_text(unit)
    done = subprocess.run(["/bin/sh", "-c", f"{function}pch unit.cpp"], cwd=runtime,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


def test_the_precompiled_prelude_is_included_only_in_units_that_begin_with_it(
    tmp_path: Path,
) -> None:
    prelude = tmp_path / "cpp-prelude" / "sandlot_prelude.hpp"
    prelude.parent.mkdir()
    prelude.write_text(CPP_PRELUDE)
    body = "int f() { return 1; }\n"
    assert pch_flag(tmp_path, CPP_PRELUDE + body) == ""  # not built: the header's text alone
    Path(f"{prelude}.gch").write_bytes(b"")
    assert pch_flag(tmp_path, CPP_PRELUDE + body) == f"-include {prelude}"
    # a unit that begins otherwise (a macro first, one header fewer) gets nothing before it
    assert pch_flag(tmp_path, "#define private public\n" + CPP_PRELUDE + body) == ""
    assert pch_flag(tmp_path, CPP_PRELUDE.split("\n", 1)[1] + body) == ""
    assert pch_flag(tmp_path, body) == ""


def test_both_units_of_a_humaneval_x_cpp_split_begin_with_the_prelude() -> None:
    job = assembled("humaneval_x_cpp", "CPP/0")
    assert job.harness is not None and job.code.startswith(CPP_PRELUDE)
    assert job.harness[cpp.HARNESS].decode().startswith(CPP_PRELUDE)
