"""The symbols an answer's object may define and use when it is linked with a judge's harness.

A split program (sandlot/judge/split/) compiles the answer on its own and links it with the
harness, which owns `main`, the test runner and the seal. What the answer could still do at the
link is take over a name: define the harness's `main` or one of its functions, define a function
of the C library or the language's runtime (an assertion handler, `exit`, `write`, `fread`) so
that the harness calls the answer's instead (interposition), reach a harness symbol the harness
never meant to share (the seal's state), or run before the harness reads its secret. The rule,
for the answer's objects A, the harness's objects H and the runtime libraries R:

- A defines no symbol R defines (no interposing the runtime), except weak copies of C++ or D
  template instances and inline functions (compilers emit those from the library's headers),
  which are made local to A before the link: no one but A calls them;
- A defines no symbol H defines or uses, except the entry points (what H uses that R does not
  define: the functions the tests call) and weak copies of what H defines weakly too (the same
  template instance or inline function in both, of which the linker keeps the harness's);
- A uses no symbol H defines strongly unless R defines it too (no reaching into the harness's
  functions and data; its seal is not even visible to the linker);
- A has no `.preinit_array` (it would run before the harness reads its secret), no ifunc
  resolver (run by the loader before any of it), no name outside `[A-Za-z0-9_.$]`; with `own`,
  every name A defines is in its own namespace (Rust's crate name), and with `no_init`, A has
  no constructors at all.

This file runs two ways: in the compile box as a script (stdlib only, no site packages), where
it reads the answer's objects (hostile input) and exits 1 with the reason on stderr; and in the
server, imported, to list what trusted runtime libraries define (`runtime_symbols`). It parses
ELF64 little-endian objects, shared libraries and `ar` archives itself, so that no tool of the
host ever reads an object an answer produced.
"""

from __future__ import annotations

import re
import struct
import sys
from dataclasses import dataclass, field

_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_SHT_INIT_ARRAY, _SHT_PREINIT_ARRAY = 14, 16
_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE = 1, 2, 10
_STT_GNU_IFUNC = 10
_NAME = re.compile(r"[A-Za-z0-9_.$]+")
MAX_SYMBOLS = 200_000  # an object with more is refused (a box's disk holds more, a check not)


class BadObject(Exception):
    """An object the checker cannot read: refused, like a forbidden one."""


@dataclass(slots=True)
class Symbols:
    strong: set[str] = field(default_factory=set)  # defined, global binding
    weak: set[str] = field(default_factory=set)  # defined, weak or unique binding
    undefined: set[str] = field(default_factory=set)
    ifuncs: set[str] = field(default_factory=set)
    sections: set[str] = field(default_factory=set)  # `preinit` and `init` when present

    @property
    def defined(self) -> set[str]:
        return self.strong | self.weak

    def update(self, other: Symbols) -> None:
        for name in ("strong", "weak", "undefined", "ifuncs", "sections"):
            getattr(self, name).update(getattr(other, name))


def _unpack(fmt: str, data: bytes, at: int) -> tuple:
    try:
        return struct.unpack_from(fmt, data, at)
    except struct.error as exc:
        raise BadObject(f"truncated object ({exc})") from None


def _cstring(data: bytes, at: int) -> str:
    end = data.find(b"\0", at)
    if at >= len(data) or end < 0:
        raise BadObject("a symbol name runs past its string table")
    return data[at:end].decode("latin-1")


