"""Every language of the engine, in the real jail through the real server.

Each language gets: hello world, stdin, a runtime error, a compile error (where compiled), a
time-out and a memory hog. Programs are data; one test per behaviour, parametrised by language.
"""

from __future__ import annotations

import pytest

HELLO = {
    "python": 'print("hello")',
    "bash": "echo hello",
    "c": '#include <stdio.h>\nint main(void){puts("hello");return 0;}',
    "cpp": '#include <iostream>\nint main(){std::cout<<"hello"<<std::endl;}',
    "java": 'public class Main{public static void main(String[] a){System.out.println("hello");}}',
    "nodejs": 'console.log("hello")',
    "go": 'package main\nimport "fmt"\nfunc main(){fmt.Println("hello")}',
    "rust": 'fn main(){println!("hello");}',
}
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
}
COMPILE_ERROR = {
    "c": "int main(void){ return undefined_name; }",
    "cpp": "int main(){ return undefined_name; }",
    "java": "public class Main{public static void main(String[] a){int x = ;}}",
    "go": "package main\nfunc main(){ undefinedName() }",
    "rust": 'fn main(){ let x: i32 = "str"; }',
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
}
COMPILED = set(COMPILE_ERROR)
LANGUAGES = sorted(HELLO)


@pytest.fixture
def available(client):
    names = {row["name"] for row in client.get("/languages").json() if row["available"]}

    def check(language: str) -> None:
        if language not in names:
            pytest.fail(f"{language} is not installed on the test server: run `make setup`")

    return check


@pytest.mark.parametrize("language", LANGUAGES)
def test_hello(run, available, language):
    available(language)
    out = run(HELLO[language], language, compile_timeout=60)
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"] == "hello\n"
    assert out["run_result"]["status"] == "Finished"
    assert out["run_result"]["return_code"] == 0
    assert (out["compile_result"] is not None) == (language in COMPILED)
    assert out["stdout"] == "hello\n" and out["exit_code"] == 0


@pytest.mark.parametrize("language", LANGUAGES)
def test_stdin(run, available, language):
    available(language)
    out = run(STDIN[language], language, stdin="20 22\n", compile_timeout=60)
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"].strip() == "42"


@pytest.mark.parametrize("language", LANGUAGES)
def test_runtime_error(run, available, language):
    available(language)
    out = run(RUNTIME_ERROR[language], language, compile_timeout=60)
    assert out["status"] == "Failed", out
    assert out["run_result"]["status"] == "Finished"
    assert out["run_result"]["return_code"] == 3


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
    assert run_result["execution_time"] < 5


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
    ],
)
def test_aliases(run, available, alias, language):
    available(language)
    assert run(HELLO[language], alias, compile_timeout=60)["run_result"]["stdout"] == "hello\n"


def test_languages_endpoint_lists_versions(client):
    rows = {r["name"]: r for r in client.get("/languages").json()}
    assert set(LANGUAGES) | {"pytest"} <= set(rows)
    for name in LANGUAGES:
        assert rows[name]["available"], rows[name]
        assert rows[name]["version"], rows[name]
