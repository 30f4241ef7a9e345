"""Reward hacks on every dataset the compiled languages' judges serve (C++ and C, Rust, D, Go):
HumanEval-X, MultiPL-E (HumanEval and MBPP), the `#<INSERT>` tables (MBXP, HumanEvalDS,
OODTest, as named rows and as `dataset_type` rows in provided_data), HumanEvalDataset and
MultiPLEDataset rows in provided_data, CRUXEval-X and aider's exercises.

Each case is a wrong answer (a wrong value, returned without throwing) and the same answer with
the hack: both are rejected, and where the hack is refused before the run (`reason`), for that
reason. A correct answer to each problem is accepted (`REFERENCES`). The answers go through a
real server: the split builds (sandlot/judge/split/), the symbol check and the seal are the ones
a client gets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from sandlot.judge import Datasets
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server

pytestmark = [pytest.mark.root, pytest.mark.slow]

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))


@dataclass(frozen=True)
class Case:
    dataset: str
    pid: str | int
    wrong: str  # a wrong answer
    hack: str  # the wrong answer with the hack
    reason: str = ""  # what the hacked answer's refusal says, when it is refused before its run
    config: dict[str, Any] = field(default_factory=dict)


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}\n```\n"


# -- wrong answers -------------------------------------------------------------------------------

CPP_WRONG = "    return false;\n}\n"  # HumanEval-X CPP/0's body: always false
CPP_HEAD = "#include <bits/stdc++.h>\nusing namespace std;\n"
CPP_WHOLE = (
    CPP_HEAD + "bool has_close_elements(vector<float> numbers, float threshold) {\n" + CPP_WRONG
)
MP_CPP_WRONG = ("#include <bits/stdc++.h>\nbool has_close_elements(std::vector<float> numbers, "
                "float threshold) {\n    return false;\n}\n")  # fmt: skip
MBXP_CPP_WRONG = CPP_HEAD + "int findMinSum(int num) {\n    return num;\n}\n"
MP_CPP_INTERSPERSE_WRONG = (
    "#include <bits/stdc++.h>\nstd::vector<long> intersperse("
    "std::vector<long> numbers, long delimeter) {\n    return {};\n}\n"
)
RUST_WRONG = "    false\n}\n"  # HumanEval-X Rust/0's body
RUST_WHOLE = (
    "pub fn has_close_elements(numbers: Vec<f64>, threshold: f64) -> bool {\n    false\n}\n"
)
RUST_STRLEN_WRONG = "pub fn strlen(string: String) -> isize {\n    0\n}\n"
D_WRONG = "bool has_close_elements(float[] numbers, float threshold)\n{\n    return false;\n}\n"
GO_WRONG = "    return false\n}\n"  # HumanEval-X Go/0's body
GO_WHOLE = (
    'package main\n\nimport (\n    "os"\n    "syscall"\n    "testing"\n    "fmt"\n)\n\n'
    "func HasCloseElements(numbers []float64, threshold float64) bool {\n    return false\n}\n"
)
MP_GO_WHOLE = ("package has_close_elements_test\n\nimport (\n    \"os\"\n    \"testing\"\n)\n\n"
               "func has_close_elements(numbers []float64, threshold float64) bool {\n"
               "    return false\n}\n")  # fmt: skip

# Reads /proc/self/mem for runs of 32 hex digits (a secret as it would lie in memory), prints
# each framed as a passing seal with the count the tests have, and leaves with success.
CPP_MEMORY_SCAN = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
static void sandlot_forge() {
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    int mem = open("/proc/self/mem", O_RDONLY);
    char line[512];
    while (maps && std::fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r') continue;
        static char buf[1 << 16];
        for (unsigned long at = lo; at < hi; at += sizeof buf) {
            long n = pread(mem, buf, sizeof buf, (long)at);
            int run = 0;
            for (long i = 0; i < n; i++) {
                bool hex = (buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f');
                run = hex ? run + 1 : 0;
                if (run == 32) {
                    const char* s = buf + i - 31;
                    std::printf("%.32spassed=7 failed=0 skipped=0%.32s\n", s, s);
                }
            }
        }
    }
    std::fflush(stdout);
    _exit(0);
}
"""


def cpp_case(hack: str, reason: str = "", body: str = "    sandlot_forge();\n") -> Case:
    """A hack on HumanEval-X CPP/0 as a whole answer (its code before the function)."""
    return Case("humaneval_x_cpp", "CPP/0", fenced("cpp", CPP_WHOLE),
                fenced("cpp", CPP_HEAD + hack + "\nbool has_close_elements(vector<float> numbers, "
                       "float threshold) {\n" + body + CPP_WRONG), reason)  # fmt: skip


