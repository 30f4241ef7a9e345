"""A hello world per language row, keyed by the row's name (table.py): what the playground's
editor opens with, and what the test that runs every row says hello with (a test checks that
every row has one). A test framework's row has a passing test file instead, whose output is its
report (`output` None).
"""

from __future__ import annotations

from dataclasses import dataclass

HELLO = "Hello, world!\n"


@dataclass(frozen=True, slots=True)
class HelloWorld:
    code: str
    output: str | None = HELLO  # its stdout; None for a test file (it passes, prints a report)


def _java(body: str) -> str:
    head = "public class Main {\n    public static void main(String[] args) {\n"
    return head + body + "    }\n}\n"


HELLO_WORLDS: dict[str, HelloWorld] = {
    "python": HelloWorld(
        'print("Hello, world!")\n',
    ),
    "pytest": HelloWorld(
        'def greet(name):\n    return f"Hello, {name}!"\n\n\n'
        'def test_greet():\n    assert greet("world") == "Hello, world!"\n',
        None,
    ),
    "bash": HelloWorld(
        'echo "Hello, world!"\n',
    ),
    "c": HelloWorld(
        '#include <stdio.h>\n\nint main(void) {\n    puts("Hello, world!");\n    return 0;\n}\n',
    ),
    "cpp": HelloWorld(
        '#include <iostream>\n\nint main() {\n    std::cout << "Hello, world!" << std::endl;\n}\n',
    ),
    "catch2": HelloWorld(
        "#include <catch2/catch.hpp>\n#include <string>\n\n"
        'std::string greet(const std::string& name) { return "Hello, " + name + "!"; }\n\n'
        'TEST_CASE("greets") { REQUIRE(greet("world") == "Hello, world!"); }\n',
        None,
    ),
    "java": HelloWorld(
        _java('        System.out.println("Hello, world!");\n'),
    ),
    "nodejs": HelloWorld(
        'console.log("Hello, world!");\n',
    ),
    "go": HelloWorld(
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("Hello, world!")\n}\n',
    ),
    "rust": HelloWorld(
        'fn main() {\n    println!("Hello, world!");\n}\n',
    ),
    "go_test": HelloWorld(
        'package main\n\nimport "testing"\n\nfunc greet(name string) string '
        '{ return "Hello, " + name + "!" }\n\nfunc TestGreet(t *testing.T) {\n'
        '\tif got := greet("world"); got != "Hello, world!" {\n\t\tt.Fatalf("got %q", got)\n'
        "\t}\n}\n",
        None,
    ),
    "junit": HelloWorld(
        "import org.junit.jupiter.api.Test;\n"
        "import static org.junit.jupiter.api.Assertions.assertEquals;\n\n"
        "public class GreetTest {\n"
        '    static String greet(String name) { return "Hello, " + name + "!"; }\n\n'
        "    @Test\n"
        '    void greets() { assertEquals("Hello, world!", greet("world")); }\n}\n',
        None,
    ),
    "typescript": HelloWorld(
        'const greeting: string = "Hello, world!";\nconsole.log(greeting);\n',
    ),
    "jest": HelloWorld(
        "function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n\n"
        'test("greets", () => {\n  expect(greet("world")).toBe("Hello, world!");\n});\n',
        None,
    ),
    "php": HelloWorld(
        '<?php\necho "Hello, world!\\n";\n',
    ),
    "ruby": HelloWorld(
        'puts "Hello, world!"\n',
    ),
    "perl": HelloWorld(
        'use strict;\nuse warnings;\n\nprint "Hello, world!\\n";\n',
    ),
    "lua": HelloWorld(
        'print("Hello, world!")\n',
    ),
    "R": HelloWorld(
        'cat("Hello, world!\\n")\n',
    ),
    "scala": HelloWorld(
        'object Main {\n  def main(args: Array[String]): Unit = println("Hello, world!")\n}\n',
    ),
    "kotlin": HelloWorld(
        'fun main() {\n    println("Hello, world!")\n}\n',
    ),
    "kotlin_script": HelloWorld(
        'println("Hello, world!")\n',
    ),
    "csharp": HelloWorld(
        "using System;\n\nclass Program {\n    static void Main() {\n"
        '        Console.WriteLine("Hello, world!");\n    }\n}\n',
    ),
    "D_ut": HelloWorld(
        'import std.stdio;\n\nvoid main() {\n    writeln("Hello, world!");\n}\n',
    ),
    "racket": HelloWorld(
        '#lang racket\n\n(displayln "Hello, world!")\n',
    ),
    "verilog": HelloWorld(
        'module tb;\n  initial begin\n    $display("Hello, world!");\n    $finish;\n  end\n'
        "endmodule\n",
    ),
    "sql": HelloWorld(
        "SELECT 'Hello, world!';\n",
    ),
    "haskell": HelloWorld(
        'main :: IO ()\nmain = putStrLn "Hello, world!"\n',
    ),
    "fortran": HelloWorld(
        "program hello\n  print '(a)', 'Hello, world!'\nend program hello\n",
    ),
    "julia": HelloWorld(
        'println("Hello, world!")\n',
    ),
    "swift": HelloWorld(
        'print("Hello, world!")\n',
    ),
    "lean": HelloWorld(
        'def main : IO Unit :=\n  IO.println "Hello, world!"\n',
    ),
    "cuda": HelloWorld(
        "#include <cstdio>\n\n__global__ void kernel() {}\n\nint main() {\n"
        '    kernel<<<1, 1>>>();\n    cudaDeviceSynchronize();\n    std::puts("Hello, world!");\n'
        "}\n",
    ),
    "python_gpu": HelloWorld(
        'print("Hello, world!")\n',
    ),
}
