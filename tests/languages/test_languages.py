"""Every language of the engine, in the real jail through the real server.

Each language gets: hello world, stdin, a runtime error, a compile error (where compiled), a
time-out and a memory hog. Programs are data; one test per behaviour, parametrised by language.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandlot.config import Config
from sandlot.languages import LANGUAGES as ROWS
from sandlot.languages.hello import HELLO_WORLDS

pytestmark = [pytest.mark.root, pytest.mark.slow]

# Every row's hello world, from the table: a new row cannot go untested.
HELLO = {name: hello.code for name, hello in HELLO_WORLDS.items()}
STDIN = {  # read two integers, print their sum
    "python": "a, b = map(int, input().split())\nprint(a + b)",
    "bash": "read a b\necho $((a + b))",
    "c": '#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);}',
    "cpp": "#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;}",
    "java": "import java.util.*;\npublic class Main{public static void main(String[] x){"
    "Scanner s=new Scanner(System.in);System.out.println(s.nextInt()+s.nextInt());}}",
    "nodejs": "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);"
    "console.log(a+b)",
    "go": 'package main\nimport "fmt"\nfunc main(){var a,b int;fmt.Scan(&a,&b);fmt.Println(a+b)}',
    "rust": "use std::io::Read;\nfn main(){let mut s=String::new();"
    "std::io::stdin().read_to_string(&mut s).unwrap();"
    "let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
    'println!("{}",v[0]+v[1]);}',
    "typescript": 'import * as fs from "fs";\nconst [a, b]: number[] = fs.readFileSync(0, "utf8")'
    ".trim().split(/\\s+/).map(Number);\nconsole.log(a + b);",
    "php": '<?php fscanf(STDIN, "%d %d", $a, $b); echo $a + $b, "\\n";',
    "ruby": "a, b = gets.split.map(&:to_i)\nputs a + b",
    "perl": "my ($a, $b) = split ' ', <STDIN>;\nprint $a + $b, \"\\n\";",
    "lua": 'local a, b = io.read("n", "n")\nprint(a + b)',
    "R": 'x <- scan(file("stdin"), quiet = TRUE)\ncat(sum(x), "\\n", sep = "")',
    "scala": "object Main { def main(args: Array[String]): Unit = {\n"
    '  val Array(a, b) = scala.io.StdIn.readLine().trim.split("\\\\s+").map(_.toInt)\n'
    "  println(a + b) } }",
    "kotlin": 'fun main() { val (a, b) = readLine()!!.trim().split(" ").map { it.toInt() }; '
    "println(a + b) }",
    "kotlin_script": 'val (a, b) = readLine()!!.trim().split(" ").map { it.toInt() }\n'
    "println(a + b)",
    "csharp": "using System; class P { static void Main() { var p = Console.ReadLine().Split(' ');"
    " Console.WriteLine(int.Parse(p[0]) + int.Parse(p[1])); } }",
    "D_ut": 'import std.stdio;\nvoid main() { int a, b; readf(" %d %d", &a, &b); writeln(a + b); }',
    "racket": "#lang racket\n(define a (read))\n(define b (read))\n(displayln (+ a b))",
    "verilog": "module tb;\n  integer a, b, n;\n  initial begin\n"
    '    n = $fscanf(32\'h8000_0000, "%d %d", a, b);\n    $display("%0d", a + b);\n'
    "    $finish;\n  end\nendmodule",
    # sqlite3 reads no stdin of its own: a dot-command imports it (through `cat`).
    "sql": 'CREATE TABLE t(a INT, b INT);\n.separator " "\n.import "|cat" t\nSELECT a + b FROM t;',
    "haskell": "main :: IO ()\nmain = do\n  [a, b] <- map read . words <$> getLine\n"
    "  print (a + b :: Int)",
    "fortran": "program main\n  integer :: a, b\n  read *, a, b\n  print '(i0)', a + b\n"
    "end program main",
}
RUNTIME_ERROR = {  # exits non-zero at run time
    "python": "raise SystemExit(3)",
    "bash": "exit 3",
    "c": "int main(void){return 3;}",
    "cpp": "int main(){return 3;}",
    "java": "public class Main{public static void main(String[] a){System.exit(3);}}",
    "nodejs": "process.exit(3)",
    "go": 'package main\nimport "os"\nfunc main(){os.Exit(3)}',
    "rust": "fn main(){std::process::exit(3);}",
    "typescript": "process.exit(3);",
    "php": "<?php exit(3);",
    "ruby": "exit 3",
    "perl": "exit 3;",
    "lua": "os.exit(3)",
    "R": "quit(status = 3)",
    "scala": "object Main { def main(args: Array[String]): Unit = System.exit(3) }",
    "kotlin": "import kotlin.system.exitProcess\nfun main() { exitProcess(3) }",
    "kotlin_script": "kotlin.system.exitProcess(3)",
    "csharp": "class P { static int Main() { return 3; } }",
    "D_ut": "int main() { return 3; }",
    "racket": "#lang racket\n(exit 3)",
    "verilog": 'module tb;\n  initial $fatal(1, "boom");\nendmodule',
    "sql": "SELECT * FROM missing_table;",
    "haskell": "import System.Exit\nmain :: IO ()\nmain = exitWith (ExitFailure 3)",
    "fortran": "program main\n  stop 3\nend program main",
}
COMPILE_ERROR = {
    "typescript": "const x: number = ;",
    "c": "int main(void){ return undefined_name; }",
    "cpp": "int main(){ return undefined_name; }",
    "java": "public class Main{public static void main(String[] a){int x = ;}}",
    "go": "package main\nfunc main(){ undefinedName() }",
    "rust": 'fn main(){ let x: i32 = "str"; }',
    "scala": 'object Main { def main(args: Array[String]): Unit = { val x: Int = "s" } }',
    "kotlin": 'fun main() { val x: Int = "s" }',
    "csharp": 'class P { static void Main() { int x = "s"; } }',
    "D_ut": 'void main() { int x = "s"; }',
    "verilog": "module tb;\n  initial begin x = ; end\nendmodule",
    "haskell": 'main :: IO ()\nmain = putStrLn (1 + "x")',
    "fortran": "program main\n  x = \nend program main",
}
INFINITE = {
    "python": "while True: pass",
    "bash": "while :; do :; done",
    "c": "int main(void){volatile int x=0;for(;;)x++;}",
    "cpp": "int main(){volatile int x=0;for(;;)x++;}",
    "java": "public class Main{public static void main(String[] a){while(true){}}}",
    "nodejs": "for(;;){}",
    "go": "package main\nfunc main(){x:=0;for{x++}}",
    "rust": "fn main(){let mut x:u64=0;let p=&mut x as *mut u64;"
    "loop{unsafe{std::ptr::write_volatile(p,std::ptr::read_volatile(p)+1);}}}",
    "typescript": "for (;;) {}",
    "php": "<?php while (true) {}",
    "ruby": "loop {}",
    "perl": "1 while 1;",
    "lua": "while true do end",
    "R": "while (TRUE) {}",
    "scala": "object Main { def main(args: Array[String]): Unit = while (true) {} }",
    "kotlin": "fun main() { while (true) {} }",
    "kotlin_script": "while (true) {}",
    "csharp": "class P { static void Main() { while (true) {} } }",
    "D_ut": "void main() { while (true) {} }",
    "racket": "#lang racket\n(let loop () (loop))",
    "verilog": "module tb;\n  initial forever #1;\nendmodule",
    "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)\n"
    "SELECT count(*) FROM c;",
    "haskell": "main :: IO ()\nmain = print (length [1 ..])",
    "fortran": "program main\n  integer :: i\n  i = 0\n  do\n    i = i + 1\n  end do\n"
    "end program main",
}
MEMORY_HOG = {  # touches ~2 GiB, far above the 256 MiB limit the test sets
    "python": "x = [bytearray(1 << 20) for _ in range(2048)]",
    "bash": "x=$(head -c 2000000000 /dev/zero | tr '\\0' a); echo ${#x}",
    "c": "#include <stdlib.h>\n#include <string.h>\n"
    "int main(void){for(int i=0;i<2048;i++){char*p=malloc(1<<20);memset(p,1,1<<20);}return 0;}",
    "cpp": "#include <vector>\nint main(){std::vector<std::vector<char>> v;"
    "for(int i=0;i<2048;i++)v.emplace_back(1<<20,'x');return v.size()==0;}",
    "java": "import java.util.*;\npublic class Main{public static void main(String[] a){"
    "List<byte[]> l=new ArrayList<>();for(int i=0;i<2048;i++)l.add(new byte[1<<20]);}}",
    "nodejs": "const a=[];for(let i=0;i<2048;i++)a.push(Buffer.alloc(1<<20,1));"
    "const b=[];for(let i=0;i<3e7;i++)b.push({i});",
    "go": "package main\nfunc main(){var l [][]byte;for i:=0;i<2048;i++{b:=make([]byte,1<<20);"
    "for j:=range b{b[j]=1};l=append(l,b)};println(len(l))}",
    "rust": "fn main(){let mut v=Vec::new();for _ in 0..2048{v.push(vec![1u8;1<<20]);}"
    'println!("{}",v.len());}',
    "typescript": "const a: Buffer[] = [];\n"
    "for (let i = 0; i < 2048; i++) a.push(Buffer.alloc(1 << 20, 1));",
    "php": "<?php ini_set('memory_limit', '-1'); $a = [];\n"
    "for ($i = 0; $i < 2048; $i++) { $a[] = str_repeat(chr(65 + $i % 26), 1 << 20); }",
    "ruby": "a = []\n2048.times { |i| a << ('x' * (1 << 20)) + i.to_s }",
    "perl": "my @a; push @a, ('x' x (1 << 20)) . $_ for 1 .. 2048;",
    "lua": "local t = {}\nfor i = 1, 2048 do t[i] = string.rep('x', 1 << 20) .. i end",
    "R": "x <- list()\nfor (i in 1:2048) x[[i]] <- rep(i, 131072)",
    "scala": "object Main { def main(args: Array[String]): Unit = {\n"
    "  val l = scala.collection.mutable.ArrayBuffer[Array[Byte]]()\n"
    "  for (i <- 0 until 2048) l += Array.fill[Byte](1 << 20)(1) } }",
    "kotlin": "fun main() { val l = ArrayList<ByteArray>(); "
    "repeat(2048) { l.add(ByteArray(1 shl 20) { 1 }) } }",
    "kotlin_script": "val l = ArrayList<ByteArray>()\n"
    "repeat(2048) { l.add(ByteArray(1 shl 20) { 1 }) }",
    "csharp": "using System.Collections.Generic; class P { static void Main() {"
    " var l = new List<byte[]>(); for (int i = 0; i < 2048; i++) {"
    " var b = new byte[1 << 20]; for (int j = 0; j < b.Length; j += 4096) b[j] = 1;"
    " l.Add(b); } } }",
    "D_ut": "void main() { ubyte[][] l; foreach (i; 0 .. 2048) { auto b = new ubyte[1 << 20]; "
    "b[] = 1; l ~= b; } }",
    "racket": "#lang racket\n(define l (for/list ([i 2048]) (make-bytes (expt 2 20) 1)))\n"
    "(displayln (length l))",
    "verilog": "module tb;\n  int q[$];\n  initial begin\n"
    "    for (int i = 0; i < 200000000; i++) q.push_back(i);\n"
    '    $display("%0d", q.size());\n  end\nendmodule',
    "sql": "CREATE TABLE t AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
    "WHERE x < 3000) SELECT x, randomblob(1000000) AS b FROM c;",
    "haskell": "main :: IO ()\nmain = do\n  let xs = [1 .. 100000000 :: Int]\n"
    "  print (sum xs, length xs)",
    "fortran": "program main\n  integer(8) :: i\n  character, allocatable :: a(:)\n"
    "  allocate(a(2000000000_8))\n  do i = 1, size(a, kind=8)\n    a(i) = 'x'\n  end do\n"
    "  print *, a(1)\nend program main",
}
COMPILED = set(COMPILE_ERROR)
LANGUAGES = sorted(STDIN)
# Where a failing program cannot choose its exit code (vvp's $fatal, sqlite3's -bail).
RUNTIME_EXIT = {"verilog": 1, "sql": 1}
# Kotlin scripts are compiled when run: the run step holds a compiler start.
RUN_TIMEOUT = {"kotlin_script": 60}


def limits(language: str) -> dict[str, float]:
    return {"compile_timeout": 60, "run_timeout": RUN_TIMEOUT.get(language, 10)}


@pytest.fixture
def available(client):
    names = {row["name"] for row in client.get("/languages").json() if row["available"]}

    def check(language: str) -> None:
        if language not in names:
            pytest.fail(f"{language} is not installed on the test server: run `make setup`")

    return check


def test_every_row_has_a_hello_world():
    assert {row.name for row in ROWS} == set(HELLO_WORLDS), "add the row's hello world to hello.py"


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_hello(run, available, row):
    if row.unavailable:  # a row `sandlot setup` cannot install (not packaged, or hardware)
        pytest.skip(f"{row.name}: {row.unavailable}")
    available(row.name)
    hello = HELLO_WORLDS[row.name]
    out = run(hello.code, row.name, **limits(row.name))
    assert out["status"] == "Success", out
    assert out["run_result"]["status"] == "Finished"
    assert out["run_result"]["return_code"] == 0
    assert (out["compile_result"] is not None) == (row.compile is not None)
    assert out["exit_code"] == 0
    if hello.output is not None:  # else a test file: it passed, its report is its output
        assert out["run_result"]["stdout"] == hello.output
        assert out["stdout"] == hello.output


@pytest.mark.parametrize("language", LANGUAGES)
def test_stdin(run, available, language):
    available(language)
    out = run(STDIN[language], language, stdin="20 22\n", **limits(language))
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"].strip() == "42"


@pytest.mark.parametrize("language", LANGUAGES)
def test_runtime_error(run, available, language):
    available(language)
    out = run(RUNTIME_ERROR[language], language, **limits(language))
    assert out["status"] == "Failed", out
    assert out["run_result"]["status"] == "Finished"
    assert out["run_result"]["return_code"] == RUNTIME_EXIT.get(language, 3)


@pytest.mark.parametrize("language", sorted(COMPILED))
def test_compile_error(run, available, language):
    available(language)
    out = run(COMPILE_ERROR[language], language, compile_timeout=60)
    assert out["status"] == "Failed", out
    assert out["compile_result"]["status"] == "Finished"
    assert out["compile_result"]["return_code"] != 0
    assert out["compile_result"]["stderr"]
    assert out["run_result"] is None


@pytest.mark.parametrize("language", LANGUAGES)
def test_time_limit(run, available, language):
    available(language)
    out = run(INFINITE[language], language, run_timeout=1, compile_timeout=60)
    assert out["status"] == "Failed", out
    run_result = out["run_result"]
    assert run_result["status"] == "TimeLimitExceeded"
    assert run_result["return_code"] is None
    assert run_result["limit"] in ("time", "cpu")


# "start", then a busy loop: what a program wrote before its time-out kill is in its stdout.
PRINT_THEN_LOOP = {
    "python": "print('start')\nwhile True: pass",
    "nodejs": "console.log('start');\nfor (;;) {}",
    "typescript": "console.log('start');\nfor (;;) {}",
    "ruby": "puts 'start'\nloop {}",
    "perl": 'print "start\\n";\n1 while 1;',
    "php": '<?php echo "start\\n"; while (true) {}',
    "lua": "print('start')\nwhile true do end",
    "R": "cat('start\\n')\nwhile (TRUE) {}",
    "bash": "echo start\nwhile :; do :; done",
    "java": 'public class Main{public static void main(String[] a){System.out.println("start");'
    "while(true){}}}",
    "scala": 'object Main { def main(a: Array[String]): Unit = { println("start"); '
    "while (true) {} } }",
    "csharp": 'class P { static void Main() { System.Console.WriteLine("start"); '
    "while (true) {} } }",
    "go": 'package main\nimport "fmt"\nfunc main(){fmt.Println("start");x:=0;for{x++}}',
    "rust": 'fn main(){println!("start");let mut x:u64=0;let p=&mut x as *mut u64;'
    "loop{unsafe{std::ptr::write_volatile(p,std::ptr::read_volatile(p)+1);}}}",
    "racket": '#lang racket\n(displayln "start")\n(let loop () (loop))',
    "fortran": "program main\n  integer :: i\n  print '(a)', 'start'\n  i = 0\n  do\n"
    "    i = i + 1\n  end do\nend program main",
}
# Runtimes that keep stdout in a buffer of their own, which nothing flushes at a kill: a program
# must flush it (docs/limits.md says so, and how, for each).
LOST_AT_A_KILL = ("c", "cpp", "D_ut", "haskell")


@pytest.mark.parametrize("language", sorted(PRINT_THEN_LOOP))
def test_output_written_before_a_time_out_is_kept(run, available, language):
    """A time-out first asks the program to stop (SIGTERM), then kills it: runtimes that flush
    on that (Ruby, Racket; Python and Perl, told to) keep what they wrote."""
    available(language)
    timeout = 8 if language == "racket" else 2  # racket takes a second or two to start
    out = run(PRINT_THEN_LOOP[language], language, run_timeout=timeout, compile_timeout=60)
    assert out["run_result"]["status"] == "TimeLimitExceeded", out
    assert out["run_result"]["stdout"].strip() == "start", out


def test_where_output_is_lost_at_a_time_out_the_docs_say_how_to_keep_it():
    page = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text()
    section = page.split("## Output at a time limit", 1)[-1]
    for language in LOST_AT_A_KILL:
        assert f"`{language}`" in section, language


@pytest.mark.parametrize("language", LANGUAGES)
def test_memory_limit(run, available, language):
    available(language)
    out = run(
        MEMORY_HOG[language], language, memory_limit_MB=256, run_timeout=20, compile_timeout=60
    )
    assert out["status"] == "Failed", out
    run_result = out["run_result"]
    # Killed by the memory cgroup, or the runtime's own heap cap (set from the same limit) fired.
    assert run_result["limit"] == "memory" or run_result["return_code"] != 0, run_result
    assert run_result["memory_peak_bytes"] <= 300 << 20


def test_pytest_language(run, available):
    available("pytest")
    code = "def inc(x):\n    return x + 1\n\ndef test_ok():\n    assert inc(1) == 2\n"
    assert run(code, "pytest")["status"] == "Success"
    failing = run(code + "\ndef test_bad():\n    assert inc(1) == 3\n", "pytest")
    assert failing["status"] == "Failed"
    assert "1 failed" in failing["run_result"]["stdout"]


def test_python_scientific_stack(run, available):
    available("python")
    code = (
        "import numpy, pandas, scipy, sympy\n"
        "print(int(numpy.arange(5).sum()), len(pandas.DataFrame({'a': [1, 2]})),"
        " sympy.simplify('x + x'))"
    )
    out = run(code, "python")
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == "10 2 2*x\n"


CS_ASSERTS = """using System;
using System.Diagnostics;
using System.Numerics;
class P {
    static int Twice(int x) { return x + x; }
    static void Main() {
        Console.WriteLine("before");
        Debug.Assert(Twice(2) == 4);
        Trace.Assert(BigInteger.Pow(2, 70) > long.MaxValue, "BigInteger is referenced");
        try { Debug.Assert(Twice(2) == CHECK, "Twice(2) is CHECK"); } catch { }
        finally { Console.WriteLine("finally"); }
        Console.WriteLine("after");
    }
}
"""


def test_csharp_failed_debug_assert_ends_the_run(run, available):
    # As `dotnet run` (SandboxFusion's C#): a Debug build, where a failed assertion aborts the
    # process (SIGABRT, status 134) after printing what failed; no catch or finally runs.
    available("csharp")
    passing = run(CS_ASSERTS.replace("CHECK", "4"), "csharp", compile_timeout=60)
    assert passing["status"] == "Success", passing
    assert passing["run_result"]["stdout"] == "before\nfinally\nafter\n"
    failing = run(CS_ASSERTS.replace("CHECK", "5"), "csharp", compile_timeout=60)
    assert failing["status"] == "Failed", failing
    result = failing["run_result"]
    assert result["stdout"] == "before\n"
    # status 134: the jail reads a status over 128 as a signal, here SIGABRT, as .NET's abort
    assert result["return_code"] == -6 and result["signal"] == 6, result
    assert result["stderr"].startswith("Process terminated. Assertion failed.\nTwice(2) is 5\n")
    assert "at P.Main" in result["stderr"]


def test_python_runtime_is_not_the_servers(run, available):
    available("python")
    out = run("import sys; print(sys.prefix); print(sys.executable)", "python")
    assert ".venv" not in out["run_result"]["stdout"]
    assert "pyenv" not in out["run_result"]["stdout"]


@pytest.mark.parametrize(
    "alias,language",
    [
        ("javascript", "nodejs"),
        ("js", "nodejs"),
        ("py", "python"),
        ("c++", "cpp"),
        ("golang", "go"),
        ("ts", "typescript"),
        ("r", "R"),
        ("d", "D_ut"),
        ("cs", "csharp"),
        ("kt", "kotlin"),
    ],
)
def test_aliases(run, available, alias, language):
    available(language)
    out = run(HELLO[language], alias, **limits(language))
    assert out["run_result"]["stdout"] == HELLO_WORLDS[language].output, out


def test_languages_endpoint_lists_versions(client):
    rows = {r["name"]: r for r in client.get("/languages").json()}
    assert set(LANGUAGES) | {"pytest"} <= set(rows)
    for name in LANGUAGES:
        assert rows[name]["available"], rows[name]
        assert rows[name]["version"], rows[name]


def test_scala_runs_map_their_class_data_archive(tmp_path, available):
    """The archive `sandlot setup` recorded fits the run step's class path: with -Xshare:on the
    JVM refuses to start rather than run without it."""
    available("scala")
    row = next(r for r in ROWS if r.name == "scala")
    runtime = Config.load().runtime_dir
    (tmp_path / row.source).write_text('object Main { def main(a: Array[String]) = println("hi") }')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(row.argv(row.compile, runtime, 512), cwd=tmp_path, env=env, check=True)
    shell, flag, script = row.argv(row.run, runtime, 512)
    forced = script.replace("exec /usr/bin/java ", "exec /usr/bin/java -Xshare:on ", 1)
    assert forced != script
    done = subprocess.run([shell, flag, forced], cwd=tmp_path, env=env, capture_output=True)
    assert (done.returncode, done.stdout) == (0, b"hi\n"), done.stderr.decode()