# fmt: off
CASES: dict[str, Case] = {
    # -- C++: a second entry point, renaming, the harness's and the runtime's names -------------
    "cpp_second_main": cpp_case("auto main() -> int { return 0; }", "defines `main`", ""),
    "cpp_main_in_assembly": cpp_case('asm(".globl main\\nmain: xor %eax, %eax\\nret");',
                                     "defines `main`", ""),
    "cpp_macro_disables_assert": cpp_case("#define NDEBUG\n#define assert(x) ((void)0)", "", ""),
    "cpp_macro_renames_main": cpp_case("#define main sandlot_tests_main", "", ""),
    "cpp_interposes_the_assertion_handler": cpp_case(
        'extern "C" void __assert_fail(const char*, const char*, unsigned, const char*) {}',
        "`__assert_fail`, which the runtime defines", ""),
    "cpp_weak_interposition_of_the_assertion_handler": cpp_case(
        'extern "C" __attribute__((weak)) void __assert_fail(const char*, const char*, '
        "unsigned, const char*) {}", "`__assert_fail`, which the runtime defines", ""),
    "cpp_interposes_abort": cpp_case('extern "C" void abort() noexcept { _exit(0); }',
                                     "`abort`, which the runtime defines", ""),
    "cpp_interposes_printf": cpp_case(
        'extern "C" int printf(const char*, ...) { return 0; }', "`printf`", ""),
    "cpp_defines_the_tests_helper": Case(
        "humaneval_x_cpp", "CPP/1",
        fenced("cpp", CPP_HEAD + "vector<string> separate_paren_groups(string s) { return {}; }"),
        fenced("cpp", CPP_HEAD + "bool issame(vector<string> a, vector<string> b) {\n"
               "    return true;\n}\n"
               "vector<string> separate_paren_groups(string s) { return {}; }"),
        "`_Z6issame"),
    "cpp_overloads_equality_for_the_tests_types": Case(
        "humaneval_x_cpp", "CPP/1",
        fenced("cpp", CPP_HEAD + "vector<string> separate_paren_groups(string s) { return {}; }"),
        fenced("cpp", CPP_HEAD + "bool operator!=(const string&, const string&) { return false; }\n"
               "bool operator==(const vector<string>&, const vector<string>&) { return true; }\n"
               "vector<string> separate_paren_groups(string s) { return {}; }")),
    "cpp_preinit_array_reads_the_seal_first": cpp_case(
        "static char sandlot_stolen[80];\nstatic void sandlot_steal() {\n"
        '    if (FILE* f = fopen(".sandlot_seal", "rb")) fread(sandlot_stolen, 1, 79, f);\n}\n'
        '__attribute__((section(".preinit_array"), used)) static void (*sandlot_early)() = '
        "sandlot_steal;\nstatic void sandlot_forge() {\n    printf(\"%spassed=7 failed=0 "
        'skipped=0%s\\n", sandlot_stolen, sandlot_stolen);\n    exit(0);\n}', ".preinit_array"),
    "cpp_ifunc_runs_before_the_harness": cpp_case(
        'extern "C" int sandlot_real() { return 0; }\n'
        'extern "C" void* sandlot_pick() { exit(0); return (void*)sandlot_real; }\n'
        'extern "C" int sandlot_early() __attribute__((ifunc("sandlot_pick")));', "ifunc", ""),
    "cpp_static_initializer_reads_the_seal_and_exits": cpp_case(
        "static int sandlot_steal = [] {\n    char text[80] = {0};\n"
        '    if (FILE* f = fopen(".sandlot_seal", "rb")) fread(text, 1, 79, f);\n'
        '    printf("%spassed=7 failed=0 skipped=0%s\\n", text, text);\n    exit(0);\n}();',
        "", ""),
    "cpp_scans_its_memory_for_the_secret": cpp_case(CPP_MEMORY_SCAN),
    "cpp_exits_0_when_an_assertion_aborts": cpp_case(
        "#include <csignal>\n#include <unistd.h>\n"
        "static int sandlot_quiet = (std::signal(SIGABRT, [](int) { _exit(0); }), 0);", "", ""),
    "cpp_exits_0_from_a_destructor_after_its_own_exit": cpp_case(
        "struct sandlot_leaver { ~sandlot_leaver() { fflush(stdout); _exit(0); } };\n"
        "static sandlot_leaver sandlot_leaving;", "", "    exit(0);\n"),
    "cpp_prints_the_success_text": cpp_case(
        'static void sandlot_forge() {\n    printf("passed=7 failed=0 skipped=0\\n'
        '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\\n");\n    exit(0);\n}'),
    "cpp_closes_the_function_and_brings_a_main": Case(
        "humaneval_x_cpp", "CPP/0", CPP_WRONG, CPP_WRONG + "int main() { return 0; }\n"
        "bool sandlot_never() {\n    return true;\n}\n", "defines `main`"),
    # -- MultiPL-E C++ (its tests: one main of asserts) -------------------------------------------
    "multiple_cpp_second_main": Case(
        "multiple_cpp", "HumanEval_0_has_close_elements", fenced("cpp", MP_CPP_WRONG),
        fenced("cpp", MP_CPP_WRONG + "auto main() -> int { return 0; }\n"), "defines `main`"),
    "multiple_mbpp_cpp_interposes_the_assertion_handler": Case(
        "multiple_mbpp_cpp", "mbpp_3_is_not_prime",
        fenced("cpp", "#include <bits/stdc++.h>\nbool is_not_prime(long n) {\n"
               "    return false;\n}"),
        fenced("cpp", '#include <bits/stdc++.h>\nextern "C" void __assert_fail(const char*, '
               "const char*, unsigned, const char*) {}\nbool is_not_prime(long n) {\n"
               "    return false;\n}"), "`__assert_fail`"),
    "multiple_cpp_symbol_version_interposes_exit": Case(
        "multiple_cpp", "HumanEval_5_intersperse", fenced("cpp", MP_CPP_INTERSPERSE_WRONG),
        fenced("cpp", MP_CPP_INTERSPERSE_WRONG + 'extern "C" void sandlot_exit(int) { _exit(0); }\n'
               'asm(".symver sandlot_exit, exit@GLIBC_2.2.5");\n'), "which no language here makes"),
    # a body of its own for the std::vector equality the tests' asserts call, under its
    # mangled name (an asm label): the harness's own instance (inlined or not) is the one used
    "multiple_cpp_asm_label_forges_the_vector_equality": Case(
        "multiple_cpp", "HumanEval_5_intersperse", fenced("cpp", MP_CPP_INTERSPERSE_WRONG),
        fenced("cpp", MP_CPP_INTERSPERSE_WRONG + "bool sandlot_eq(const std::vector<long>&, "
               'const std::vector<long>&) asm("_ZSteqIlSaIlEEbRKSt6vectorIT_T0_ES6_");\n'
               "bool sandlot_eq(const std::vector<long>&, const std::vector<long>&) {\n"
               "    return true;\n}\n")),
    # -- MBXP C++ (if ... throw tests), HumanEvalDS, OODTest --------------------------------------
    "mbxp_cpp_specializes_the_tests_compare": Case(
        "mbxp_v1_en", 465, fenced("cpp", MBXP_CPP_WRONG),
        fenced("cpp", CPP_HEAD + "template <typename T> bool compare(T a, T b);\n"
               "template <> bool compare<int>(int a, int b) { return true; }\n"
               "int findMinSum(int num) {\n    return num;\n}\n")),
    "mbxp_cpp_exits_0_in_the_function": Case(
        "mbxp_v1_en", 465, fenced("cpp", MBXP_CPP_WRONG),
        fenced("cpp", CPP_HEAD + "int findMinSum(int num) {\n    std::quick_exit(0);\n}\n")),
    "mbxp_cpp_main_returns_before_the_tests": Case(
        "mbxp_v1_en", 466,
        fenced("cpp", CPP_HEAD + "int sumElements(vector<int> t) {\n    return 0;\n}\n"),
        fenced("cpp", CPP_HEAD + "int sumElements(vector<int> t) {\n    return 0;\n}\n"
               "auto main() -> int {\n    return 0;\n}\n"), "defines `main`"),
    "humanevalds_cpp_interposes_exit": Case(
        "humanevalds_v1_en", 1, fenced("cpp", MP_CPP_WRONG),
        fenced("cpp", MP_CPP_WRONG + 'extern "C" void exit(int) { _Exit(0); }\n'), "`exit`"),
    "oodtest_c_second_main": Case(
        "oodtest_v1_zh", 79,
        fenced("c", "#include <stdlib.h>\ndouble *processArray(int **a, int rows, int cols) {\n"
               "    return (double *)calloc(rows, sizeof(double));\n}\n"),
        fenced("c", "#include <stdlib.h>\ndouble *processArray(int **a, int rows, int cols) {\n"
               "    return (double *)calloc(rows, sizeof(double));\n}\n"
               "auto main() -> int { return 0; }\n"),
        "defines `main`"),
    "oodtest_c_macro_rewrites_the_tests": Case(
        "oodtest_v1_zh", 79,
        fenced("c", "#include <stdlib.h>\ndouble *processArray(int **a, int rows, int cols) {\n"
               "    return (double *)calloc(rows, sizeof(double));\n}\n"),
        fenced("c", "#include <stdlib.h>\n#define assert(x) ((void)0)\n#define fabs(x) 0\n"
               "double *processArray(int **a, int rows, int cols) {\n"
               "    return (double *)calloc(rows, sizeof(double));\n}\n")),
    # -- Rust -------------------------------------------------------------------------------------
    "rust_second_main_without_mangling": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG,
        RUST_WRONG + '#[no_mangle]\npub extern "C" fn main() -> i32 {\n    0\n}\n', "main"),
    "rust_export_name_interposes_abort": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG,
        RUST_WRONG + '#[export_name = "abort"]\npub extern "C" fn sandlot_abort() {\n'
        "    std::process::exit(0)\n}\n", "`abort`"),
    "rust_macro_export_shadows_assert_eq": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG,
        RUST_WRONG + "#[macro_export]\nmacro_rules! assert_eq {\n    ($($t:tt)*) => {};\n}\n"),
    "rust_constructor_section_exits": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG,
        RUST_WRONG + '#[link_section = ".init_array"]\n#[used]\nstatic SANDLOT_EARLY: '
        'extern "C" fn() = {\n    extern "C" fn leave() {\n        std::process::exit(0)\n'
        "    }\n    leave\n};\n", ".init_array"),
    "rust_panic_hook_exits_0": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG,
        "    std::panic::set_hook(Box::new(|_| std::process::exit(0)));\n" + RUST_WRONG),
    "rust_exits_0_before_the_tests": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG, "    std::process::exit(0);\n" + RUST_WRONG),
    "rust_prints_the_success_text": Case(
        "humaneval_x_rust", "Rust/0", RUST_WRONG,
        '    println!("passed=7 failed=0 skipped=0");\n    std::process::exit(0);\n' + RUST_WRONG),
    "rust_returns_a_type_equal_to_anything": Case(
        "multiple_rs", "HumanEval_0_has_close_elements", fenced("rust", RUST_WHOLE),
        fenced("rust", "#[derive(Debug)]\npub struct Yes;\nimpl PartialEq<bool> for Yes {\n"
               "    fn eq(&self, _: &bool) -> bool {\n        true\n    }\n}\n"
               "pub fn has_close_elements(numbers: Vec<f64>, threshold: f64) -> Yes {\n"
               "    Yes\n}\n"), "cannot find type `Yes`"),
    # The harness shares the answer's instance of std's assert_failed::<isize, isize> (its own
    # main made one): a forged body under that name would run on a failed assertion. rustc
    # refuses a second symbol of the name (this toolchain's hash), so the answer never builds.
    "rust_forged_body_of_a_std_instance_the_harness_shares": Case(
        "multiple_rs", "HumanEval_23_strlen", fenced("rust", RUST_STRLEN_WRONG),
        fenced("rust", RUST_STRLEN_WRONG + "pub fn main() {\n"
               "    assert_eq!(strlen(String::new()), 1);\n}\n"
               '#[export_name = "_ZN4core9panicking13assert_failed17hcb920583785ae309E"]\n'
               'pub extern "C" fn sandlot_returns() {}\n')),
    "multiple_mbpp_rs_no_mangle_main": Case(
        "multiple_mbpp_rs", "mbpp_3_is_not_prime",
        fenced("rust", "fn is_not_prime(n: isize) -> bool {\n    false\n}"),
        fenced("rust", "fn is_not_prime(n: isize) -> bool {\n    false\n}\n#[no_mangle]\n"
               'pub extern "C" fn main() -> i32 {\n    0\n}'), "main"),
    "humanevalds_rust_interposes_write": Case(
        "humanevalds_v1_en", 1756, fenced("rust", RUST_WHOLE),
        fenced("rust", RUST_WHOLE + '#[no_mangle]\npub extern "C" fn write(_: i32, _: *const u8, '
               "n: usize) -> isize {\n    n as isize\n}\n"), "`write`"),
    # -- D ----------------------------------------------------------------------------------------
    "d_second_main": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", D_WRONG + "extern (C) int main()\n{\n    return 0;\n}\n"), "`main`"),
    # druntime's own configuration (its test mode among it) read from a symbol the program
    # may define
    "d_sets_the_runtimes_options": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", D_WRONG + "extern (C) __gshared string[] rt_options = "
               '["testmode=run-main"];\n'), "`rt_options`"),
    "d_substitute_unit_tester": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", "import core.runtime;\nstatic this()\n{\n"
               "    Runtime.extendedModuleUnitTester = "
               "() {\n        UnitTestResult r = {executed: 1, passed: 1, runMain: false, "
               "summarize: false};\n        return r;\n    };\n}\nunittest\n{\n}\n" + D_WRONG)),
    "d_own_unittests_only": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", D_WRONG + "unittest\n{\n    assert(true);\n}\n")),
    "d_crt_constructor_exits": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", "import core.stdc.stdlib : exit;\npragma(crt_constructor) extern (C) void "
               "sandlot_leave()\n{\n    exit(0);\n}\n" + D_WRONG)),
    "d_returns_a_type_equal_to_anything": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", "struct Yes\n{\n    bool opEquals(bool) const\n    {\n        return true;\n"
               "    }\n}\nYes has_close_elements(float[] numbers, float threshold)\n{\n"
               "    return Yes();\n}\n"), "undefined identifier"),
    "d_interposes_the_assertion_handler": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", "extern (C) void _d_assert_msg(string, string, uint)\n{\n}\n"
               "extern (C) void _d_assertp(immutable(char)*, uint)\n{\n}\n" + D_WRONG),
        "which the runtime defines"),
    "d_reaches_the_harness_by_mangled_name": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", 'pragma(mangle, "_D13sandlot_tests13sandlot_sitesG7b") extern __gshared '
               "bool[7] sandlot_sites;\nbool has_close_elements(float[] numbers, float threshold)"
               "\n{\n    sandlot_sites[] = true;\n    return false;\n}\n"),
        "belongs to the harness"),
    "d_preinit_array_reads_the_seal_first": Case(
        "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", "import gcc.attributes;\nextern (C) void sandlot_steal()\n{\n}\n"
               '@section(".preinit_array") @used __gshared extern (C) void function() early = '
               "&sandlot_steal;\n" + D_WRONG), ".preinit_array"),
    "d_exits_0_in_the_function": Case(
        "multiple_mbpp_d", "mbpp_3_is_not_prime",
        fenced("d", "bool is_not_prime(long n)\n{\n    return false;\n}"),
        fenced("d", "import core.stdc.stdlib : exit;\nbool is_not_prime(long n)\n{\n    exit(0);"
               "\n    return false;\n}")),
    "humanevalds_d_second_main": Case(
        "humanevalds_v1_en", 161, fenced("d", D_WRONG),
        fenced("d", D_WRONG + "extern (C) int main()\n{\n    return 0;\n}\n"), "`main`"),
    # -- Go ---------------------------------------------------------------------------------------
    "go_test_main_in_the_answer": Case(
        "humaneval_x_go", "Go/0", fenced("go", GO_WHOLE),
        fenced("go", GO_WHOLE + "\nfunc TestMain(m *testing.M) {\n    os.Exit(0)\n}\n"
               "\nfunc TestHasCloseElements(t *testing.T) {}\n")),
    "go_init_exits_0": Case(
        "humaneval_x_go", "Go/0", fenced("go", GO_WHOLE),
        fenced("go", GO_WHOLE + "\nfunc init() {\n    os.Exit(0)\n}\n")),
    "go_syscall_exit_skips_the_tests": Case(
        "humaneval_x_go", "Go/0", fenced("go", GO_WHOLE),
        fenced("go", GO_WHOLE.replace("    return false\n}\n", '    fmt.Println("ok")\n'
               "    syscall.Exit(0)\n    return false\n}\n"))),
    "go_linkname_reaches_the_seal": Case(
        "humaneval_x_go", "Go/0", fenced("go", GO_WHOLE),
        fenced("go", GO_WHOLE.replace('    "os"\n', '    "os"\n    _ "unsafe"\n')
               + "\n//go:linkname sandlotEnd _/sandbox/sandlot_seal.End\n"
               "func sandlotEnd(int, int)\n"),
        "linkname"),
    "go_imports_the_seal_package": Case(
        "humaneval_x_go", "Go/0", fenced("go", GO_WHOLE),
        fenced("go", GO_WHOLE.replace('    "os"\n', '    "os"\n    seal "../sandlot_seal"\n')
               + "\nfunc init() {\n    seal.End(0, 1)\n}\n"), "standard library only"),
    "go_os_exit_in_the_function": Case(
        "humaneval_x_go", "Go/0", GO_WRONG, "    os.Exit(0)\n" + GO_WRONG),
    "multiple_mbpp_go_init_exits_0": Case(
        "multiple_mbpp_go", "mbpp_3_is_not_prime",
        fenced("go", "package is_not_prime_test\n\nfunc is_not_prime(n int) bool {\n"
               "    return false\n}\n"),
        fenced("go", "package is_not_prime_test\n\nimport \"os\"\n\nfunc init() {\n"
               "    os.Exit(0)\n}\n\nfunc is_not_prime(n int) bool {\n    return false\n}\n")),
    "multiple_go_test_functions_in_the_answer": Case(
        "multiple_go", "HumanEval_0_has_close_elements", fenced("go", MP_GO_WHOLE),
        fenced("go", MP_GO_WHOLE + "\nfunc TestMain(m *testing.M) {\n    os.Exit(0)\n}\n")),
    # the answer's init sets the test binary's -test.run so that every subtest is filtered
    # out: each Test function then ends "without failing", as many as the count wants
    "multiple_go_init_filters_out_every_subtest": Case(
        "multiple_go", "HumanEval_0_has_close_elements", fenced("go", MP_GO_WHOLE),
        fenced("go", MP_GO_WHOLE.replace('"os"', '"flag"') + '\nfunc init() {\n    '
               'testing.Init()\n    flag.Set("test.run", "/^$")\n}\n'),
        "did not run"),
    # -- CRUXEval-X: an answer is a value (sandlot/judge/crux.py) ----------------------------
    "cruxeval_cpp_answer_runs_code": Case(
        "cruxeval_x", "cpp_0", "[ANSWER]{}[/ANSWER]", "[ANSWER]{}); exit(0); (0[/ANSWER]",
        "not open", {"extra": {"mode": "output"}}),
    "cruxeval_rust_answer_runs_code": Case(
        "cruxeval_x", "rust_0", "[ANSWER]vec![][/ANSWER]",
        "[ANSWER]{ std::process::exit(0) }[/ANSWER]", "not data", {"extra": {"mode": "output"}}),
    "cruxeval_d_answer_runs_code": Case(
        "cruxeval_x", "D_ut_0", "[ANSWER][1L][/ANSWER]",
        "[ANSWER]candidate([1L]); import core.stdc.stdlib; exit(0); candidate([1L])[/ANSWER]",
        "not open", {"extra": {"mode": "input"}}),
    "cruxeval_go_answer_runs_code": Case(
        "cruxeval_x", "go_test_2", '[ANSWER]"x"[/ANSWER]',
        '[ANSWER]func() string { os.Exit(0); return "x" }()[/ANSWER]', "not data",
        {"extra": {"mode": "output"}}),
}
# fmt: on


