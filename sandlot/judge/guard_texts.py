"""What the judge's guards (guards.py) put in a program, per kind of language: the source text
of the compiled languages' guards, and where each kind puts its reading and its writing of the
seal. The language rows (dialects.py) say which kind and text is theirs.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from sandlot.executor import SEAL_FILE as SEAL
from sandlot.judge import braces, sites

NAME = "__SANDLOT_SEAL_NAME__"  # in an end statement, until the start draws the name

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

# What both of C#'s seals (this in-process guard, and split_managed.py's) count the tests'
# assertion sites with: the sites that ran and held, and the checks the tests' asserts become.
CSHARP_SITE_CHECKS = """    static readonly System.Collections.Generic.HashSet<int> passed =
        new System.Collections.Generic.HashSet<int>();

    // An assertion site of the tests (sandlot/judge/sites.py): fails as Debug.Assert does.
    public static void Check(int site, bool ok) {
        if (!ok) {
            System.Console.Out.Flush();
            System.Console.Error.WriteLine("Process terminated. Assertion failed.");
            System.Environment.Exit(134);
        }
        passed.Add(site);
    }

    public static bool Fails(int site, bool failed) {
        if (!failed) passed.Add(site);
        return failed;
    }
"""

_CSHARP_SEAL = (
    """
// sandlot's guard (sandlot/judge/guards.py)
static class SandlotSeal {
    static string text = "";
    static bool read, spent;
"""
    + CSHARP_SITE_CHECKS
    + """
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
        var counts = "passed=" + passed.Count + " failed=0";
        var bytes = System.Text.Encoding.ASCII.GetBytes(text + counts + text + "\\n");
        using (var stdout = System.Console.OpenStandardOutput()) {
            stdout.Write(bytes, 0, bytes.Length);
        }
    }
}
"""
)

_SCALA_SEAL = """
// sandlot's guard (sandlot/judge/guards.py), in a package of its own: the tests name it from
// the root, where nothing the answer declares in their object can stand for it.
package sandlot {
object SandlotSeal {
  private var text = ""
  private var spent = false
  private val passed = new java.util.BitSet()

  // An assertion site of the tests (sandlot/judge/sites.py): fails as Predef.assert does.
  def check(site: Int, ok: Boolean): Unit = {
    if (!ok) throw new java.lang.AssertionError("assertion failed")
    passed.set(site)
  }

  def fails(site: Int, failed: Boolean): Boolean = {
    if (!failed) passed.set(site)
    failed
  }

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
      val counts = "passed=" + passed.cardinality + " failed=0"
      out.write((text + counts + text + "\\n").getBytes("ISO-8859-1"))
      out.flush()
    }
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


_TYPE = re.compile(r"^[ \t]*(?:[\w\[\]]+\s+)*(?:class|object)\s+\w+[^{;]*\{", re.M)


def _appended(body: str, end: str) -> str:
    return f"{body}\n{end}\n"


def _first_statement(program: str, start: str) -> str:
    """`start` as the program's first statement: after a shebang."""
    first, _, rest = program.partition("\n")
    if first.startswith("#!"):
        return f"{first}\n{start}{rest}"
    return start + program


@dataclass(frozen=True, slots=True)
class ScriptGuard:
    """A script's guard in the program's text (Kotlin scripts; the other scripting languages
    have harnesses of their own, sandlot/judge/scripts/): `start` reads the secret into a
    closure bound to `{v}` (a name drawn per submission) and removes it and the program's own
    file (which holds the tests); `end`, after the tests' last line, calls it.
    `place_start(program, start)` puts the reading in."""

    start: str
    end: str
    place_start: Callable[[str, str], str] = _first_statement

    def guard_end(self, test: str, language: str) -> tuple[str, bool]:
        return _appended(test.rstrip(), self.end.replace("{v}", NAME)), True

    def with_start(self, program: str) -> str:
        v = "sandlot_" + secrets.token_hex(8)
        start = self.start.format(v=v, seal=SEAL)
        return self.place_start(program.replace(NAME, v), start)


@dataclass(frozen=True, slots=True)
class MainGuard:
    """A compiled language's guard: `end` is the last statement of the tests' main; `start(program,
    end)` puts the reading where nothing of the answer runs before it."""

    end: str
    start: Callable[[str, str], str]
    # The tests' assertion sites, each reporting to the seal (sites.py): the seal's count.
    sites: sites.Dialect | None = None

    def guard_end(self, test: str, language: str) -> tuple[str, bool]:
        if self.sites is not None:
            test = sites.instrument(test, self.sites)[0]
        guarded = braces.at_end_of_main(test, language, self.end)
        return (test, False) if guarded is None else (guarded, True)

    def tests(self, test: str) -> int | None:
        return None if self.sites is None else sites.instrument(test, self.sites)[1]

    def with_start(self, program: str) -> str:
        return self.start(program, self.end)


_DECLARED = re.compile(
    r"(?<![\w.])(?:object|class|interface|val|var|fun|typealias)\s+(?:<[^>]*>\s*)?([`\w.]+)"
    r"|(?<![\w.])import\s+[\w.]+\s+as\s+(\w+)"
    r"|(?<![\w.])va[lr]\s*\(([^)]*)\)"
)


def shadowing(guard: ScriptGuard) -> Callable[[str], str | None]:
    """For a script whose top-level declarations are in scope everywhere (a Kotlin script): why
    an answer may not go in, when at its top level it declares a name the guard's text calls
    (`object java { ... }` would stand for the `java.io.File` that reads the secret)."""
    used = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"\{\w*\}", " ", guard.start + guard.end)))

    def why(code: str) -> str | None:
        blanked = braces.blank(code.replace("`", " "))  # `name` quotes a name, no string
        for m in _DECLARED.finditer(blanked):
            if blanked.count("{", 0, m.start()) != blanked.count("}", 0, m.start()):
                continue  # a local of a function or a member of a class: not the script's
            if m.group(1) or m.group(2):
                names = (m.group(1) or m.group(2)).split(".")[-1:]
            else:
                names = [n.strip().split(":")[0].strip() for n in m.group(3).split(",")]
            clash = sorted(set(names) & used)
            if clash:
                return (f"the answer declares {clash[0]!r} at the top of the script, a name the "
                        "judge's guard uses: rename it")  # fmt: skip
        return None

    return why


