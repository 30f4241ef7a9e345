"""Guards in a program's text: statements that read the run's secret before any code under test
runs, and write the seal (sandlot/executor/seal.py) only where the tests end.

Python, JavaScript and TypeScript need none here: the executor's drivers run their programs. For
the others, `guard_end` puts the seal's writing at the end of the tests (the last statement of
their main, or their last line where tests are top-level statements) before the answer is put in,
so never in an answer's own main; `with_start` then puts the reading first, where nothing of the
answer can run before it:

- C++: a pre-init function, which runs before every static initializer; only the tests' main may
  write the seal (a friend of the class that holds it);
- Java, C#, Scala: the first static initializer of the class (object) that holds the tests' main;
  the seal is written only when the tests' main, called by the runtime, calls for it (a call from
  anywhere else spends it);
- Rust: the first statement of main (Rust runs no code before main), into a local of main;
- the scripting languages: the program's first statement, into a closure bound to a name drawn
  at random per submission.

The text of the compiled languages' guards is the same from one submission to the next, so the
compile cache keeps hitting; the secret is in no source and no binary.
"""

from __future__ import annotations

import re
import secrets

from sandlot.executor.seal import SEAL_FILE as SEAL
from sandlot.judge import braces

# Rows with a driver (their `harness`): the executor seals them without help.
DRIVEN = frozenset({"python", "nodejs", "typescript"})
_NAME = "__SANDLOT_SEAL_NAME__"  # in an end statement, until `with_start` draws the name

_CPP_START = """\
#include <cstdio>
// sandlot's guard (sandlot/judge/guards.py): the run's secret, read and removed before any
// static initializer runs, written by the tests' main alone.
class sandlot_seal {
    static char text[80];
    static void (*read)();
    static void end() {
        std::fputs(text, stdout);
        std::fputs(text, stdout);
        std::fputs("\\n", stdout);
        std::fflush(stdout);
    }
    friend int main(%s);
};
char sandlot_seal::text[80];
__attribute__((section(".preinit_array"), used)) void (*sandlot_seal::read)() = [] {
    if (std::FILE* f = std::fopen("%s", "rb")) {
        sandlot_seal::text[std::fread(sandlot_seal::text, 1, 79, f)] = 0;
        std::fclose(f);
    }
    std::remove("%s");
};
"""

_JAVA_SEAL = """
// sandlot's guard (sandlot/judge/guards.py)
final class SandlotSeal {
    private static String text = "";
    private static boolean spent;

    static boolean read() {
        try {
            java.nio.file.Path path = java.nio.file.Paths.get("%s");
            text = new String(java.nio.file.Files.readAllBytes(path), "ISO-8859-1");
            java.nio.file.Files.delete(path);
        } catch (Exception e) {
            text = "";
        }
        return true;
    }

    // Only the tests' main, called by the JVM, writes the seal; any other call spends it.
    static void end() {
        java.util.List<String> frames = StackWalker.getInstance().walk(s -> s.map(
            f -> f.getMethodName()).collect(java.util.stream.Collectors.toList()));
        boolean ok = !spent && frames.size() == 2 && frames.get(1).equals("main");
        spent = true;
        if (!ok) return;
        try {
            java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);
            out.write((text + text + "\\n").getBytes("ISO-8859-1"));
            out.flush();
        } catch (Exception e) {
            return;
        }
    }
}
"""

_CSHARP_SEAL = """
// sandlot's guard (sandlot/judge/guards.py)
static class SandlotSeal {
    static string text = "";
    static bool read, spent;

    public static bool Read() {
        if (read) return true;
        read = true;
        try {
            text = System.IO.File.ReadAllText("%s");
            System.IO.File.Delete("%s");
        } catch (System.Exception) {
            text = "";
        }
        return true;
    }

    // Only the tests' Main, called by the runtime, writes the seal; any other call spends it.
    public static void End() {
        var frames = new System.Diagnostics.StackTrace().GetFrames();
        bool ok = !spent && frames.Length == 2 && frames[1].GetMethod().Name == "Main";
        spent = true;
        if (!ok) return;
        System.Console.Out.Flush();
        var bytes = System.Text.Encoding.ASCII.GetBytes(text + text + "\\n");
        using (var stdout = System.Console.OpenStandardOutput()) {
            stdout.Write(bytes, 0, bytes.Length);
        }
    }
}
"""