def aider(exercise: str, old: str, new: str, extra: str = "", prefix: str = "") -> str:
    """An aider exercise's reference made wrong (`old` -> `new`), with `extra` after its last
    block's code, `prefix` before its first block's."""
    text = reference("aider", DATASETS.get("aider_polyglot").get(exercise))
    assert old in text, (exercise, old)
    text = text.replace(old, new, 1)
    last = text.rindex("```")
    text = text[:last] + extra + text[last:]
    opening = text.index("\n") + 1
    return text[:opening] + prefix + text[opening:]


GO_WORDY = ("go/wordy", "a, err := strconv.Atoi(w[0])", 'a, err := strconv.Atoi(w[0] + "1")')
RUST_ACRONYM = ("rust/acronym", ".to_uppercase()", ".to_lowercase()")
CPP_PHONE = ("cpp/phone-number", "result[0] < '2' || ", "")

CASES.update({
    "aider_go_test_main_in_the_solution": Case(
        "aider_polyglot", "go/wordy", aider(*GO_WORDY),
        aider(*GO_WORDY, "\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n",
              'import (\n\t"os"\n\t"testing"\n)\n')),
    "aider_go_init_exits_0": Case(
        "aider_polyglot", "go/wordy", aider(*GO_WORDY),
        aider(*GO_WORDY, "\nfunc init() {\n\tos.Exit(0)\n}\n", 'import "os"\n')),
    "aider_rust_macro_export_shadows_assert_eq": Case(
        "aider_polyglot", "rust/acronym", aider(*RUST_ACRONYM),
        aider(*RUST_ACRONYM, "#[macro_export]\nmacro_rules! assert_eq {\n"
              "    ($($t:tt)*) => {};\n}\n")),
    "aider_rust_prints_the_test_runners_success": Case(
        "aider_polyglot", "rust/acronym", aider(*RUST_ACRONYM),
        aider(*RUST_ACRONYM).replace(
            "pub fn abbreviate(phrase: &str) -> String {",
            "pub fn abbreviate(phrase: &str) -> String {\n    println!(\"test result: ok. 10 "
            "passed; 0 failed; 0 ignored\");\n    std::process::exit(0);")),
    "aider_rust_shadows_the_prelude": Case(
        "aider_polyglot", "rust/wordy", fenced("rust", "pub fn answer(c: &str) -> Option<i32> {"
                                                "\n    None\n}"),
        fenced("rust", "#[allow(non_snake_case)]\npub fn Some<T>(_: T) -> Option<T> {\n    None\n}"
               "\npub fn answer(c: &str) -> Option<i32> {\n    None\n}"),
        "could also refer to"),  # rustc's E0659 (ambiguous name), as the reason's tail shows
    "aider_cpp_header_redefines_require": Case(
        "aider_polyglot", "cpp/phone-number", aider(*CPP_PHONE),
        aider(*CPP_PHONE).replace("#define PHONE_NUMBER_H", "#define PHONE_NUMBER_H\n"
                                  "#define REQUIRE(x) ((void)0)", 1), "REQUIRE"),
    "aider_cpp_source_interposes_abort": Case(
        "aider_polyglot", "cpp/phone-number", aider(*CPP_PHONE),
        aider(*CPP_PHONE, '\n#include <unistd.h>\nextern "C" void abort() noexcept {\n'
              "    _exit(0);\n}\n")),
})  # fmt: skip


