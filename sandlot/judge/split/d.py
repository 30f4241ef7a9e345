"""D: the answer is the module `sandlot_answer` (its own file, compiled without `-funittest`, so
its unittest blocks never run), the harness the module `sandlot_tests`, which imports it
`static`ally: none of the answer's names is visible in the tests but through the harness's
bindings, one typed function pointer per function the dataset declares
(`immutable bool function(float[], float) f = &sandlot_answer.f;`), so an answer returning a
type of its own, or an overload set, is no way around the tests' comparisons.

The harness runs its own unittest blocks, each `assert` marking its site when it passed, through
a unit tester it installs in its module constructor (which runs after the answer's: the harness
imports the answer); an answer that installs its own later keeps the seal from being written.
The seal's secret is read by a pre-init function and kept masked.
"""

from __future__ import annotations

import re

from sandlot.executor import SEAL_FILE
from sandlot.judge import braces
from sandlot.judge.split import (
    Built,
    Side,
    Site,
    call_sites,
    mark_sites,
    matching,
    top_level_commas,
    view,
)

ANSWER = "sandlot_answer.d"  # the D_ut row's Split.answer
HARNESS = "main.d"
# SandboxFusion's MultiPL-E prelude for D (its IMPORT_HELPER): answers rely on it.
PRELUDE = "import std.array;\nimport std.algorithm;\n"

_GUARD = """
// sandlot's harness (sandlot/judge/split/d.py): the seal's secret, read before anything of the
// answer's runs and kept masked; the tests' assertion sites; the seal, written by the unit tester
// when every unittest of this module passed.
import core.runtime : Runtime, UnitTestResult;
import core.stdc.stdio : FILE, fclose, fflush, fopen, fprintf, fread, fwrite, remove, stderr,
    stdout;
import gcc.attributes : section, used;

private __gshared ubyte[64] sandlot_text, sandlot_mask;
private __gshared size_t sandlot_length;
private __gshared bool[@SITES@] sandlot_sites;

extern (C) private void sandlot_read()
{
    ubyte[64] text;
    if (FILE* f = fopen("@SEAL@", "rb"))
    {
        sandlot_length = fread(text.ptr, 1, text.length, f);
        fclose(f);
    }
    remove("@SEAL@");
    if (FILE* r = fopen("/dev/urandom", "rb"))
    {
        fread(sandlot_mask.ptr, 1, sandlot_mask.length, r);
        fclose(r);
    }
    foreach (i; 0 .. text.length)
    {
        sandlot_text[i] = text[i] ^ sandlot_mask[i];
        text[i] = 0;
    }
}

@section(".preinit_array") @used private __gshared extern (C) void function() sandlot_reader =
    &sandlot_read;

private void sandlot_pass(size_t site)
{
    sandlot_sites[site] = true;
}

shared static this()
{
    Runtime.extendedModuleUnitTester = &sandlot_run;
}

private UnitTestResult sandlot_run()
{
    size_t executed, failed, passed;
    static foreach (test; __traits(getUnitTests, sandlot_tests))
    {
        ++executed;
        try
            test();
        catch (Throwable e)
        {
            ++failed;
            auto message = e.toString();
            fprintf(stderr, "%.*s\\n", cast(int) message.length, message.ptr);
        }
    }
    foreach (site; sandlot_sites)
        passed += site;
    if (failed == 0 && sandlot_length > 0)
    {
        ubyte[64] text;
        foreach (i; 0 .. sandlot_length)
            text[i] = sandlot_text[i] ^ sandlot_mask[i];
        fflush(stdout);
        fwrite(text.ptr, 1, sandlot_length, stdout);
        fprintf(stdout, "passed=%d failed=0 skipped=0", cast(int) passed);
        fwrite(text.ptr, 1, sandlot_length, stdout);
        fwrite("\\n".ptr, 1, 1, stdout);
        fflush(stdout);
    }
    sandlot_length = 0; // once
    UnitTestResult result = {executed: executed, passed: executed - failed, runMain: false,
        summarize: executed > 0};
    return result;
}

void main()
{
}
"""
_DENIED = re.compile(r"[{};\"=#`]|\b(mixin|__traits|typeof|import|sandlot\w*)\b|\bq\{")
_IMPORT = re.compile(r"^[ \t]*(?:public\s+|static\s+)?import\s[^;]*;[ \t]*\n?", re.M)
_MODULE = re.compile(r"^[ \t]*module\s+[\w.]+\s*;[ \t]*\n?", re.M)
# A return type (words, `[]`, `!(...)` template arguments), the name and its `(`.
_SIGNATURE = re.compile(
    r"^[ \t]*(?P<ret>(?:[^\s(){};=]|\([^()\n]*\))(?:[^(){};=\n]|\([^()\n]*\))*?)"
    r"\s+(?P<name>[A-Za-z_]\w*)\s*\(",
    re.M,
)


