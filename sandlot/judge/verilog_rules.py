"""What a VerilogEval answer may hold: a circuit whose only channel to its testbench is its ports.

The testbench and the answer run in one simulation, which then prints "Mismatches: N in M
samples", the verdict. A seal inside that simulation would be readable by the answer (the same
simulation reaches any signal by its hierarchical name), so the answer is held to what a circuit
needs instead, and refused, with the reason, before anything runs when it holds:

- a system task or function outside a short list of pure ones (`$bits`, `$signed`, `$clog2`...):
  `$display`, `$finish`, `$fopen` and the rest print, stop or read;
- a hierarchical or dotted name (`tb.stats1.errors`, `$root`): a signal of the testbench;
- `force`, `release`, `defparam`, `bind` or a compiler directive: each changes what is elsewhere;
- the name of a module of the testbench (`reference_module`): instantiated, it is the reference
  solution.
"""

from __future__ import annotations

import re

PURE_SYSTEM_FUNCTIONS = frozenset(
    ("$bits", "$signed", "$unsigned", "$clog2", "$countones", "$onehot", "$onehot0",
     "$isunknown", "$high", "$low", "$left", "$right", "$size", "$dimensions", "$increment")
)  # fmt: skip
_FORBIDDEN_KEYWORDS = ("force", "release", "defparam", "bind")
_COMMENTS_AND_STRINGS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)
_SYSTEM = re.compile(r"\$[A-Za-z_][\w$]*")
# `a.b` where `a` is a name: a hierarchical reference (a named port connection is `(.a` or `,.a`)
_DOTTED = re.compile(r"(?<![\w$.'])([A-Za-z_][\w$]*)\s*\.\s*[A-Za-z_]")
_DIRECTIVE = re.compile(r"`\s*[A-Za-z_]\w*")
_MODULE = re.compile(r"^\s*(?:module|macromodule|interface|program)\s+([A-Za-z_]\w*)", re.M)
_INSTANCE = re.compile(r"^\s*([A-Za-z_]\w*)\s+(?:#\s*\([^;]*?\)\s*)?([A-Za-z_]\w*)\s*\(", re.M)
_VERILOG_WORDS = frozenset(
    ("module", "input", "output", "inout", "wire", "reg", "logic", "assign", "always",
     "initial", "final", "if", "else", "begin", "end", "case", "for", "while", "task",
     "function", "return", "repeat", "int", "bit", "integer", "typedef", "struct", "packed",
     "forever", "wait", "default", "endcase", "endmodule", "localparam", "parameter")
)  # fmt: skip


def blank(code: str) -> str:
    """`code` without its comments and strings (each kept as a space)."""
    return _COMMENTS_AND_STRINGS.sub(" ", code)


def testbench_names(test: str) -> frozenset[str]:
    """The testbench's modules and the instances it makes of them."""
    text = blank(test)
    modules = set(_MODULE.findall(text))
    instances = {name for kind, name in _INSTANCE.findall(text)
                 if kind in modules or kind == "top_module"}  # fmt: skip
    return frozenset((modules | instances) - _VERILOG_WORDS)


def refusal(answer: str, test: str) -> str | None:
    """Why `answer` (the module body, or the whole module) is not a circuit judged by its ports
    alone, or None."""
    text = blank(answer)
    for task in _SYSTEM.findall(text):
        if task not in PURE_SYSTEM_FUNCTIONS:
            allowed = ", ".join(sorted(PURE_SYSTEM_FUNCTIONS))
            return f"the answer calls {task}: a circuit may use only {allowed}"
    dotted = _DOTTED.search(text)
    if dotted is not None:
        name = dotted.group().strip()
        return f"the answer names {name}...: a hierarchical name reaches past its ports"
    directive = _DIRECTIVE.search(text)
    if directive is not None:
        return f"the answer holds the compiler directive {directive.group()}"
    words = set(re.findall(r"[A-Za-z_][\w$]*", text))
    for keyword in _FORBIDDEN_KEYWORDS:
        if keyword in words:
            return f"the answer uses `{keyword}`, which changes what is outside the circuit"
    foreign = sorted(words & testbench_names(test))
    if foreign:
        return f"the answer names {foreign[0]}, a module or instance of the testbench"
    return None


_SUMMARY = re.compile(rb"^Mismatches: (\d+) in (\d+) samples\s*$", re.M)


def summary_passes(stdout: bytes) -> str | None:
    """Why the testbench's summary is no pass (None: it is one): exactly one summary line, with
    no mismatch in at least one sample."""
    found = _SUMMARY.findall(stdout)
    if len(found) != 1:
        return f"the testbench printed {len(found)} summary lines, where one was expected"
    mismatches, samples = (int(n) for n in found[0])
    if mismatches or not samples:
        return f"Mismatches: {mismatches} in {samples} samples"
    return None