def elf_symbols(data: bytes, *, dynamic: bool = False) -> Symbols:
    """The global symbols of one ELF64 little-endian file (its .dynsym when `dynamic`)."""
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        raise BadObject("not an ELF64 little-endian object")
    (shoff,) = _unpack("<Q", data, 0x28)
    shentsize, shnum, shstrndx = _unpack("<HHH", data, 0x3A)
    if shentsize != 64 or shnum > 100_000:
        raise BadObject("unexpected section headers")
    sections = [_unpack("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]
    names_at = sections[shstrndx][4] if shstrndx < shnum else 0
    out = Symbols()
    wanted = _SHT_DYNSYM if dynamic else _SHT_SYMTAB
    for sh_name, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        name = _cstring(data, names_at + sh_name) if names_at else ""
        if sh_type == _SHT_PREINIT_ARRAY or name.startswith(".preinit_array"):
            out.sections.add("preinit")
        if sh_type == _SHT_INIT_ARRAY or name.startswith((".init_array", ".ctors")):
            out.sections.add("init")
        if sh_type != wanted:
            continue
        if entsize != 24 or size // 24 > MAX_SYMBOLS or link >= shnum:
            raise BadObject("unexpected symbol table")
        strings = sections[link][4]
        for i in range(1, size // 24):  # entry 0 is the null symbol
            st_name, st_info, _, st_shndx, _, _ = _unpack("<IBBHQQ", data, offset + i * 24)
            bind, kind = st_info >> 4, st_info & 0xF
            if bind not in (_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE):
                continue
            symbol = _cstring(data, strings + st_name)
            if st_shndx == 0:
                out.undefined.add(symbol)
            elif bind == _STB_GLOBAL:
                out.strong.add(symbol)
            else:
                out.weak.add(symbol)
            if kind == _STT_GNU_IFUNC and st_shndx != 0:
                out.ifuncs.add(symbol)
    # A name both defined here and listed as undefined (an archive's members) is defined.
    out.undefined -= out.defined
    return out


def archive_members(data: bytes) -> list[bytes]:
    """The members of an `ar` archive (GNU or BSD names; the symbol and name tables skipped)."""
    members, at = [], 8
    while at + 60 <= len(data):
        header = data[at : at + 60]
        name = header[:16].decode("latin-1").strip()
        try:
            size = int(header[48:58].decode("latin-1").strip())
        except ValueError:
            raise BadObject("a broken archive header") from None
        body = data[at + 60 : at + 60 + size]
        if name.startswith("#1/"):  # BSD: the name leads the body
            skip = int(name[3:])
            body = body[skip:]
        if name not in ("/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            members.append(body)
        at += 60 + size + (size & 1)
    return members


def read_symbols(data: bytes, *, dynamic: bool = False) -> Symbols:
    """The symbols of an object, shared library or archive (its ELF members)."""
    if data.startswith(b"!<arch>\n"):
        out = Symbols()
        for member in archive_members(data):
            if member[:4] == b"\x7fELF":
                out.update(elf_symbols(member))
        out.undefined -= out.defined
        return out
    return elf_symbols(data, dynamic=dynamic)


def runtime_symbols(paths: list[str]) -> list[str]:
    """What the runtime libraries at `paths` define (trusted files: the toolchain's own)."""
    names: set[str] = set()
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        dynamic = data[:4] == b"\x7fELF" and struct.unpack_from("<H", data, 16)[0] == 3
        names |= read_symbols(data, dynamic=dynamic).defined
    return sorted(names)


def summary(symbols: Symbols) -> str:
    """A harness's symbols as text: `S name` (strong), `W name` (weak), `U name` (used)."""
    lines = [f"S {n}" for n in sorted(symbols.strong)] + [f"W {n}" for n in sorted(symbols.weak)]
    return "\n".join(lines + [f"U {n}" for n in sorted(symbols.undefined)]) + "\n"


def parse_summary(text: str) -> Symbols:
    out = Symbols()
    for line in text.splitlines():
        kind, _, name = line.partition(" ")
        {"S": out.strong, "W": out.weak, "U": out.undefined}[kind].add(name)
    return out


def refusal(
    answer: Symbols, harness: Symbols, runtime: set[str], *, own: str = "", no_init: bool = False
) -> str | None:
    """Why the answer may not be linked with the harness, or None when it may."""
    for name in sorted(answer.defined | answer.undefined):
        if not _NAME.fullmatch(name):
            return f"the answer's object has a symbol named {name!r}, which no language here makes"
    if "preinit" in answer.sections:
        return "the answer has a .preinit_array: it would run before the harness reads its seal"
    if no_init and "init" in answer.sections:
        return "the answer has a constructor (.init_array): this language runs nothing before main"
    if answer.ifuncs:
        return f"the answer defines an ifunc ({min(answer.ifuncs)}), which the loader runs first"
    for name in sorted(answer.defined):
        if name in runtime and name not in private(answer, runtime):
            return f"the answer defines `{name}`, which the runtime defines: it may not replace it"
        if name in harness.defined and not (name in answer.weak and name in harness.weak):
            return f"the answer defines `{name}`, which the harness defines"
        if own and own not in name and name not in harness.weak and not _instance(name, harness):
            return f"the answer defines `{name}` outside its own namespace (#[no_mangle]...)"
    for name in sorted(answer.undefined):
        if name in harness.strong and name not in runtime:
            return f"the answer uses `{name}`, which belongs to the harness"
    return None


# A generic of another crate's (std's `RawVec<T>::grow_one`) instantiated in the answer's crate:
# a legacy-mangled name whose hash covers the instantiating crate. Rust's standard library names
# its own symbols in the v0 scheme (`_R...`), so such a name is none of its.
_RUST_INSTANCE = re.compile(r"_ZN[0-9A-Za-z_.$]*17h[0-9a-f]{16}E")


def _instance(name: str, harness: Symbols) -> bool:
    """Whether a name outside the answer's namespace is a generic instance of its crate's own,
    one the harness does not define. The harness may use it: rustc links the harness to an
    instance of the answer's crate only where that crate's metadata says it made one (the same
    std generic for the same std types: the tests' types are the prompt's), and a crate cannot
    define a second symbol of that name (`#[export_name]`, `global_asm!`): rustc refuses it.
    An instance the answer did not make is one the harness makes for itself, under its own name."""
    return _RUST_INSTANCE.fullmatch(name) is not None and name not in harness.defined


def private(answer: Symbols, runtime: set[str]) -> set[str]:
    """The answer's weak copies of C++ or D template instances and inline functions the runtime
    library exports too (compilers emit them from the library's own headers): made local to
    the answer's object before the link, so that the answer keeps them for itself and neither
    the harness nor the library ever calls them. A C name (an assertion handler, `exit`,
    `write`) never is one: defining it is refused."""
    return {n for n in answer.weak & runtime if n.startswith(("_Z", "_D"))}


def _load(path: str) -> Symbols:
    with open(path, "rb") as f:
        return read_symbols(f.read())


def main(argv: list[str]) -> int:
    """`summarize OBJ... > FILE`, or `check HARNESS_SUMMARY RUNTIME_LIST [--own NAME]
    [--no-init] [--private FILE] OBJ...`: exit 1 with the reason on stderr, else write the
    answer's symbols to make local (objcopy --localize-symbols) to FILE."""
    command, *rest = argv
    try:
        if command == "summarize":
            total = Symbols()
            for path in rest:
                total.update(_load(path))
            total.undefined -= total.defined
            sys.stdout.write(summary(total))
            return 0
        harness_path, runtime_path, *rest = rest
        own, no_init, local, objects = "", False, "", []
        while rest:
            arg = rest.pop(0)
            if arg == "--own":
                own = rest.pop(0)
            elif arg == "--no-init":
                no_init = True
            elif arg == "--private":
                local = rest.pop(0)
            else:
                objects.append(arg)
        answer = Symbols()
        for path in objects:
            answer.update(_load(path))
        answer.undefined -= answer.defined
        with open(harness_path) as f:
            harness = parse_summary(f.read())
        with open(runtime_path) as f:
            runtime = set(f.read().split())
        why = refusal(answer, harness, runtime, own=own, no_init=no_init)
    except BadObject as exc:
        why = f"the answer's object cannot be checked: {exc}"
    if why is None:
        if local:
            with open(local, "w") as f:
                f.write("".join(f"{name}\n" for name in sorted(private(answer, runtime))))
        return 0
    sys.stderr.write(f"sandlot: {why}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