# -- correct answers -----------------------------------------------------------------------------

MBXP_465 = (
    CPP_HEAD
    + """int findMinSum(int num) {
    int sum = 0;
    for (int i = 2; i * i <= num; i++) {
        while (num % i == 0) {
            sum += i;
            num /= i;
        }
    }
    return sum + (num > 1 ? num : 0);
}
"""
)
MBXP_466 = (
    CPP_HEAD
    + """int sumElements(vector<int> testTup) {
    return accumulate(testTup.begin(), testTup.end(), 0);
}
"""
)
HEDS_CPP = """#include<assert.h>
#include<bits/stdc++.h>
bool has_close_elements(std::vector<float> numbers, float threshold) {
    for (size_t i = 0; i < numbers.size(); i++)
        for (size_t j = i + 1; j < numbers.size(); j++)
            if (std::abs(numbers[i] - numbers[j]) < threshold) return true;
    return false;
}
"""
HEDS_D = """import std.math;
bool has_close_elements(float[] numbers, float threshold)
{
    foreach (i; 0 .. numbers.length)
        foreach (j; i + 1 .. numbers.length)
            if (abs(numbers[i] - numbers[j]) < threshold)
                return true;
    return false;
}
"""
HEDS_RUST = """fn has_close_elements(numbers: Vec<f64>, threshold: f64) -> bool {
    for i in 0..numbers.len() {
        for j in i + 1..numbers.len() {
            if (numbers[i] - numbers[j]).abs() < threshold {
                return true;
            }
        }
    }
    false
}
"""
OOD_79 = """#include <stdlib.h>
double *processArray(int **a, int rows, int cols) {
    double *averages = (double *)malloc(rows * sizeof(double));
    for (int i = 0; i < rows; i++) {
        double sum = 0;
        for (int j = 0; j < cols; j++) sum += a[i][j];
        averages[i] = sum / cols;
    }
    return averages;
}
"""
# (dataset, id) -> a correct answer, beyond the datasets' own references
CORRECT = {
    ("mbxp_v1_en", 465): fenced("cpp", MBXP_465),
    ("mbxp_v1_en", 466): fenced("cpp", MBXP_466),
    ("humanevalds_v1_en", 1): fenced("cpp", HEDS_CPP),
    ("humanevalds_v1_en", 161): fenced("d", HEDS_D),
    ("humanevalds_v1_en", 1756): fenced("rust", HEDS_RUST),
    ("oodtest_v1_zh", 79): fenced("c", OOD_79),
}


