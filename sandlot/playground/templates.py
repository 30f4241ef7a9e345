"""What the playground's editor knows of each language row: a highlighting mode and a hello world.

Keyed by the row's name (`sandlot/languages/table.py`); a test checks that every row has one
and that each available row's program does what `output` says. `mode` is a MIME type of the
vendored CodeMirror 5 (static/vendor/codemirror/); None shows plain text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

HELLO = "Hello, world!\n"


@dataclass(frozen=True, slots=True)
class Template:
    mode: str | None
    code: str
    output: str | None = HELLO  # its stdout; None for a test file (it passes, prints a report)


def _java(body: str) -> str:
    head = "public class Main {\n    public static void main(String[] args) {\n"
    return head + body + "    }\n}\n"


TEMPLATES: dict[str, Template] = {
    "python": Template("text/x-python", 'print("Hello, world!")\n'),
    "pytest": Template(
        "text/x-python",
        'def greet(name):\n    return f"Hello, {name}!"\n\n\n'
        'def test_greet():\n    assert greet("world") == "Hello, world!"\n',
        None,
    ),
    "bash": Template("text/x-sh", 'echo "Hello, world!"\n'),
    "c": Template(
        "text/x-csrc",
        '#include <stdio.h>\n\nint main(void) {\n    puts("Hello, world!");\n    return 0;\n}\n',
    ),
    "cpp": Template(
        "text/x-c++src",
        '#include <iostream>\n\nint main() {\n    std::cout << "Hello, world!" << std::endl;\n}\n',
    ),
    "catch2": Template(
        "text/x-c++src",
        "#include <catch2/catch.hpp>\n#include <string>\n\n"
        'std::string greet(const std::string& name) { return "Hello, " + name + "!"; }\n\n'
        'TEST_CASE("greets") { REQUIRE(greet("world") == "Hello, world!"); }\n',
        None,
    ),
    "java": Template("text/x-java", _java('        System.out.println("Hello, world!");\n')),
    "nodejs": Template("text/javascript", 'console.log("Hello, world!");\n'),
    "go": Template(
        "text/x-go",
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("Hello, world!")\n}\n',
    ),
    "rust": Template("text/x-rustsrc", 'fn main() {\n    println!("Hello, world!");\n}\n'),
    "go_test": Template(
        "text/x-go",
        'package main\n\nimport "testing"\n\nfunc greet(name string) string '
        '{ return "Hello, " + name + "!" }\n\nfunc TestGreet(t *testing.T) {\n'
        '\tif got := greet("world"); got != "Hello, world!" {\n\t\tt.Fatalf("got %q", got)\n'
        "\t}\n}\n",
        None,
    ),
    "junit": Template(
        "text/x-java",
        "import org.junit.jupiter.api.Test;\n"
        "import static org.junit.jupiter.api.Assertions.assertEquals;\n\n"
        "public class GreetTest {\n"
        '    static String greet(String name) { return "Hello, " + name + "!"; }\n\n'
        "    @Test\n"
        '    void greets() { assertEquals("Hello, world!", greet("world")); }\n}\n',
        None,
    ),
    "typescript": Template(
        "text/typescript",
        'const greeting: string = "Hello, world!";\nconsole.log(greeting);\n',
    ),
    "jest": Template(
        "text/typescript",
        "function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n\n"
        'test("greets", () => {\n  expect(greet("world")).toBe("Hello, world!");\n});\n',
        None,
    ),
    "php": Template("text/x-php", '<?php\necho "Hello, world!\\n";\n'),
    "ruby": Template("text/x-ruby", 'puts "Hello, world!"\n'),
    "perl": Template("text/x-perl", 'use strict;\nuse warnings;\n\nprint "Hello, world!\\n";\n'),
    "lua": Template("text/x-lua", 'print("Hello, world!")\n'),
    "R": Template("text/x-rsrc", 'cat("Hello, world!\\n")\n'),
    "scala": Template(
        "text/x-scala",
        'object Main {\n  def main(args: Array[String]): Unit = println("Hello, world!")\n}\n',
    ),
    "kotlin": Template("text/x-kotlin", 'fun main() {\n    println("Hello, world!")\n}\n'),
    "kotlin_script": Template("text/x-kotlin", 'println("Hello, world!")\n'),
    "csharp": Template(
        "text/x-csharp",
        "using System;\n\nclass Program {\n    static void Main() {\n"
        '        Console.WriteLine("Hello, world!");\n    }\n}\n',
    ),
    "D_ut": Template(
        "text/x-d", 'import std.stdio;\n\nvoid main() {\n    writeln("Hello, world!");\n}\n'
    ),
    "racket": Template("text/x-scheme", '#lang racket\n\n(displayln "Hello, world!")\n'),
    "verilog": Template(
        "text/x-systemverilog",
        'module tb;\n  initial begin\n    $display("Hello, world!");\n    $finish;\n  end\n'
        "endmodule\n",
    ),
    "sql": Template("text/x-sql", "SELECT 'Hello, world!';\n"),
    "haskell": Template("text/x-haskell", 'main :: IO ()\nmain = putStrLn "Hello, world!"\n'),
    "fortran": Template(
        "text/x-fortran", "program hello\n  print '(a)', 'Hello, world!'\nend program hello\n"
    ),
    "julia": Template("text/x-julia", 'println("Hello, world!")\n'),
    "swift": Template("text/x-swift", 'print("Hello, world!")\n'),
    "lean": Template(None, 'def main : IO Unit :=\n  IO.println "Hello, world!"\n'),
    "cuda": Template(
        "text/x-c++src",
        "#include <cstdio>\n\n__global__ void kernel() {}\n\nint main() {\n"
        '    kernel<<<1, 1>>>();\n    cudaDeviceSynchronize();\n    std::puts("Hello, world!");\n'
        "}\n",
    ),
    "python_gpu": Template("text/x-python", 'print("Hello, world!")\n'),
}


def as_json() -> dict[str, dict[str, str | None]]:
    """The table as the pages read it: {language: {mode, code, output}}."""
    return {name: asdict(t) for name, t in TEMPLATES.items()}
