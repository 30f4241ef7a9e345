"""The csharp row, and what it adds to mcs and mono so that C# runs as SandboxFusion's
`dotnet run` does.

`dotnet run` builds the Debug configuration: DEBUG and TRACE are defined, and a failed
`Debug.Assert` or `Trace.Assert` prints "Process terminated. Assertion failed." with a stack trace
and aborts the process (exit status 134). Under mono, `Debug.Assert` is compiled out without
`-d:DEBUG`, and with it mono's default trace listener only writes the failure to a trace file
(stderr with `MONO_TRACE_LISTENER=Console.Error`) and the program goes on to exit 0. MultiPL-E's
own evaluator copes by grepping stderr for `DefaultTraceListener.Fail`; a grep misses a program
that fails quietly and condemns one that merely prints the word, and it needs the judge, so a
plain `/run_code` would still "pass". Instead the compile step writes two files:

- `ASSERT_LISTENER`, compiled into the program: a trace listener whose `Fail` prints what .NET
  prints and ends the process with status 134 at once (`Environment.Exit`: no `catch` or
  `finally` of the program runs, from whatever thread the assertion failed);
- `main.exe.config`, the application configuration file mono reads beside `main.exe`: it replaces
  the default listener by that one. It is read only when `Debug` or `Trace` is first used, so a
  program without them pays nothing; with them, the run costs what it cost already.

Implicit usings: a `dotnet new console` project (SandboxFusion's) compiles with
`<ImplicitUsings>enable</ImplicitUsings>`, so `System`, `System.IO`, `System.Linq`,
`System.Collections.Generic`, `System.Net.Http`, `System.Threading` and
`System.Threading.Tasks` are in scope in every file: `Console.WriteLine(1)` needs no
`using System;`. mcs knows no `global using` (C# 10), so the compile step writes the program as
`.sandlot_main.cs`: the code's leading blank, `//` comment, `#define` and `#undef` lines (which
C# wants before the first token), then the seven usings, then `#line N "main.cs"` and the rest,
so that every message still names main.cs at its own line. main.cs stays as it was sent. A
using the code repeats is no error (CS0105 is a warning, silenced: .NET reports the repeat of a
global using as hidden, too). `System.Net.Http` is a separate assembly in Mono
(libmono-system-net-http4.0-cil): referenced, as .NET references it.

`-r:System.Numerics.dll`: .NET references `BigInteger` by default (MultiPL-E's evaluator also
passes it to the compiler); mcs does not. `-langversion:latest`: C# 7.2, the most mcs knows (its
default is 7.0, without `default` literals); .NET 8 compiles C# 12, so answers using later
features (local functions among them, which mcs lacks altogether) do not compile here.
"""

from __future__ import annotations

from sandlot.languages.registry import Language

LISTENER_FILE = ".sandlot_assert.cs"
LISTENER_TYPE = "SandlotRuntime.AssertFailure"

ASSERT_LISTENER = """\
namespace SandlotRuntime {
    public sealed class AssertFailure : System.Diagnostics.TraceListener {
        public override void Write(string message) { }
        public override void WriteLine(string message) { }
        public override void Fail(string message, string detail) {
            var text = new System.Text.StringBuilder("Process terminated. Assertion failed.");
            if (!string.IsNullOrEmpty(message)) text.Append('\\n').Append(message);
            if (!string.IsNullOrEmpty(detail)) text.Append('\\n').Append(detail);
            foreach (var frame in new System.Diagnostics.StackTrace(1, true).GetFrames()) {
                var method = frame.GetMethod();
                var type = method == null ? null : method.DeclaringType;
                if (type == null || type.Namespace == "System.Diagnostics") continue;
                text.Append("\\n   at ").Append(type.FullName).Append('.').Append(method.Name);
                if (frame.GetFileLineNumber() > 0)
                    text.Append(" in ").Append(frame.GetFileName()).Append(':')
                        .Append(frame.GetFileLineNumber());
            }
            System.Console.Out.Flush();
            System.Console.Error.WriteLine(text.ToString());
            System.Console.Error.Flush();
            System.Environment.Exit(134);
        }
    }
}
"""

APP_CONFIG = f"""\
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <system.diagnostics>
    <trace>
      <listeners>
        <clear/>
        <add name="sandlot" type="{LISTENER_TYPE}, main"/>
      </listeners>
    </trace>
  </system.diagnostics>
</configuration>
"""

MCS_FLAGS = ("-optimize+", "-langversion:latest", "-d:DEBUG", "-d:TRACE", "-r:System.Numerics.dll",
             "-r:System.Net.Http.dll", "-nowarn:105")  # fmt: skip