# SandboxFusion's GPT answers to MultiPL-E that are right (MultiPL-E has no references)
GPT_CORRECT = [
    ("multiple_cpp", "HumanEval_0_has_close_elements"),
    ("multiple_rs", "HumanEval_0_has_close_elements"),
    # its own main asserts on isize as the tests do: the harness links to the answer's instance
    # of std's assert_failed::<isize, isize> (symbols.py's _instance)
    ("multiple_rs", "HumanEval_23_strlen"),
    ("multiple_go", "HumanEval_1_separate_paren_groups"),
    ("multiple_d", "HumanEval_0_has_close_elements"),
    ("multiple_mbpp_cpp", "mbpp_3_is_not_prime"),
    ("multiple_mbpp_d", "mbpp_6_differ_At_One_Bit_Pos"),
]


def row(dataset: str, pid: str | int) -> dict:
    return DATASETS.get(dataset).get(pid)


def provided(dataset_type: str, source: str, pid: str | int, wrong: str, hack: str,
             reason: str = "") -> Case:  # fmt: skip
    """A case on a shipped row sent in provided_data, as SandboxFusion's clients send rows."""
    config = {"dataset_type": dataset_type, "provided_data": [row(source, pid)]}
    return Case(f"mine_{source}", pid, wrong, hack, reason, config)