_SCALA_SEAL = """
// sandlot's guard (sandlot/judge/guards.py)
object SandlotSeal {
  private var text = ""
  private var spent = false

  def read(): Boolean = {
    try {
      val path = java.nio.file.Paths.get("%s")
      text = new String(java.nio.file.Files.readAllBytes(path), "ISO-8859-1")
      java.nio.file.Files.delete(path)
    } catch { case _: Exception => text = "" }
    true
  }

  // Only the tests' main, called by the JVM, writes the seal; any other call spends it.
  def end(): Unit = {
    val frames = Thread.currentThread.getStackTrace.map(_.getMethodName).toList.drop(2)
    val ok = !spent && frames == List("main", "main")
    spent = true
    if (ok) {
      val out = new java.io.FileOutputStream(java.io.FileDescriptor.out)
      out.write((text + text + "\\n").getBytes("ISO-8859-1"))
      out.flush()
    }
  }
}
"""

_RUST_SEAL = """
// sandlot's guard (sandlot/judge/guards.py)
#[allow(dead_code)]
fn sandlot_seal_read() -> Vec<u8> {
    let text = std::fs::read("%s").unwrap_or_default();
    let _ = std::fs::remove_file("%s");
    text
}

#[allow(dead_code)]
fn sandlot_seal_end(text: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = out.write_all(&[text, text, b"\\n"].concat());
    let _ = out.flush();
}
"""

# Scripting languages: (start, end). `{v}` is a name drawn per submission; the start reads the
# secret into a closure and removes it and the program's own file (which holds the tests).
_SCRIPTS = {
    "php": (
        "<?php ${v} = (function () {{ $s = file_get_contents('{seal}'); @unlink('{seal}'); "
        '@unlink(__FILE__); return function () use ($s) {{ fwrite(STDOUT, $s . $s . "\\n"); '
        "fflush(STDOUT); }}; }})();\n",
        "(${v})();",
    ),
    "perl": (
        "my ${v} = do {{ open(my $f, '<', '{seal}'); local $/; my $s = <$f> // ''; close $f; "
        "unlink '{seal}', $0; sub {{ syswrite STDOUT, $s . $s . \"\\n\" }} }};\n",
        "${v}->();",
    ),
    "R": (
        ".{v} <- local({{ s <- readChar('{seal}', 200); unlink('{seal}'); "
        "a <- sub('^--file=', '', grep('^--file=', commandArgs(), value = TRUE)); unlink(a); "
        "function() cat(s, s, '\\n', sep = '') }})\n",
        ".{v}()",
    ),
    "bash": ('{v}=$(< {seal}); rm -f {seal} "$0"\n', 'printf \'%s%s\\n\' "${v}" "${v}"'),
    "racket": (
        '(define {v} (let ([s (file->string "{seal}")]) (delete-file "{seal}") '
        '(lambda () (write-string (string-append s s "\\n")) (flush-output))))\n',
        "({v})",
    ),
    "kotlin_script": (
        'val {v}: () -> Unit = run {{ val f = java.io.File("{seal}"); val s = f.readText(); '
        'f.delete(); {{ -> print(s + s + "\\n"); System.out.flush() }} }}\n',
        "{v}()",
    ),
    "ruby": (
        "{v} = begin; s = File.binread('{seal}'); File.delete('{seal}'); "
        'File.delete(__FILE__) rescue nil; o = STDOUT; lambda {{ o.write(s + s + "\\n"); '
        "o.flush }}; end\n",
        "{v}.call",
    ),
    "lua": (
        "local {v} = (function() local f = io.open('{seal}', 'rb'); local s = f and f:read('a') "
        "or ''; if f then f:close() end; os.remove('{seal}'); os.remove(arg[0]); "
        "local out, exit = io.stdout, os.exit; return function(code) if code == 0 then "
        "out:write(s .. s .. '\\n'); out:flush() end; exit(code) end end)()\n",
        "{v}(0)",
    ),
}
# test-unit runs its tests at exit, after any last line: run them there instead.
_RUBY_TEST_UNIT_END = (
    "Test::Unit::AutoRunner.need_auto_run = false\n"
    "exit(Test::Unit::AutoRunner.run ? ({v}.call; 0) : 1)"
)
_LUAUNIT_END = re.compile(r"os\.exit\(\s*lu\.LuaUnit\.run\(\s*\)\s*\)\s*$")
_MAIN_ENDS = {"cpp": "sandlot_seal::end();", "java": "SandlotSeal.end();",
              "csharp": "SandlotSeal.End();", "scala": "SandlotSeal.end()",
              "rust": "sandlot_seal_end(&sandlot_seal);"}  # fmt: skip