NET_HTTP = "/usr/lib/mono/4.5/System.Net.Http.dll"  # what -r:System.Net.Http.dll finds
PROGRAM_FILE = ".sandlot_main.cs"
IMPLICIT_USINGS = "".join(
    f"using {ns};\n"
    for ns in ("System", "System.IO", "System.Linq", "System.Collections.Generic",
               "System.Net.Http", "System.Threading", "System.Threading.Tasks")
)  # fmt: skip
# The judge's split (sandlot/judge/split_managed.py): the answer's sources in SPLIT_DIR are
# compiled alone into an assembly of their own, which the program references under an extern
# alias only (none of its names is in the program's global namespace); its internals are the
# program's to call, as in one file.
SPLIT_DIR = ".sandlot_answer"
ANSWER_ALIAS = "SandlotAnswer"
ANSWER_ASSEMBLY = "sandlot_answer.dll"
_VISIBLE = '[assembly: System.Runtime.CompilerServices.InternalsVisibleTo("main")]'
# A source as it compiles ($2 from $1): its leading lines that must precede any token (blank,
# `//` comments, #define/#undef, extern alias), the usings ($U), a #line directive giving the
# rest its own numbers in $1, the rest.
_WITH_USINGS = (
    r"""usings() { n=$(sed -n '/^[[:space:]]*\(\/\/.*\|#[[:space:]]*\(define\|undef\)\b.*"""
    r"""\|extern[[:space:]][[:space:]]*alias[[:space:]].*\)\?$/!{=;q}' "$1")"""
    r' && n=${n:-$(($(wc -l < "$1") + 1))}'
    r' && { head -n $((n - 1)) "$1"; printf "%s" "$U"; echo "#line $n \"$1\""; '
    r'tail -n +$n "$1"; } > "$2"; }'
)


def _literal(text: str) -> str:
    """`text` as a part of an argv template (which str.format fills in)."""
    return text.replace("{", "{{").replace("}", "}}")


_MCS = f"/usr/bin/mcs {' '.join(MCS_FLAGS)}"
# The answer's assembly, when the judge split the program: its sources with the usings, and the
# attribute that shows its internals to the program.
_ANSWER = (
    f'r=; set --; for f in {SPLIT_DIR}/*.cs; do [ -e "$f" ] || continue; '
    'usings "$f" "$f.sandlot" && set -- "$@" "$f.sandlot" || exit 1; done; '
    f'if [ $# -gt 0 ]; then printf "%s\\n" "$V" > {SPLIT_DIR}/.visible.cs && '
    f'{_MCS} -target:library -out:{ANSWER_ASSEMBLY} "$@" {SPLIT_DIR}/.visible.cs || exit 1; '
    f"r=-r:{ANSWER_ALIAS}={ANSWER_ASSEMBLY}; fi; "
)
# The files go in as the script's arguments, so no quoting of C# or XML in shell is needed.
COMPILE = (
    "/bin/sh", "-c",
    _literal(f'printf "%s" "$1" > {LISTENER_FILE} && printf "%s" "$2" > main.exe.config && '
             f'U=$3; V=$4; {_WITH_USINGS}; {_ANSWER}usings main.cs {PROGRAM_FILE} && '
             f"exec {_MCS} $r -out:main.exe {PROGRAM_FILE} {LISTENER_FILE}"),
    "mcs", _literal(ASSERT_LISTENER), _literal(APP_CONFIG), IMPLICIT_USINGS, _literal(_VISIBLE),
)  # fmt: skip
ARTIFACTS = ("main.exe", "main.exe.config", ANSWER_ASSEMBLY)

ROWS: tuple[Language, ...] = (
    Language(
        name="csharp",
        aliases=("cs", "c#"),
        source="main.cs",
        # Debug build as `dotnet run`: a failed Debug.Assert ends the run (the module's docstring).
        compile=COMPILE,
        artifacts=ARTIFACTS,
        run=("/usr/bin/mono", "--gc-params=max-heap-size={heap_mb}m", "main.exe"),
        version=("/usr/bin/mono", "--version"),
        binds=("/etc/mono",),
        requires=("/usr/bin/mcs", "/usr/bin/mono", NET_HTTP),
        apt=("mono-mcs", "mono-runtime", "libmono-system-net-http4.0-cil"),
        summary="C# 7.2 by Mono's mcs and mono, a Debug build as SandboxFusion's `dotnet run` "
        "(.NET is not in Debian): implicit usings as a console project's; a failed "
        "Debug.Assert aborts",
    ),
)