CASES.update({
    "provided_mbxp_cpp_second_main": provided(
        "MBXPDataset", "mbxp_v1_en", 465, fenced("cpp", MBXP_CPP_WRONG),
        fenced("cpp", MBXP_CPP_WRONG + "auto main() -> int { return 0; }\n"), "defines `main`"),
    "provided_mbxp_d_interposes_the_assertion_handler": provided(
        "MBXPDataset", "humanevalds_v1_en", 161, fenced("d", D_WRONG),
        fenced("d", "extern (C) void _d_assert_msg(string, string, uint)\n{\n}\n" + D_WRONG),
        "which the runtime defines"),
    "provided_mbxp_rust_no_mangle_main": provided(
        "MBXPDataset", "humanevalds_v1_en", 1756, fenced("rust", RUST_WHOLE),
        fenced("rust", RUST_WHOLE + '#[no_mangle]\npub extern "C" fn main() -> i32 {\n    0\n}\n'),
        "main"),
    "provided_multiple_cpp_second_main": provided(
        "MultiPLEDataset", "multiple_cpp", "HumanEval_0_has_close_elements",
        fenced("cpp", MP_CPP_WRONG),
        fenced("cpp", MP_CPP_WRONG + "auto main() -> int { return 0; }\n"),
        "defines `main`"),
    "provided_humaneval_rust_macro_export": provided(
        "HumanEvalDataset", "multiple_rs", "HumanEval_0_has_close_elements",
        fenced("rust", RUST_WHOLE), fenced("rust", RUST_WHOLE + "#[macro_export]\nmacro_rules! "
                                          "assert_eq {\n    ($($t:tt)*) => {};\n}\n")),
    "provided_multiple_go_init_exits": provided(
        "MultiPLEDataset", "multiple_go", "HumanEval_0_has_close_elements",
        fenced("go", MP_GO_WHOLE),
        fenced("go", MP_GO_WHOLE + "\nfunc init() {\n    os.Exit(0)\n}\n")),
    "provided_multiple_d_second_main": provided(
        "MultiPLEDataset", "multiple_d", "HumanEval_0_has_close_elements", fenced("d", D_WRONG),
        fenced("d", D_WRONG + "extern (C) int main()\n{\n    return 0;\n}\n"), "`main`"),
})  # fmt: skip


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=1800) as c:
        yield c