_KOTLIN_HEADER = re.compile(
    r"(?:[ \t]*(?:#![^\n]*|//[^\n]*|/\*[\s\S]*?\*/|@file:[^\n]*|package\s[^\n]*"
    r"|import\s[^\n]*)?[ \t]*(?:\n|$))*"
)


def kotlin_script_start(program: str, start: str) -> str:
    """After the script's header (its package, `@file:` annotations and imports: Kotlin takes
    no import after a statement), before anything of it runs."""
    end = _KOTLIN_HEADER.match(program)
    at = end.end() if end is not None else 0
    return f"{program[:at]}{start}{program[at:]}"


# -- where the compiled languages' guards go ---------------------------------------------------


def cpp_start(program: str, end: str) -> str:
    main = braces.main_span(program, "cpp")
    params = re.search(r"main\s*\(([^)]*)\)", program[main[0] :]) if main else None
    friend = "" if params is None or params.group(1).strip() in ("", "void") else "int, char**"
    return _CPP_START % (friend, SEAL, SEAL) + program


def rust_start(program: str, end: str) -> str:
    read = "let sandlot_seal = sandlot_seal_read();"
    return braces.at_start_of_main(program, "rust", read) + _RUST_SEAL % (SEAL, SEAL)


def _in_holder(program: str, end: str, first: str, seal: str) -> str:
    """`first` (the reading) as the first static member of the class or object that holds the
    tests' main (its `end`), and the guard's class after the program."""
    opening = _holder(program, program.rfind(end))
    if opening is None:
        return program + seal
    return f"{program[:opening]}\n    {first}\n{program[opening:]}{seal}"


def scala_start(program: str, end: str) -> str:
    first = "private val sandlotSealRead = _root_.sandlot.SandlotSeal.read()"
    return _in_holder(program, end, first, _SCALA_SEAL % SEAL)


def csharp_start(program: str, end: str) -> str:
    # and first in Main: the runtime may run initializers lazily
    program = braces.at_start_of_main(program, "csharp", "global::SandlotSeal.Read();")
    first = "static readonly bool sandlotSealRead = global::SandlotSeal.Read();"
    return _in_holder(program, end, first, _CSHARP_SEAL % (SEAL, SEAL))


def _holder(program: str, at: int) -> int | None:
    """Just after the `{` of the innermost class or object whose body holds position `at`."""
    blanked = braces.blank(program)
    for m in reversed(list(_TYPE.finditer(blanked, 0, at))):
        end = braces.closing(blanked, m.end() - 1)
        if end is None or end >= at:
            return m.end()
    return None
