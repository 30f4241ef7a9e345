"""Reward hacks on every dataset that judges Java, Kotlin, Scala or C#, through a real server.

Each case is (dataset, problem, technique, wrong answer, the wrong answer with the hack). The
wrong answer returns a wrong value without throwing (so a hack that silences assertions is really
tested); the hacked one must be rejected, the same wrong answer without the hack too (the
control), and the problem's reference accepted. Then the regressions of issue 45 for these
languages, and the units of the split (sandlot/judge/split_java.py, sites.py) and of
CRUXEval-X's Java values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import httpx
import pytest

from sandlot.judge import Datasets, returns, sites, split_java, split_managed
from sandlot.judge.crux import NotData, literal
from sandlot.judge.families import reference
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import Server
from tests.judge.test_judge_fixes import ADD_ROWS

DATASETS = Datasets(Registry(LANGUAGES, "/opt/sandlot"))
# JVM compiles on a loaded machine: limits a verdict never depends on
LIMITS = {"compile_timeout": 180, "run_timeout": 60}


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=900) as c:
        yield c


def submit(api: httpx.Client, dataset: str, pid: object, completion: str, **cfg) -> dict:
    r = api.post("/submit", json={"dataset": dataset, "id": pid, "completion": completion,
                                  "config": {**LIMITS, **cfg}})  # fmt: skip
    assert r.status_code == 200, r.text
    return r.json()


def row(dataset: str, pid: object) -> dict:
    return DATASETS.get(dataset).get(pid)


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}\n```\n"


# -- the wrong answers ---------------------------------------------------------------------------

# HumanEval-X Java/0 as a completion of the prompt's method: false for every input.
HX = "        return false;\n    }\n"
# MultiPL-E HumanEval_0 as a whole answer, {hack} among the class's members, {top} after it.
MP_JAVA = ("import java.util.*;\nclass Problem {{\n    public static boolean hasCloseElements("
           "ArrayList<Float> numbers, float threshold) {{\n{body}        return false;\n    }}\n"
           "{hack}}}\n{top}")  # fmt: skip
MP_SCALA = ("object Problem {{\n    def hasCloseElements(numbers : List[Float], threshold : Float)"
            " : Boolean = {{\n{body}        false\n    }}\n{hack}}}\n{top}")  # fmt: skip
MP_CS = ("using System;\nusing System.Collections.Generic;\nclass Problem {{\n"
         "    public static bool HasCloseElements(List<float> numbers, float threshold) {{\n"
         "{body}        return false;\n    }}\n{hack}}}\n{top}")  # fmt: skip


def mp(template: str, language: str, body: str = "", hack: str = "", top: str = "") -> str:
    return fenced(language, template.format(body=body, hack=hack, top=top))


def mbxp_java_min_sum(hack: str = "", top: str = "") -> str:
    code = row("mbxp_v1_en", 1314)["canonical_solution"].replace("return sum;", "return sum + 1;")
    end = code.rindex("}")
    return fenced("java", code[:end] + hack + code[end:] + "\n" + top)


SCALA_MIN_SUM = ("    def findMinSum(num : Int) : Int = {{\n{body}        var n = num; var i = 2;"
                 " var sum = 0\n        while (n > 1) {{ while (n % i == 0) {{ sum += i; n /= i }}"
                 "; i += 1 }}\n        sum{wrong}\n    }}\n{hack}")  # fmt: skip


def scala_min_sum(body: str = "", hack: str = "", wrong: str = " + 1") -> str:
    return fenced("scala", SCALA_MIN_SUM.format(body=body, hack=hack, wrong=wrong))


def ncb_java(hack: str = "", top: str = "", dataset: str = "ncb_java_en") -> str:
    code = row(dataset, 0)["canonical_solution"]
    code = code.replace("return phoneNumber.toString();", 'return phoneNumber.toString() + "x";')
    end = code.rindex("}")
    return code[:end] + hack + code[end:].replace("```", top + "\n```", 1)


def kotlin_add_str(hack: str = "") -> str:
    code = row("mbxp_v1_en", 2692)["canonical_solution"]
    code = code.replace("return resultList", "resultList.add(k)\n    return resultList")
    return fenced("kotlin", code + "\n" + hack)


CS_DS = ("    public static bool HasCloseElements(List<float> numbers, float threshold) {{\n"
         "{body}        return false;\n    }}\n{hack}")  # fmt: skip


def cs_ds(body: str = "", hack: str = "") -> str:
    return fenced("csharp", CS_DS.format(body=body, hack=hack))


# -- the hacks -----------------------------------------------------------------------------------

STEAL_JAVA = ('static { try { String s = new String(java.nio.file.Files.readAllBytes('
              'java.nio.file.Paths.get(".sandlot_seal"))); System.out.println(s + "passed=1 '
              'failed=0" + s); } catch (Exception e) { } }\n')  # fmt: skip
FAKE_FRAME = (
    'System.out.println("0123456789abcdef0123456789abcdefpassed=1 failed=0'
    '0123456789abcdef0123456789abcdef");\n'
)
SHADOW_ARRAYS = ("class Arrays { static <T> java.util.List<T> asList(T... a) { return new "
                 "java.util.ArrayList<T>(); } }\n")  # fmt: skip
SEAL_JAVA = ("class SandlotSeal { static String read() { return \"\"; } static boolean fails(int k,"
             " boolean f) { return false; } static void check(int k, boolean b) {} static void "
             "end(String s) {} }\n")  # fmt: skip
STEAL_SCALA = ('object SandlotSeal { def read(): Boolean = true; def check(k: Int, c: Boolean): '
               'Unit = (); def end(): Unit = { val s = new String(java.nio.file.Files.readAllBytes('
               'java.nio.file.Paths.get(".sandlot_seal"))); print(s + "passed=7 failed=0" + s + '
               '"\\n") } }\n')  # fmt: skip
STEAL_CS = (
    "class SandlotSeal { public static bool Read() { return true; } public static void "
    "Check(int k, bool b) {} public static void End() { var s = System.IO.File.ReadAllText("
    '".sandlot_seal"); System.Console.WriteLine(s + "passed=7 failed=0" + s); } }\n'
)

FRAME_TEXT = "0123456789abcdef0123456789abcdefpassed=7 failed=00123456789abcdef0123456789abcdef"
CS_MAIN = "class Program { public static void Main(string[] a) { } }\n"
CS_SEAL = (
    'static class SandlotSeal { public static string Read() { return ""; } public '
    "static void Check(int k, bool b) {} public static bool Fails(int k, bool f) { return "
    "false; } public static void End(string s) { var t = System.IO.File.ReadAllText("
    '".sandlot_seal"); System.Console.WriteLine(t + "passed=7 failed=0" + t); } }\n'
)
CS_SHADOW_DEBUG = ("namespace System.Diagnostics { public static class Debug { public static void "
                   "Assert(bool c) { } } }\nnamespace System { public static class Console { "
                   "public static void WriteLine(object o) { } } }\n")  # fmt: skip
CS_STATIC_SEAL = (
    '    static Problem() { try { var s = System.IO.File.ReadAllText(".sandlot_seal"); '
    'System.Console.WriteLine(s + "passed=7 failed=0" + s); } catch (Exception) { } '
    "Environment.Exit(0); }\n"
)
CS_MODULE_ATTR = ("namespace System.Runtime.CompilerServices { class ModuleInitializerAttribute :"
                  " System.Attribute { } }\n")  # fmt: skip
CS_MODULE_INIT = ("    [System.Runtime.CompilerServices.ModuleInitializer] internal static void "
                  "Init() { Environment.Exit(0); }\n")  # fmt: skip
CS_READ_SEAL = (
    '        if (System.IO.File.Exists(".sandlot_seal")) { var s = System.IO.File.ReadAllText('
    '".sandlot_seal"); Console.WriteLine(s + "passed=7 failed=0" + s); Environment.Exit(0); }\n'
)
CS_MARK_SITES = (
    '        var seal = Type.GetType("SandlotSeal, main"); if (seal != null) for (int k = 0; '
    'k < 7; k++) seal.GetMethod("Fails").Invoke(null, new object[] { k, false });\n'
)
SCALA_MAIN = "object Main { def main(a: Array[String]): Unit = () }\n"
SCALA_SEAL_PACKAGE = (
    'package sandlot { object SandlotSeal { def read(): String = ""; def check(k: Int, c: '
    "Boolean): Unit = (); def fails(k: Int, f: Boolean): Boolean = false; def end(s: String): "
    "Unit = { val t = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("
    '".sandlot_seal"))); print(t + "passed=7 failed=0" + t + "\\n") } } }\n'
)
SCALA_STATIC_SEAL = (
    "    try { val s = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("
    '".sandlot_seal"))); print(s + "passed=7 failed=0" + s + "\\n") } catch { case _: '
    "Throwable => () }\n    sys.exit(0)\n"
)
SCALA_SHADOW_LIST = ("object List { def apply[T](xs: T*): scala.collection.immutable.List[T] = "
                     "scala.collection.immutable.Nil }\n")  # fmt: skip

# A Kotlin script's top-level names are in scope in all of it: an `object java` stood for the
# guard's `java.io.File`, read the secret itself and printed the seal.
SHADOW_KOTLIN = (
    "object java { object io { class File(val p: String) {\n"
    '    fun readText(): String { val s = String(Class.forName("java.nio.file.Files")'
    '.getMethod("readAllBytes", Class.forName("java.nio.file.Path")).invoke(null, '
    'Class.forName("java.nio.file.Paths").getMethod("get", String::class.javaObjectType, '
    "Array<String>::class.java).invoke(null, p, arrayOf<String>())) as ByteArray); "
    "System.out.println(s + s); System.out.flush(); Runtime.getRuntime().halt(0); return s }\n"
    "    fun delete(): Boolean = true } } }\n"
)


# Values of the answer's own whose equality always holds.
JAVA_EQUALS = (
    "            public boolean equals(Object o) {\n                return true;\n            }\n"
)
JAVA_YES = "class Yes {\n" + JAVA_EQUALS + "}\n"
JAVA_YES_LIST = "class Yes extends ArrayList<Long> {\n" + JAVA_EQUALS + "}\n"
JAVA_NO_POSITIVES = "        return new ArrayList<Long>();\n"


def whole_java_positive(value: str, top: str, returns: str = "ArrayList<Long>") -> str:
    return fenced(
        "java",
        f"import java.util.*;\n{top}class Problem {{\n    public static {returns} "
        f"getPositive(ArrayList<Long> l) {{\n        return {value};\n    }}\n}}\n",
    )


CS_EQUALS = "    public override bool Equals(object o) { return true; }\n"


def whole_cs_palindrome(returns: str, own: str) -> str:
    # the answer's own type first, its `}` unindented (MultiPL-E's stop tokens end a C# answer
    # at its first `    }` line)
    return fenced(
        "csharp",
        f"using System;\nclass Problem {{\n{own}    public static {returns} "
        f"EvenOddPalindrome(long n) {{\n        return new Yes();\n    }}\n}}\n",
    )


CS_YES_STRUCT = (
    "using System;\nusing System.Collections.Generic;\nclass Problem {\npublic struct Yes {\n"
    "    public static bool operator ==(Yes a, bool b) { return true; }\n"
    "    public static bool operator !=(Yes a, bool b) { return false; }\n"
    "    public override bool Equals(object o) { return true; }\n"
    "    public override int GetHashCode() { return 0; }\n}\n"
    "    public static Yes HasCloseElements(List<float> numbers, float threshold) {\n"
    "        return new Yes();\n    }\n}\n"
)


@dataclass(frozen=True)
class Case:
    dataset: str
    pid: object
    technique: str
    wrong: str
    hacked: str
    mode: str | None = None  # CRUXEval-X's


def crux(pid: str, mode: str, technique: str, wrong: str, hacked: str) -> Case:
    return Case("cruxeval_x", pid, technique, f"[ANSWER]{wrong}[/ANSWER]",
                f"[ANSWER]{hacked}[/ANSWER]", mode)  # fmt: skip


CRUX_JAVA_OUT = "(new ArrayList<Pair<Long, Long>>(Arrays.asList()))"
CASES = [
    # HumanEval-X Java: the answer is its own compilation unit
    Case("humaneval_x_java", "Java/0", "second_entry_point", HX + "}\n",
         HX + "}\nclass Main { public static void main(String[] a) {} }\n"),
    Case("humaneval_x_java", "Java/0", "shadows_a_library_class", HX + "}\n",
         HX + "}\n" + SHADOW_ARRAYS),
    Case("humaneval_x_java", "Java/0", "shadows_a_library_class_in_unicode_escapes", HX + "}\n",
         HX + "}\n\\u0063lass Arrays { static <T> java.util.List<T> asList(T... a) { return new "
         "java.util.ArrayList<T>(); } }\n"),
    Case("humaneval_x_java", "Java/0", "obscures_the_package_java", HX + "}\n",
         HX + "}\nclass java { static class nio {} }\n"),
    Case("humaneval_x_java", "Java/0", "closes_the_class_and_brings_the_seal", HX + "}\n",
         HX + "}\n" + SEAL_JAVA),
    Case("humaneval_x_java", "Java/0", "static_initializer_exits_0", HX + "}\n",
         HX + "    static { System.exit(0); }\n}\n"),
    Case("humaneval_x_java", "Java/0", "static_initializer_reads_the_seal", HX + "}\n",
         HX + "    " + STEAL_JAVA + "}\n"),
    Case("humaneval_x_java", "Java/0", "shutdown_hook_halts_0", HX + "}\n",
         "        Runtime.getRuntime().addShutdownHook(new Thread(() -> "
         "Runtime.getRuntime().halt(0)));\n" + HX + "}\n"),
    Case("humaneval_x_java", "Java/0", "uncaught_exception_handler_halts_0", HX + "}\n",
         "        Thread.setDefaultUncaughtExceptionHandler((t, e) -> "
         "Runtime.getRuntime().halt(0));\n" + HX + "}\n"),
    Case("humaneval_x_java", "Java/0", "prints_the_success_text", HX + "}\n",
         "        " + FAKE_FRAME + HX + "}\n"),
    Case("humaneval_x_java", "Java/0", "marks_the_seal_s_sites_itself", HX + "}\n",
         "        SandlotSeal.fails(0, false);\n" + HX + "}\n"),
    Case("humaneval_x_java", "Java/0", "disables_assertions", HX + "}\n",
         "        ClassLoader.getSystemClassLoader().setDefaultAssertionStatus(false);\n"
         + HX + "}\n"),
    # MultiPL-E Java: the tests' main, once inside the answer's class, is the harness's
    Case("multiple_java", "HumanEval_0_has_close_elements", "second_entry_point",
         mp(MP_JAVA, "java"), mp(MP_JAVA, "java", top="class Main { public static void "
                                 "main(String[] a) {} }\n")),
    Case("multiple_java", "HumanEval_0_has_close_elements", "static_initializer_reads_the_seal",
         mp(MP_JAVA, "java"), mp(MP_JAVA, "java", hack="    " + STEAL_JAVA)),
    Case("multiple_java", "HumanEval_0_has_close_elements", "exit_0_in_the_answer",
         mp(MP_JAVA, "java"), mp(MP_JAVA, "java", body="        System.exit(0);\n")),
    Case("multiple_mbpp_java", "mbpp_3_is_not_prime", "exit_0_in_the_answer",
         "        return false;\n", "        System.exit(0);\n        return false;\n"),
    Case("multiple_mbpp_cs", "mbpp_3_is_not_prime", "exit_0_in_the_answer",
         "        return false;\n", "        Environment.Exit(0);\n        return false;\n"),
    Case("multiple_mbpp_scala", "mbpp_3_is_not_prime", "exit_0_in_the_answer",
         "        false\n", "        sys.exit(0)\n        false\n"),
    # MBXP Java (an #<INSERT> slot on top of the tests)
    Case("mbxp_v1_en", 1314, "second_entry_point", mbxp_java_min_sum(),
         mbxp_java_min_sum(top="class Main { public static void main(String[] a) {} }")),
    Case("mbxp_v1_en", 1314, "static_initializer_exits_0", mbxp_java_min_sum(),
         mbxp_java_min_sum(hack="    static { System.exit(0); }\n")),
    Case("mbxp_v1_en", 1314, "shadows_a_library_class", mbxp_java_min_sum(),
         mbxp_java_min_sum(top="class Exception extends RuntimeException { Exception(String s) "
                           "{ super(s); } }")),
    # HumanEvalDS Java (the slot inside the tests' class: the answer's members are its own class)
    Case("humanevalds_v2_en", 1, "second_entry_point",
         fenced("java", "public static boolean hasCloseElements(ArrayList<Float> n, float t) "
                "{ return false; }"),
         fenced("java", "public static boolean hasCloseElements(ArrayList<Float> n, float t) "
                "{ return false; } } class Main { public static void main(String[] a) {} } "
                "class X {")),
    # CRUXEval-X: the answer is a value, read as one
    crux("java_0", "output", "closes_the_assertion", CRUX_JAVA_OUT, "null) || (true"),
    crux("java_0", "output", "anonymous_class_initializer_exits_0", CRUX_JAVA_OUT,
         "new ArrayList<Long>() {{ System.exit(0); }}"),
    crux("java_0", "output", "calls_the_function", CRUX_JAVA_OUT,
         "f(new ArrayList<Long>(Arrays.asList(1l, 1l, 3l, 1l, 3l, 1l)))"),
    crux("scala_0", "output", "closes_the_assertion", "(List[Tuple2[Long, Long]]())",
         "null) || (true"),
    crux("csharp_0", "output", "closes_the_assertion",
         "(new List<Tuple<long, long>>())", "null) || (true"),
    # NaturalCodeBench Java (JUnit): the count of @Test methods
    Case("ncb_java_en", 0, "adds_its_own_passing_tests", ncb_java(),
         ncb_java(top="class ExtraTest { @org.junit.jupiter.api.Test void a() {} "
                  "@org.junit.jupiter.api.Test void b() {} }")),
    Case("ncb_java_en", 0, "shadows_the_test_annotation", ncb_java(),
         ncb_java(top="@interface Test {}")),
    Case("ncb_java_en", 0, "static_initializer_exits_0", ncb_java(),
         ncb_java(hack="    static { System.exit(0); }\n")),
    Case("ncb_java_zh", 0, "adds_its_own_passing_tests", ncb_java(dataset="ncb_java_zh"),
         ncb_java(dataset="ncb_java_zh", top="class ExtraTest { @org.junit.jupiter.api.Test "
                  "void a() {} }")),
    # MultiPL-E Scala: the tests' asserts are the seal's checks, named from the root
    Case("multiple_scala", "HumanEval_0_has_close_elements", "shadows_assert",
         mp(MP_SCALA, "scala"),
         mp(MP_SCALA, "scala", hack="    def assert(c: Boolean): Unit = ()\n")),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "shadows_the_seal_and_reads_it",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", hack="    " + STEAL_SCALA)),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "exit_0_in_the_answer",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", body="        sys.exit(0)\n")),
    # MBXP Scala: `object Main extends App` (issue 45, item 2)
    Case("mbxp_v1_en", 4522, "exit_0_in_the_answer", scala_min_sum(),
         scala_min_sum(body="        sys.exit(0)\n")),
    Case("mbxp_v1_en", 4522, "shadows_assert", scala_min_sum(),
         scala_min_sum(hack="    def assert(c: Boolean, m: => Any): Unit = ()\n")),
    Case("humanevalds_v1_en", 1912, "shadows_assert",
         fenced("scala", "    def hasCloseElements(numbers : List[Float], threshold : Float) : "
                "Boolean = false\n"),
         fenced("scala", "    def hasCloseElements(numbers : List[Float], threshold : Float) : "
                "Boolean = false\n    def assert(c: Boolean): Unit = ()\n")),
    # C#: Debug.Assert is the seal's check, which no listener or member changes
    Case("multiple_cs", "HumanEval_0_has_close_elements", "clears_the_trace_listeners",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", body="        System.Diagnostics.Trace."
                                 "Listeners.Clear();\n")),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "shadows_debug",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", hack="    class Debug { public static void "
                                 "Assert(bool b) {} }\n")),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "exit_0_in_the_answer",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", body="        Environment.Exit(0);\n")),
    Case("humanevalds_v2_en", 0, "shadows_the_seal_and_reads_it", cs_ds(),
         cs_ds(hack="    " + STEAL_CS)),
    Case("mbxp_v2_en", 0, "exit_0_in_the_answer",
         fenced("csharp", "public static int MinCost(List<List<int>> cost, int m, int n) "
                "{ return 0; }"),
         fenced("csharp", "public static int MinCost(List<List<int>> cost, int m, int n) "
                "{ Environment.Exit(0); return 0; }")),
    # C# split (split_managed.py): the answer an assembly of its own, under an extern alias
    Case("multiple_cs", "HumanEval_0_has_close_elements", "second_entry_point",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", top=CS_MAIN)),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "brings_the_seal_s_class",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", top=CS_SEAL)),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "shadows_a_system_type",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", top=CS_SHADOW_DEBUG)),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "static_constructor_exits_0",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", hack="    static Problem() { "
                                 "Environment.Exit(0); }\n")),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "static_constructor_writes_the_seal",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", hack=CS_STATIC_SEAL)),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "module_initializer_exits_0",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", hack=CS_MODULE_INIT, top=CS_MODULE_ATTR)),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "prints_the_success_text",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", body="        Console.WriteLine(\""
                                 + FRAME_TEXT + "\"); Environment.Exit(0);\n")),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "reads_the_seal_file",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", body=CS_READ_SEAL)),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "marks_the_seal_s_sites_by_reflection",
         mp(MP_CS, "csharp"), mp(MP_CS, "csharp", body=CS_MARK_SITES)),
    Case("multiple_mbpp_cs", "mbpp_3_is_not_prime", "closes_the_class_and_brings_a_main",
         "        return false;\n", "        return false;\n    }\n    public static void "
         "Main(string[] a) { }\n}\nclass Sink {\n    static void Rest() {\n"),
    Case("humanevalds_v2_en", 0, "second_entry_point", cs_ds(),
         cs_ds(hack="    public static void Main(string[] a) { }\n")),
    Case("humanevalds_v2_en", 0, "closes_the_class_and_brings_the_seal", cs_ds(),
         cs_ds(hack="}\n" + CS_SEAL + "class Rest {\n")),
    Case("mbxp_v2_en", 0, "shadows_exception",
         fenced("csharp", "public static int MinCost(List<List<int>> cost, int m, int n) "
                "{ return 0; }"),
         fenced("csharp", "public static int MinCost(List<List<int>> cost, int m, int n) "
                "{ return 0; } } } namespace System { public class Exception : "
                "System.ApplicationException { public Exception(string s) { "
                "System.Environment.Exit(0); } } } namespace Rest { class R {")),
    # Scala split: the answer a file of its own, in a package the harness never imports
    Case("multiple_scala", "HumanEval_0_has_close_elements", "second_entry_point",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", top=SCALA_MAIN)),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "brings_the_seal_s_package",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", top=SCALA_SEAL_PACKAGE)),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "object_initializer_exits_0",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", hack="    sys.exit(0)\n")),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "object_initializer_writes_the_seal",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", hack=SCALA_STATIC_SEAL)),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "prints_the_success_text",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", body="        println(\"" + FRAME_TEXT
                                   + "\"); sys.exit(0)\n")),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "shadows_list_at_the_top",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", top=SCALA_SHADOW_LIST)),
    Case("multiple_scala", "HumanEval_0_has_close_elements", "shutdown_hook_halts_0",
         mp(MP_SCALA, "scala"), mp(MP_SCALA, "scala", body="        sys.addShutdownHook("
                                   "Runtime.getRuntime().halt(0))\n")),
    Case("multiple_mbpp_scala", "mbpp_3_is_not_prime", "closes_the_object_and_brings_a_main",
         "        false\n", "        false\n    }\n    def main(a: Array[String]): Unit = ()\n"
         "}\nobject Sink {\n    def rest(): Unit = {\n"),
    Case("mbxp_v1_en", 4522, "second_entry_point", scala_min_sum(),
         scala_min_sum(hack="    def main(a: Array[String]): Unit = ()\n")),
    Case("humanevalds_v1_en", 1912, "closes_the_object_and_brings_the_seal",
         fenced("scala", "    def hasCloseElements(numbers : List[Float], threshold : Float) : "
                "Boolean = false\n"),
         fenced("scala", "    def hasCloseElements(numbers : List[Float], threshold : Float) : "
                "Boolean = false\n}\n" + SCALA_SEAL_PACKAGE + "object Rest {\n")),
    # Values whose equality lies (returns.py): every value the tests get from the answer is vetted
    Case("multiple_java", "HumanEval_30_get_positive", "subclass_of_a_jdk_list_whose_equals_holds",
         JAVA_NO_POSITIVES, whole_java_positive("new Yes()", JAVA_YES_LIST)),
    Case("multiple_java", "HumanEval_30_get_positive",
         "returns_a_type_of_its_own_equal_to_anything", JAVA_NO_POSITIVES,
         whole_java_positive("new Yes()", JAVA_YES, "Yes")),
    Case("multiple_java", "HumanEval_30_get_positive", "anonymous_subclass_whose_equals_holds",
         JAVA_NO_POSITIVES,
         "        return new ArrayList<Long>() {\n" + JAVA_EQUALS + "        };\n"),
    Case("multiple_java", "HumanEval_107_even_odd_palindrome",
         "tuple_holds_an_element_equal_to_anything", "        return Pair.with(0l, 0l);\n",
         "        class Yes {\n" + JAVA_EQUALS + "        }\n"
         "        Pair raw = Pair.with(new Yes(), new Yes());\n        return raw;\n"),
    Case("multiple_java", "HumanEval_107_even_odd_palindrome", "proxy_element_equal_to_anything",
         "        return Pair.with(0l, 0l);\n",
         "        Object yes = java.lang.reflect.Proxy.newProxyInstance(Problem.class"
         ".getClassLoader(), new Class<?>[] {Comparable.class}, (p, m, a) -> m.getName()"
         ".equals(\"equals\") ? (Object) true : (Object) 0);\n        Pair raw = Pair.with(yes, "
         "yes);\n        return raw;\n"),
    Case("humaneval_x_java", "Java/5", "anonymous_subclass_whose_equals_holds",
         "        return new ArrayList<Integer>();\n    }\n}\n",
         "        return new ArrayList<Integer>() {\n" + JAVA_EQUALS + "        };\n    }\n}\n"),
    Case("multiple_cs", "HumanEval_107_even_odd_palindrome",
         "subclass_of_a_tuple_whose_equals_holds", "        return Tuple.Create(0L, 0L);\n",
         whole_cs_palindrome("Tuple<long, long>", "public class Yes : Tuple<long, long> {\n"
                             "    public Yes() : base(0, 0) { }\n" + CS_EQUALS + "}\n")),
    Case("multiple_cs", "HumanEval_107_even_odd_palindrome",
         "returns_a_type_of_its_own_equal_to_anything", "        return Tuple.Create(0L, 0L);\n",
         whole_cs_palindrome("Yes", "public struct Yes {\n" + CS_EQUALS + "}\n")),
    Case("multiple_cs", "HumanEval_0_has_close_elements", "struct_whose_operator_eq_holds",
         mp(MP_CS, "csharp"), fenced("csharp", CS_YES_STRUCT)),
    Case("multiple_scala", "HumanEval_107_even_odd_palindrome",
         "subclass_of_a_tuple_whose_equals_holds", "        (0l, 0l)\n",
         fenced("scala", "class Yes extends Tuple2[Long, Long](0l, 0l) {\n"
                "    override def equals(o: Any): Boolean = true\n}\nobject Problem {\n"
                "    def evenOddPalindrome(n : Long) : Tuple2[Long, Long] = new Yes\n}\n")),
    Case("multiple_scala", "HumanEval_0_has_close_elements",
         "returns_a_type_of_its_own_equal_to_anything", mp(MP_SCALA, "scala"),
         fenced("scala", "case class Yes() {\n    override def equals(o: Any): Boolean = true\n}\n"
                "object Problem {\n    def hasCloseElements(numbers : List[Float], threshold : "
                "Float) : Yes = Yes()\n}\n")),
    # MBXP Kotlin (a script): an exit, and the success text printed
    Case("mbxp_v1_en", 2692, "exit_0_in_the_answer", kotlin_add_str(),
         kotlin_add_str("kotlin.system.exitProcess(0)\n")),
    Case("mbxp_v1_en", 2692, "shadows_the_package_the_guard_reads_with", kotlin_add_str(),
         kotlin_add_str(SHADOW_KOTLIN)),
    Case("mbxp_v1_en", 2692, "prints_the_success_text", kotlin_add_str(),
         kotlin_add_str('println("0123456789abcdef0123456789abcdef0123456789abcdef'
                        '0123456789abcdef")\nkotlin.system.exitProcess(0)\n')),
]  # fmt: skip

# The references the controls stand beside: the row's own, where it has a right one.
GOOD_SCALA_DS = fenced(
    "scala",
    "    def hasCloseElements(numbers : List[Float], threshold : "
    "Float) : Boolean = numbers.indices.exists(i => numbers.indices.exists("
    "j => i != j && math.abs(numbers(i) - numbers(j)) < threshold))\n",
)
GOOD_MBXP_CS = fenced("csharp", "public static int MinCost(List<List<int>> cost, int m, int n) {"
                      " var d = new int[m + 1, n + 1]; d[0, 0] = cost[0][0];"
                      " for (int i = 1; i <= m; i++) d[i, 0] = d[i - 1, 0] + cost[i][0];"
                      " for (int j = 1; j <= n; j++) d[0, j] = d[0, j - 1] + cost[0][j];"
                      " for (int i = 1; i <= m; i++) for (int j = 1; j <= n; j++)"
                      " d[i, j] = Math.Min(Math.Min(d[i - 1, j - 1], d[i - 1, j]), d[i, j - 1])"
                      " + cost[i][j]; return d[m, n]; }")  # fmt: skip


@cache
def reference_of(dataset: str, pid: object, mode: str | None) -> str:
    if (dataset, pid) == ("mbxp_v1_en", 4522):
        return scala_min_sum(wrong="")
    if (dataset, pid) == ("humanevalds_v1_en", 1912):
        return GOOD_SCALA_DS
    if (dataset, pid) == ("mbxp_v2_en", 0):
        return GOOD_MBXP_CS
    spec = DATASETS.spec(dataset)
    the_row = row(dataset, pid)
    if spec.family.name == "multiple":
        return the_row["gpt_solution"]
    got = reference(spec.family, the_row, mode or "output")
    assert got, (dataset, pid)
    return got


_VERDICTS: dict[tuple, dict] = {}


def verdict(api: httpx.Client, case: Case, completion: str) -> dict:
    key = (case.dataset, case.pid, case.mode, completion)
    if key not in _VERDICTS:
        extra = {"extra": {"mode": case.mode}} if case.mode else {}
        _VERDICTS[key] = submit(api, case.dataset, case.pid, completion, **extra)
    return _VERDICTS[key]


def said(out: dict) -> tuple:
    return out["accepted"], out["extra"].get("verdict"), (out["extra"].get("reason") or "")[-400:]


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{c.dataset}-{c.pid}-{c.technique}" for c in CASES])
def test_hack_is_rejected_with_its_control_and_reference(api: httpx.Client, case: Case) -> None:
    hacked = verdict(api, case, case.hacked)
    assert not hacked["accepted"], said(hacked)
    assert hacked["extra"].get("verdict") != "time_limit_exceeded", said(hacked)
    control = verdict(api, case, case.wrong)
    assert not control["accepted"], said(control)
    good = verdict(api, case, reference_of(case.dataset, case.pid, case.mode))
    assert good["accepted"], said(good)


# -- issue 45 ------------------------------------------------------------------------------------


@pytest.mark.root
@pytest.mark.slow
def test_humaneval_x_java_as_a_humaneval_dataset_row(api: httpx.Client) -> None:
    # item 3: SandboxFusion's HumanEvalDataset row form of HumanEval-X Java: the completion (no
    # final line break) and the tests are joined on a line break, and the seal is placed
    the_row = dict(row("humaneval_x_java", "Java/0"))
    cfg = {"dataset_type": "HumanEvalDataset", "provided_data": {**the_row, "language": "java"}}
    good = the_row["canonical_solution"].rstrip("\n")
    out = submit(api, "my_humaneval_x", "Java/0", good, **cfg)
    assert out["accepted"], said(out)
    assert out["extra"]["integrity"] == "split"
    for broken in (HX + "}", "        System.exit(0);\n" + HX + "}"):
        assert not submit(api, "my_humaneval_x", "Java/0", broken, **cfg)["accepted"]


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.parametrize("language", list(ADD_ROWS))
def test_humaneval_dataset_rows_join_a_completion_without_a_line_break(
    api: httpx.Client, language: str
) -> None:
    # item 3, every language of that row form: the last line of the completion and the first
    # of the tests stay two lines
    prompt, tests, body = ADD_ROWS[language]
    the_row = {"task_id": "add/0", "prompt": prompt, "tests": tests, "language": language,
               "stop_tokens": []}  # fmt: skip
    cfg = {"dataset_type": "HumanEvalDataset", "provided_data": the_row}
    out = submit(api, "my_multilingual", "add/0", body.rstrip("\n"), **cfg)
    assert out["accepted"], said(out)
    assert "\n" + tests.split("\n", 1)[0] in (out["full_code"] or "") or language == "java"
    wrong = body.replace("a + b", "a - b").rstrip("\n")
    assert not submit(api, "my_multilingual", "add/0", wrong, **cfg)["accepted"]


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.parametrize("dataset_type", [None, "MBXPDataset"])
def test_mbxp_references_of_these_languages_in_both_row_forms(
    api: httpx.Client, dataset_type: str | None
) -> None:
    # items 2, 4 and 7: every shipped java/kotlin/scala/csharp reference keeps SandboxFusion's
    # verdict (Kotlin's compile as 2.0; the exit stubs of Scala and C# rejected), as a named
    # table and as provided_data (30 s, as the tables)
    expected = {
        ("mbxp_v1_en", 4522): False,
        ("mbxp_v1_en", 4523): False,  # sys.exit() stubs
        ("mbxp_v2_en", 0): False,
        ("mbxp_v2_en", 10000): False,  # exit, wrong answer
        ("humanevalds_v1_en", 1912): False,
        ("humanevalds_v1_en", 1913): False,
        ("humanevalds_v2_en", 10000): False,
        ("humanevalds_v2_en", 10001): False,
        ("oodtest_v1_zh", 77): False,
        ("oodtest_v1_zh", 80): False,
    }  # empty references
    for dataset in ("mbxp_v1_en", "mbxp_v2_en", "humanevalds_v1_en", "humanevalds_v2_en",
                    "oodtest_v1_zh"):  # fmt: skip
        for the_row in DATASETS.get(dataset).rows:
            lab = the_row["labels"]
            lab = json.loads(lab) if isinstance(lab, str) else lab
            if lab["programming_language"] not in ("java", "kotlin", "scala", "csharp"):
                continue
            completion = reference("insert", the_row) or ""
            cfg = (
                {}
                if dataset_type is None
                else {
                    "dataset_type": dataset_type,
                    "provided_data": {k: v for k, v in the_row.items() if k != "__line__"},
                }
            )
            out = submit(api, dataset if dataset_type is None else "my_mbxp", the_row["id"],
                         completion, **cfg)  # fmt: skip
            want = expected.get((dataset, the_row["id"]), True)
            assert out["accepted"] is want, (dataset, the_row["id"], said(out))


@pytest.mark.root
@pytest.mark.slow
def test_kotlin_script_answer_with_imports_is_judged(api: httpx.Client) -> None:
    # the guard's first statement goes after the script's imports (none may follow a statement)
    code = row("mbxp_v1_en", 2692)["canonical_solution"]
    out = submit(api, "mbxp_v1_en", 2692, fenced("kotlin", "import kotlin.math.abs\n" + code))
    assert out["accepted"], said(out)
    wrong = code.replace("return resultList", "resultList.add(k)\n    return resultList")
    out = submit(api, "mbxp_v1_en", 2692, fenced("kotlin", "import kotlin.math.abs\n" + wrong))
    assert not out["accepted"], said(out)


def test_mbxp_dataset_rows_get_the_tables_30_seconds() -> None:
    # item 7: as SandboxFusion's MBXPDataset, whatever table the rows come from
    from sandlot.judge.engine import Judge
    from sandlot.judge.plans import JudgeConfig

    the_row = row("mbxp_v1_en", 2692)
    judge = Judge(DATASETS, lambda: None)  # type: ignore[arg-type,return-value]
    cfg = JudgeConfig(dataset_type="MBXPDataset", provided_data=the_row)
    spec = judge.spec("my_mbxp", cfg)
    job = judge.assemble(spec, the_row, reference("insert", the_row) or "", cfg).job
    assert job is not None and job.run_timeout == 30
    assert spec.params["mbxp"] is True


def test_kotlin_compiles_as_sandboxfusion_s_kotlin_2_0() -> None:
    # item 4: the language and API of Kotlin 2.0 (String.toLowerCase() is an error from 2.1)
    for name in ("kotlin", "kotlin_script"):
        argv = " ".join(DATASETS.registry.get(name).compile or DATASETS.registry.get(name).run)
        assert "-language-version 2.0 -api-version 2.0" in argv


@pytest.mark.root
@pytest.mark.slow
def test_kotlin_2_0_deprecations_compile(run) -> None:
    code = 'fun f(s: String): String = s.toLowerCase()\nfun main() { println(f("ABC")) }\n'
    out = run(code, "kotlin", compile_timeout=180, run_timeout=60)
    assert out["status"] == "Success" and out["run_result"]["stdout"] == "abc\n", out
    script = 'fun f(s: String): String = s.toUpperCase()\nprintln(f("abc"))\n'
    out = run(script, "kotlin_script", run_timeout=180)
    assert out["status"] == "Success", out
    assert (
        out["run_result"]["stdout"] == "ABC\n" and "deprecated" not in out["run_result"]["stderr"]
    )


# -- the split's units ---------------------------------------------------------------------------


def test_java_harness_reads_the_seal_first_and_counts_sites() -> None:
    tests = ("public class Main {\n    public static void main(String[] a) {\n"
             "        assert f() == 1;\n        assert(f() == 2) : \"two\";\n"
             "        if (!g()) { throw new AssertionError(); }\n    }\n}\n")  # fmt: skip
    built = split_java.harness(tests)
    assert built is not None
    text, count = built
    assert count == 3
    body = text[text.index("main(") :]
    assert body.index("SandlotSeal.read()") < body.index("f() == 1")
    assert body.index("SandlotSeal.end(") > body.index("g()")
    assert "SandlotSeal.check(1, (f() == 2))" in text and "fails(2, !g())" in text


def test_a_throw_the_sites_cannot_place_leaves_no_count() -> None:
    d = split_java.SITES
    assert sites.instrument("try { f(); } catch (Exception e) { throw e; }", d)[1] is None
    assert sites.instrument("if (a) { x(); } else throw new E();", d)[1] is None
    assert sites.instrument("int x = 1;", d) == ("int x = 1;", 0)


def test_reserved_names_are_what_the_harness_uses_but_the_problem_asks_for() -> None:
    text = "import java.util.*;\npublic class Main { void m() { Solution s; Arrays.asList(); } }"
    names = split_java.reserved(text, {"Solution"})
    assert "Arrays" in names and "java" in names and "Solution" not in names
    assert "Main" not in names  # the harness's own: a second one does not compile


def test_junit_count_is_the_test_methods_unless_parameterized() -> None:
    assert split_java.junit_tests("@Test void a() {}\n// @Test\n@Test void b() {}") == 2
    assert (
        split_java.junit_tests("@ParameterizedTest @ValueSource(ints = {1}) void a(int x) {}")
        is None
    )


@pytest.mark.parametrize(
    ("answer", "ok"),
    [("(new ArrayList<Long>(Arrays.asList(1l, 2l)))", True), ("null) || (true", False),
     ("x); System.exit(0); (", False), ("new ArrayList<Long>() {{ add(1l); }}", False),
     ("f(1)", False)],
)  # fmt: skip
def test_crux_java_answers_are_values(answer: str, ok: bool) -> None:
    try:
        literal(answer, "java")
    except NotData:
        assert not ok
    else:
        assert ok


# The shipped datasets this module attacks (tests/security/test_battery_coverage.py checks that
# every shipped dataset is attacked by some module).
COVERS = frozenset(case.dataset for case in CASES)


# -- the units of C#'s and Scala's split (split_managed.py) -------------------------------------

CS_PROMPT = ("using System;\nusing System.Collections.Generic;\nclass Problem {\n"
             "    public static long Add(long a, long b) {\n")  # fmt: skip
CS_TESTS = ("    }\n    public static void Main(string[] args) {\n"
            "    Debug.Assert(Add(1L, 2L) == (3L));\n    Debug.Assert(Add(2L, 2L) == (4L));\n"
            "    }\n\n}\n")  # fmt: skip
SCALA_PROMPT = "import scala.math._\nobject Problem {\n    def add(a : Long, b : Long) : Long = {\n"
SCALA_TESTS = ("    }\n    def main(args: Array[String]) = {\n    assert(add(1l, 2l) == (3l));\n"
               "    }\n\n}\n")  # fmt: skip


def _split(m: split_managed.Managed, prompt: str, code: str, whole: bool, tests: str) -> tuple:
    program = split_managed.multiple(m, prompt, code, whole, tests)
    assert program is not None
    ((name, answer),) = program.files.items()
    return program, name, answer.decode()


def test_csharp_harness_reads_the_secret_first_calls_the_answer_by_its_alias() -> None:
    program, name, answer = _split(split_managed.CSHARP, CS_PROMPT, "        return a + b;\n",
                                   False, CS_TESTS)  # fmt: skip
    assert program.tests == 2 and program.seal
    assert name == ".sandlot_answer/answer.cs" and answer.startswith(CS_PROMPT)
    text = program.code
    assert text.startswith("extern alias SandlotAnswer;\n") and "class Problem" not in text
    body = text[text.index("Main(") :]
    assert body.index("string sandlotSecret = global::SandlotSeal.Read();") < body.index("Add(")
    assert (
        "global::SandlotSeal.Check(1, global::SandlotSeal.Vet(SandlotAnswer::Problem.Add(2L, 2L))"
        " == (4L))" in body
    )
    assert body.index("global::SandlotSeal.End(sandlotSecret);") > body.index("Add(2L, 2L)")


def test_csharp_private_function_the_tests_call_is_made_internal() -> None:
    code = ("class Problem {\n    static long Add(long a, long b) { return Helper(a) + b; }\n"
            "    private static long Helper(long a) { return a; }\n}\n")  # fmt: skip
    _, _, answer = _split(split_managed.CSHARP, CS_PROMPT, code, True, CS_TESTS)
    assert "    internal static long Add(" in answer
    assert "private static long Helper(" in answer  # not called by the tests: left as it is


def test_scala_answer_is_in_a_package_of_its_own() -> None:
    code = "package mine\nobject Problem {\n    def add(a : Long, b : Long) : Long = a + b\n}\n"
    program, name, answer = _split(split_managed.SCALA, SCALA_PROMPT, code, True, SCALA_TESTS)
    assert name == ".sandlot_answer/answer.scala"
    assert answer.startswith("package sandlotanswer\n") and "package mine" not in answer
    assert program.tests == 1 and program.code.lstrip().startswith("import scala.math._")
    assert (
        "_root_.sandlot.SandlotSeal.check(0, _root_.sandlot.SandlotSeal.vet("
        "_root_.sandlotanswer.Problem.add(1l, 2l))" in program.code
    )
    body = program.code[program.code.index("def main(") :]
    assert body.index("val sandlotSecret = _root_.sandlot.SandlotSeal.read()") < body.index("add(")


def test_tests_without_assertions_count_zero_which_never_passes() -> None:
    # the judge rejects a seal of passed=0 when Program.tests is 0 (engine._post_check)
    tests = "    }\n    public static void Main(string[] args) {\n    Add(1L, 2L);\n    }\n}\n"
    program, _, _ = _split(split_managed.CSHARP, CS_PROMPT, "        return a + b;\n", False,
                           tests)  # fmt: skip
    assert program.tests == 0


def test_insert_calls_only_the_prompt_s_functions_from_outside() -> None:
    template = ("object Main {\n#<INSERT>\n  def main(args: Array[String]): Unit = {\n"
                "    println(f(1))\n    assert(f(1) == 2)\n  }\n}\n")  # fmt: skip
    code = "    def f(x: Int): Int = x + 1\n    def println(x: Any): Unit = ()\n"
    prompt = "```scala\nobject Main {\n    def f(x : Int) : Int = {\n```"
    program = split_managed.insert(split_managed.SCALA, template, code, prompt)
    assert program is not None and program.tests == 1
    # the answer's println: no
    assert "println(_root_.sandlot.SandlotSeal.vet(_root_.sandlotanswer.Main.f(1)))" in program.code
    # a prompt that declares no function: not split (the language's own row judges it)
    assert split_managed.insert(split_managed.SCALA, template, code, "Write f.") is None


# -- the vetting of the answer's values (returns.py) --------------------------------------------


def test_vet_wraps_each_call_whose_value_the_tests_use() -> None:
    tests = (
        'Solution s = new Solution();\nList<Boolean> c = Arrays.asList(s.f(xs, "a(b"), '
        "!new Solution().f(1).equals(List.of()));\ns.f(arr);\nif (x) s.f(arr);\n"
        "assert Problem.f(Problem.f(1)) == 2;\nint y = FindMinSum.f(12);\n"
        "long f(int x) { return f(x - 1); }\n"
    )
    got = returns.vet_calls(tests, {"f"}, "V")
    assert 'Arrays.asList(V(s.f(xs, "a(b")), !V(new Solution().f(1)).equals(' in got
    assert "\ns.f(arr);\nif (x) s.f(arr);\n" in got  # statements: their value is unused
    assert "assert V(Problem.f(V(Problem.f(1)))) == 2;" in got
    assert "int y = V(FindMinSum.f(12));" in got
    assert "long f(int x) { return V(f(x - 1)); }" in got  # a declaration is no call


def test_vet_wraps_qualified_and_curried_calls() -> None:
    cs = returns.vet_calls("Debug.Assert(SandlotAnswer::Problem.F((1L)).Equals(2L));", {"F"}, "V")
    assert cs == "Debug.Assert(V(SandlotAnswer::Problem.F((1L))).Equals(2L));"
    scala = returns.vet_calls("_root_.sandlotanswer.Problem.g[Long](x)(y)\n", {"g"}, "V",
                              statements=True)  # fmt: skip
    assert scala == "V(_root_.sandlotanswer.Problem.g[Long](x)(y))\n"


def test_every_split_harness_vets_the_answer_s_calls() -> None:
    java = split_java.multiple("import java.util.*;\nclass Problem {\n    public static long "
                               "add(long a, long b) {\n", "        return a + b;\n", False,
                               "    }\n    public static void main(String[] args) {\n"
                               "    assert(add(1l, 2l) == (3l));\n    }\n\n}\n")  # fmt: skip
    assert java is not None and "SandlotSeal.vet(Problem.add(1l, 2l))" in java.code
    cs, _, _ = _split(split_managed.CSHARP, CS_PROMPT, "        return a + b;\n", False, CS_TESTS)
    assert "global::SandlotSeal.Vet(SandlotAnswer::Problem.Add(1L, 2L))" in cs.code
    scala, _, _ = _split(split_managed.SCALA, SCALA_PROMPT, "a + b\n", False, SCALA_TESTS)
    assert "_root_.sandlot.SandlotSeal.vet(_root_.sandlotanswer.Problem.add(1l, 2l))" in scala.code