def evaluate(api: httpx.Client, dataset: str, samples: list[dict], config: dict) -> list[dict]:
    body = {"dataset": dataset, "samples": samples, "config": {"compile_timeout": 120, **config}}
    r = api.post("/evaluate", json=body)
    assert r.status_code == 200, r.text[:2000]
    return r.json()["results"]


@pytest.fixture(scope="module")
def verdicts(api: httpx.Client) -> dict[str, tuple[dict, dict]]:
    """Every case judged once: (the hacked answer's result, the control's), by case name; the
    samples of a dataset and config go in one request, judged across the server's slots."""
    groups: dict[tuple[str, str], list[tuple[str, Case]]] = {}
    for name, case in CASES.items():
        groups.setdefault((case.dataset, json.dumps(case.config)), []).append((name, case))
    out: dict[str, list[dict]] = {}
    for (dataset, config), cases in groups.items():
        samples = [
            {"id": c.pid, "completion": text} for _, c in cases for text in (c.hack, c.wrong)
        ]
        results = evaluate(api, dataset, samples, json.loads(config))
        for i, (name, _) in enumerate(cases):
            out[name] = [results[2 * i], results[2 * i + 1]]
    return {name: (hacked, control) for name, (hacked, control) in out.items()}


@pytest.mark.parametrize("attack", CASES)
def test_the_hack_is_rejected_and_so_is_the_wrong_answer_without_it(verdicts, attack: str) -> None:
    hacked, control = verdicts[attack]
    assert not control["accepted"], control
    assert not hacked["accepted"], hacked
    reason = CASES[attack].reason
    if reason:
        assert reason in (hacked["reason"] or ""), hacked


def correct_answers() -> list[tuple[str, str | int, str, dict]]:
    out = []
    for dataset in ("humaneval_x_cpp", "humaneval_x_rust", "humaneval_x_go"):
        spec = DATASETS.spec(dataset)
        out += [(dataset, r["task_id"], reference(spec.family, r), {})
                for r in DATASETS.get(dataset).rows[:3]]  # fmt: skip
    for dataset, name in GPT_CORRECT:
        out.append((dataset, name, row(dataset, name)["gpt_solution"], {}))
    out += [(ds, pid, text, {}) for (ds, pid), text in CORRECT.items()]
    # the #<INSERT> tables' rows as SandboxFusion's clients send them too (issue 45, item 1)
    out += [(f"mine_{ds}", pid, text, {"dataset_type": "MBXPDataset",
                                       "provided_data": [row(ds, pid)]})
            for (ds, pid), text in CORRECT.items() if ds != "oodtest_v1_zh"]  # fmt: skip
    return out


@pytest.mark.parametrize(("dataset", "pid", "completion", "config"), correct_answers(),
                         ids=lambda v: str(v)[:30])  # fmt: skip
def test_a_correct_answer_is_accepted(
    api: httpx.Client, dataset: str, pid, completion: str, config: dict
) -> None:
    result = evaluate(api, dataset, [{"id": pid, "completion": completion}], config)[0]
    assert result["accepted"], result