def split(side: Side) -> Built | str | None:
    if not re.search(r"\bunittest\b", braces.blank(side.tests)):
        return None
    code = braces.drop_main(side.code, "D_ut") if side.whole else side.prompt + side.code
    answer = f"module sandlot_answer;\n{side.head}{_MODULE.sub('', code)}\n"
    tests = braces.drop_main(side.tests, "D_ut")
    sites = _sites(tests)
    tests = mark_sites(tests, sites, _mark)
    imports = "".join(_IMPORT.findall(side.head + side.interface))
    # Each function the dataset declares, typed as it declares it (or as the answer does, in
    # other types the harness resolves: never the answer's own, which are not in its scope);
    # and the answer's other functions the tests call, typed as it declares them.
    mine = {f[0]: f for f in _signatures(code)
            if f[0] != "main" and not _DENIED.search(f[1] + f[2])}  # fmt: skip
    theirs = [_either(f, mine.get(f[0])) for f in _signatures(side.interface)]
    declared = {name for name, _, _ in theirs}
    used = set(re.findall(r"[A-Za-z_]\w*", braces.blank(side.tests)))
    used -= {name for name, _, _ in _signatures(side.tests)}  # the tests' own
    extra = [f for name, f in mine.items() if name not in declared and name in used]
    bindings = "".join(_binding(*f) for f in theirs + extra)
    guard = _GUARD.replace("@SITES@", str(max(1, len(sites)))).replace("@SEAL@", SEAL_FILE)
    harness = (f"module sandlot_tests;\nstatic import sandlot_answer;\n{imports}{bindings}"
               f"{guard}\n{tests}\n")  # fmt: skip
    return Built(answer, {HARNESS: harness.encode()}, len(sites) or None,
                 view({ANSWER: answer, HARNESS: harness}))  # fmt: skip


def _sites(tests: str) -> list[Site]:
    """`assert(...)` calls, each with the `;` that ends its statement (D has no empty one)."""
    blanked = braces.blank(tests)
    out = []
    for site in call_sites(tests, "assert"):
        after = re.match(r"\s*;", blanked[site.end :])
        out.append(Site(site.start, site.end + after.end()) if after else site)
    return out


def _mark(text: str, n: int) -> str:
    if text.rstrip().endswith(";"):
        return f"{{ {text} sandlot_pass({n}); }}"
    return f"({text}, sandlot_pass({n}))"


def _signatures(declarations: str) -> list[tuple[str, str, str]]:
    """(name, return type, parameters) of each top-level function the dataset declares."""
    blanked = braces.blank(declarations)
    out = []
    depth_at = _depths(blanked)
    for m in _SIGNATURE.finditer(blanked):
        opening = m.end() - 1
        close = matching(blanked, opening)
        ret = m.group("ret").strip()
        if close is None or depth_at[m.start()] or ret in ("return", "else", "import", "module"):
            continue
        after = blanked[close + 1 :].lstrip()
        if after and after[0] not in "{" and not after.startswith(("if", "in", "out", "do")):
            continue  # a call or a declaration without a body to come
        params = declarations[opening + 1 : close]
        out.append((m.group("name"), declarations[m.start("ret") : m.end("ret")].strip(), params))
    return out


def _depths(blanked: str) -> list[int]:
    depth, out = 0, []
    for c in blanked:
        out.append(depth)
        depth += (c == "{") - (c == "}")
    return out


def _either(
    theirs: tuple[str, str, str], mine: tuple[str, str, str] | None
) -> tuple[str, str, str]:
    """The dataset's signature, or the answer's where it has other types."""
    return mine if mine is not None and _types(mine) != _types(theirs) else theirs


def _types(signature: tuple[str, str, str]) -> tuple[str, list[str]]:
    return re.sub(r"\s+", "", signature[1]), _param_types(signature[2])


def _binding(name: str, ret: str, params: str) -> str:
    return (f"immutable {ret} function({', '.join(_param_types(params))}) {name} = "
            f"&sandlot_answer.{name};\n")  # fmt: skip


def _param_types(params: str) -> list[str]:
    types = []
    for param in top_level_commas(params, "()[]"):
        param = param.split("=")[0].strip()
        if not param:
            continue
        words = re.match(r"(.*?)\s*\b[A-Za-z_]\w*$", param)
        types.append(words.group(1).strip() if words and words.group(1).strip() else param)
    return [re.sub(r"\s+", " ", t) for t in types]