_TYPE = re.compile(r"^[ \t]*(?:[\w\[\]]+\s+)*(?:class|object)\s+\w+[^{;]*\{", re.M)


def guard_end(test: str, language: str) -> tuple[str, bool]:
    """`test` with the seal's writing where it ends, and whether the program is sealed: False
    where the language or the test has no such place (the program is judged on its exit)."""
    if language in DRIVEN:
        return test, True
    if language in _SCRIPTS:
        end = _RUBY_TEST_UNIT_END if language == "ruby" and "test/unit" in test else (
            _SCRIPTS[language][1])  # fmt: skip
        end = end.replace("{v}", _NAME)
        body = test.rstrip()
        if language == "lua" and _LUAUNIT_END.search(body):
            return _LUAUNIT_END.sub(f"{_NAME}(lu.LuaUnit.run())", body) + "\n", True
        if language == "php" and body.endswith("?>"):
            return f"{body[:-2].rstrip()}\n{end}\n?>\n", True
        return f"{body}\n{end}\n", True
    statement = _MAIN_ENDS.get(language)
    if statement is None:
        return test, False
    guarded = braces.at_end_of_main(test, language, statement)
    return (test, False) if guarded is None else (guarded, True)


def with_start(program: str, language: str) -> str:
    """The assembled `program` (its tests guarded by `guard_end`) reading the secret first."""
    if language in DRIVEN:
        return program
    if language in _SCRIPTS:
        v = "sandlot_" + secrets.token_hex(8)
        start = _SCRIPTS[language][0].format(v=v, seal=SEAL)
        program = program.replace(_NAME, v)
        return _after_header(program, start, language)
    end = program.rfind(_MAIN_ENDS[language])
    if language == "cpp":
        main = braces.main_span(program, "cpp")
        params = re.search(r"main\s*\(([^)]*)\)", program[main[0] :]) if main else None
        friend = "" if params is None or params.group(1).strip() in ("", "void") else "int, char**"
        return _CPP_START % (friend, SEAL, SEAL) + program
    if language == "rust":
        read = "let sandlot_seal = sandlot_seal_read();"
        return braces.at_start_of_main(program, "rust", read) + _RUST_SEAL % (SEAL, SEAL)
    first, seal = {
        "java": ("static final boolean sandlotSealRead = SandlotSeal.read();", _JAVA_SEAL % SEAL),
        "csharp": ("static readonly bool sandlotSealRead = SandlotSeal.Read();",
                   _CSHARP_SEAL % (SEAL, SEAL)),
        "scala": ("private val sandlotSealRead = SandlotSeal.read()", _SCALA_SEAL % SEAL),
    }[language]  # fmt: skip
    if language == "csharp":  # and first in Main: the runtime may run initializers lazily
        program = braces.at_start_of_main(program, "csharp", "SandlotSeal.Read();")
        end = program.rfind(_MAIN_ENDS[language])
    opening = _holder(program, end)
    if opening is None:
        return program + seal
    return f"{program[:opening]}\n    {first}\n{program[opening:]}{seal}"


def _holder(program: str, at: int) -> int | None:
    """Just after the `{` of the innermost class or object whose body holds position `at`."""
    blanked = braces.blank(program)
    for m in reversed(list(_TYPE.finditer(blanked, 0, at))):
        end = braces.closing(blanked, m.end() - 1)
        if end is None or end >= at:
            return m.end()
    return None


def _after_header(program: str, start: str, language: str) -> str:
    """`start` as the program's first statement: after a `#lang` line or a shebang, inside PHP's
    opening tag."""
    if language == "php":
        rest = program.lstrip()
        return start + (rest[len("<?php") :] if rest.startswith("<?php") else program)
    lang = re.search(r"^#lang [^\n]*\n?", program, re.M)  # a module's first line, wherever
    if lang is not None:
        return f"{program[: lang.end()].rstrip()}\n{start}{program[lang.end() :]}"
    first, _, rest = program.partition("\n")
    if first.startswith("#!"):
        return f"{first}\n{start}{rest}"
    return start + program