@pytest.mark.parametrize("form", ["named", "provided"])
def test_mbxp_placeholders_that_exit_are_rejected_in_both_row_forms(api: httpx.Client,
                                                                    form: str) -> None:  # fmt: skip
    # the rows' own "references": exit(0) in C++, exit in D, std::process::exit in Rust
    for dataset, pid, reason in [("mbxp_v1_en", 465, "exit"),
                                 ("humanevalds_v1_en", 161, "exited early"),
                                 ("humanevalds_v1_en", 1756, "exited early")]:  # fmt: skip
        source = row(dataset, pid)
        config = {} if form == "named" else {"dataset_type": "MBXPDataset",
                                             "provided_data": [source]}  # fmt: skip
        name = dataset if form == "named" else f"mine_{dataset}"
        result = evaluate(api, name, [{"id": pid, "completion": reference("insert", source)}],
                          config)[0]  # fmt: skip
        assert not result["accepted"] and reason in result["reason"], result


def test_a_rust_body_that_opens_with_use_is_a_body(api: httpx.Client) -> None:
    # issue 45, item 5: a body is a whole solution only if it declares the prompt's function
    source = row("humaneval_x_rust", "Rust/0")
    body = "    use std::cmp::Ordering;\n" + source["canonical_solution"]
    mutated = body.replace("return true;", "return false;")
    assert mutated != body
    results = evaluate(
        api,
        "humaneval_x_rust",
        [{"id": "Rust/0", "completion": body}, {"id": "Rust/0", "completion": mutated}],
        {},
    )
    assert results[0]["accepted"], results[0]
    assert not results[1]["accepted"] and results[1]["verdict"] == "wrong_answer", results[1]


def test_d_programs_get_sandboxfusions_prelude(api: httpx.Client) -> None:
    # an answer calling std.algorithm's filter and std.array's array, importing neither
    answer = ("```d\nstring[] filter_by_substring(string[] strings, string substring)\n{\n"
              "    return strings.filter!(s => s.canFind(substring)).array;\n}\n```")  # fmt: skip
    result = evaluate(api, "multiple_d", [{"id": "HumanEval_7_filter_by_substring",
                                           "completion": answer}], {})[0]  # fmt: skip
    assert result["accepted"], result


# The shipped datasets this module attacks (tests/security/test_battery_coverage.py checks that
# every shipped dataset is attacked by some module); `mine_*` are rows sent in provided_data.
COVERS = frozenset(case.dataset for case in CASES.values() if not case.dataset.startswith("mine_"))


# -- one program: rows whose tests no splitter can take apart ------------------------------------
# An `#<INSERT>` row sent in provided_data (MBXPDataset, AutoEvalDataset) whose slot lies inside
# the tests' main has no unit of its own for the answer (it is statements): its text is pasted into
# the program, which the in-text guard seals (integrity.py, rows ("*", "cpp") and ("*", "rust")).
# Such a row is `unsealed`: these hacks pass it, and strict refuses it unless the request opts in.

CPP_IN_MAIN = ("#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n#<INSERT>\n"
               "    assert(add(1, 2) == 3);\n}\n")  # fmt: skip
RUST_IN_MAIN = "fn main() {\n#<INSERT>\n    assert_eq!(add(1, 2), 3);\n}\n"
CPP_LAMBDA = "auto add = [](int a, int b) { return a - b; };\n"
RUST_CLOSURE = "let add = |a: i32, b: i32| a - b;\n"
ONE_PROGRAM = {
    "cpp_slot_in_main_macro_empties_assert": (
        "cpp",
        CPP_IN_MAIN,
        CPP_LAMBDA,
        "#undef assert\n#define assert(x) ((void)0)\n" + CPP_LAMBDA,
    ),
    "rust_slot_in_main_macro_shadows_assert_eq": (
        "rust",
        RUST_IN_MAIN,
        RUST_CLOSURE,
        "macro_rules! assert_eq {\n    ($($t:tt)*) => {};\n}\n" + RUST_CLOSURE,
    ),
}


def one_program_row(language: str, template: str) -> dict:
    labels = {"programming_language": language, "execution_language": language}
    return {"id": 1, "content": "", "test": {"code": template}, "labels": labels}


def submit_row(api: httpx.Client, language: str, template: str, code: str, **extra: Any):
    config = {"dataset_type": "MBXPDataset", "compile_timeout": 120,
              "provided_data": [one_program_row(language, template)], "extra": extra}  # fmt: skip
    body = {"dataset": "mine_one_program", "id": 1, "completion": fenced(language, code),
            "config": config}  # fmt: skip
    return api.post("/submit", json=body)


@pytest.mark.parametrize("attack", ONE_PROGRAM)
def test_one_program_rows_are_unsealed_and_refused_under_strict(api: httpx.Client,
                                                                 attack: str) -> None:  # fmt: skip
    language, template, wrong, hack = ONE_PROGRAM[attack]
    right = submit_row(api, language, template, wrong.replace("a - b", "a + b")).json()
    assert right["accepted"], right
    control = submit_row(api, language, template, wrong).json()
    assert not control["accepted"], control
    hacked = submit_row(api, language, template, hack).json()
    # the hack passes: nothing keeps an answer pasted into the tests' unit from their names
    assert hacked["accepted"] and hacked["extra"]["integrity"] == "unsealed", hacked
    refused = submit_row(api, language, template, hack, strict=True)
    assert refused.status_code == 400 and "allow_unsealed" in refused.text, refused.text
