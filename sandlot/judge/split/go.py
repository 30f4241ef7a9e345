"""Go: the answer is a package of its own (`sandlot_answer/`), the harness the test package that
imports it, and the seal a third package (`sandlot_seal/`) that the answer's package imports
first, so that Go initializes it (and it reads and removes the secret) before any of the
answer's `init` or package variables.

The answer may import the standard library only (not `unsafe`, so no `//go:linkname` into the
harness or the seal), and its package exports each function the dataset declares under a name
of the harness's; the harness binds the dataset's names to them, typed as the dataset declares
them. Its `TestMain`, `Test*` functions and `init` are the answer package's own: `go test` runs
the harness's alone. The harness's `TestMain` writes the seal when `m.Run()` passed, with the
number of its test functions that ran to their end without failing.
"""

from __future__ import annotations

import re

from sandlot.executor import SEAL_FILE
from sandlot.judge import braces, splices
from sandlot.judge.split import Built, Side, matching, top_level_commas, view

ANSWER = "sandlot_answer/answer.go"  # the go_test row's Split.answer
HARNESS = "main_test.go"
SEAL = "sandlot_seal/seal.go"
_EXPORT = "SandlotExport_"

_SEAL_PACKAGE = """\
// sandlot's seal (sandlot/judge/split/go.py): the run's secret, read and removed when this
// package initializes (the answer's package imports it, so before any of its code), kept masked,
// and written once, when the harness's TestMain says the tests passed. It imports syscall alone,
// which every package that could read a file initializes after.
package sandlot_seal

import "syscall"

var text, mask []byte
var spent bool

func init() {
	buf := make([]byte, 64)
	n := 0
	if fd, err := syscall.Open("@SEAL@", syscall.O_RDONLY, 0); err == nil {
		n, _ = syscall.Read(fd, buf)
		syscall.Close(fd)
	}
	syscall.Unlink("@SEAL@")
	if n < 0 {
		n = 0
	}
	mask = make([]byte, n)
	if fd, err := syscall.Open("/dev/urandom", syscall.O_RDONLY, 0); err == nil {
		syscall.Read(fd, mask)
		syscall.Close(fd)
	}
	text = make([]byte, n)
	for i := 0; i < n; i++ {
		text[i] = buf[i] ^ mask[i]
		buf[i] = 0
	}
}

func digits(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

// End writes the seal (once) when the tests passed: code 0, and `passed` test functions.
func End(code int, passed int) {
	if spent || code != 0 || len(text) == 0 {
		spent = true
		return
	}
	spent = true
	plain := make([]byte, len(text))
	for i := range text {
		plain[i] = text[i] ^ mask[i]
	}
	payload := "passed=" + digits(passed) + " failed=0 skipped=0"
	syscall.Write(1, []byte(string(plain)+payload+string(plain)+"\\n"))
}
"""
_TEST_MAIN = """
var sandlotPassed [@TESTS@]bool

func TestMain(m *testing.M) {
	code := m.Run()
	passed := 0
	for _, p := range sandlotPassed {
		if p {
			passed++
		}
	}
	sandlot_seal.End(code, passed)
	os.Exit(code)
}

// Each subtest the tests start must run: the answer's init can change the testing flags
// (flag.Set("test.run", ...), os.Args) so that t.Run filters it out and reports success.
func sandlotRun(t *testing.T, name string, f func(t *testing.T)) bool {
	ran := false
	ok := t.Run(name, func(t *testing.T) {
		ran = true
		f(t)
	})
	if !ran {
		t.Errorf("sandlot: the subtest %q did not run", name)
	}
	return ok && ran
}
"""
_TEST = re.compile(r"^func\s+(Test\w*)\s*\(\s*(\w+)\s+\*testing\.T\s*\)\s*\{", re.M)
_FUNC = re.compile(r"^func\s+(\w+)\s*(\[[^\]]*\])?\s*\(", re.M)


def split(side: Side) -> Built | str | None:
    answer_code = splices.go_without_head(side.code) if side.whole else side.code
    head = side.head or side.row.get("test_setup", "")
    imports = splices.go_imports(side.prompt + side.interface) + (
        splices.go_imports(side.code) if side.whole else [])  # fmt: skip
    prompt_body = re.sub(r"(?ms)^package\s+\w+\s*$|^import\s*\(.*?\)\s*|^import\s+\"[^\"]+\"\s*",
                         "", side.prompt)  # fmt: skip
    functions = _functions(side.interface)
    if any(generic for _, generic, _ in functions):
        return None  # a generic function has no value to bind without its type arguments
    body = ("" if side.whole else prompt_body) + answer_code
    # Each typed as the dataset declares it, or as the answer does where it has other types
    # (those the harness resolves: the answer's own are not in its scope); and the answer's
    # other functions the tests call, typed as it declares them.
    mine = {f[0]: f for f in _functions(body) if not f[1] and _plain_type(f[2])}
    functions = [mine.get(f[0], f) for f in functions]
    declared = {name for name, _, _ in functions}
    used = _names(side.tests) - {f[0] for f in _functions(side.tests)}
    functions += [f for name, f in mine.items() if name not in declared and name in used]
    exports = "".join(f"\nvar {_EXPORT}{name} = {name}\n" for name, _, _ in functions)
    try:
        answer = _answer_package(side.code, imports, body + exports)
    except Refused as exc:
        return str(exc)
    tests, count = _wrapped(side.tests)
    if not count:
        return None
    package = re.search(r"^package\s+(\w+)", head + side.prompt, re.M)
    bindings = "".join(f"var {name} {typ} = sandlot_answer.{_EXPORT}{name}\n"
                       for name, _, typ in functions)  # fmt: skip
    harness_imports = [*splices.go_imports(head + side.prompt), *_HARNESS_IMPORTS,
                       'sandlot_answer "./sandlot_answer"']  # fmt: skip
    harness = splices.go_file(package.group(1) if package else "main", harness_imports,
                              bindings + _TEST_MAIN.replace("@TESTS@", str(count))
                              + "\n" + tests)  # fmt: skip
    return _built(answer, {HARNESS: harness}, count)


def exercise(code: str, tests: dict[str, str]) -> Built | str | None:
    """An Exercism exercise (aider polyglot): the solution as the answer's package, its test
    files (same package name as the solution's, as Exercism writes them) importing it with a
    dot, so that they call its exported API unqualified as before."""
    try:
        answer = _answer_package(code, splices.go_imports(code), splices.go_without_head(code))
    except Refused as exc:
        return str(exc)
    exported = _exported(answer)
    files, count, package = {}, 0, "main"
    for path, text in tests.items():
        if not path.endswith(".go"):
            continue
        if re.search(r"^func\s+TestMain\b", braces.blank(text), re.M):
            return None  # a TestMain of the tests' own: the harness cannot have one too
        named = re.search(r"^package\s+(\w+)", text, re.M)
        package = named.group(1) if named else package
        text, n = _wrapped(text, count)
        count += n
        if exported & set(re.findall(r"[A-Za-z_]\w*", braces.blank(text))):
            text = re.sub(r"^(package\s+\w+[^\n]*\n)", '\\1\nimport . "./sandlot_answer"\n',
                          text, count=1, flags=re.M)  # fmt: skip
        files[path.rsplit("/", 1)[-1]] = text
    if not count:
        return None
    main = splices.go_file(package, list(_HARNESS_IMPORTS),
                           _TEST_MAIN.replace("@TESTS@", str(count)))  # fmt: skip
    return _built(answer, {"0sandlot_main_test.go": main, **files}, count)


class Refused(Exception):
    """An answer refused before it is built, with the reason."""


_HARNESS_IMPORTS = ('"os"', '"testing"', 'sandlot_seal "./sandlot_seal"')


def _answer_package(code: str, imports: list[str], body: str) -> str:
    """The answer's package (`sandlot_answer`, importing the seal's first); Refused for an
    answer that reaches past the standard library."""
    if re.search(r"(?m)^\s*//go:linkname\b", code):
        raise Refused("the answer uses //go:linkname, which reaches into other packages")
    for spec in imports:
        if not _stdlib(spec) and splices.go_import_used(spec, braces.blank(body)):
            path = spec.split()[-1]
            raise Refused(
                f"the answer imports {path}: an answer may import the standard library only"
            )
    return splices.go_file(
        "sandlot_answer", [s for s in imports if _stdlib(s)] + ['_ "../sandlot_seal"'], body
    )


def _exported(package: str) -> set[str]:
    """The exported names a package declares at its top level."""
    blanked = braces.blank(package)
    names = set()
    depth = 0
    for line in blanked.split("\n"):
        if depth == 0:
            m = re.match(r"(?:func|type|var|const)\s+([A-Z]\w*)", line)
            if m:
                names.add(m.group(1))
        elif depth == 1 and re.match(r"\s+[A-Z]\w*\s*(=|\s[\w\[*(])", line):
            names.add(line.split()[0])  # in a `var (...)` or `const (...)` block
        depth += line.count("{") + line.count("(") - line.count("}") - line.count(")")
    return names


def _built(answer: str, harness: dict[str, str], count: int) -> Built:
    files = {**harness, SEAL: _SEAL_PACKAGE.replace("@SEAL@", SEAL_FILE)}
    return Built(answer, {k: v.encode() for k, v in files.items()}, count,
                 view({ANSWER: answer, **files}))  # fmt: skip


def _names(code: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", braces.blank(code)))


def _plain_type(typ: str) -> bool:
    return not re.search(r"[\"`=#;]|\bsandlot", typ)


def _stdlib(spec: str) -> bool:
    path = spec.split()[-1].strip('"')
    return not (path == "unsafe" or path.startswith((".", "_")) or "." in path.split("/")[0])


def _functions(declarations: str) -> list[tuple[str, bool, str]]:
    """(name, generic, func type) of each top-level function the dataset declares."""
    blanked = braces.blank(declarations)
    out = []
    for m in _FUNC.finditer(blanked):
        if blanked[: m.start()].count("{") != blanked[: m.start()].count("}"):
            continue  # not at the top level
        opening = m.end() - 1
        close = matching(blanked, opening)
        body = _body(blanked, close) if close is not None else None
        if close is None or body is None:
            continue
        params = _param_types(declarations[opening + 1 : close])
        result = declarations[close + 1 : body].strip()
        typ = f"func({', '.join(params)})" + (f" {result}" if result else "")
        out.append((m.group(1), m.group(2) is not None, typ))
    return out


def _body(blanked: str, after: int) -> int | None:
    """The `{` opening a function's body after its parameters (`interface{}`, `struct{...}`
    in its result type skipped)."""
    at = after
    while (brace := blanked.find("{", at)) >= 0:
        if not re.search(r"\b(interface|struct)\s*$", blanked[at:brace]):
            return brace
        end = braces.closing(blanked, brace)
        if end is None:
            return None
        at = end + 1
    return None


def _param_types(params: str) -> list[str]:
    """Go parameters' types: `a, b int, s string` -> int, int, string."""
    parts = [p.strip() for p in top_level_commas(params) if p.strip()]
    named = any(re.match(r"^[A-Za-z_]\w*\s+\S", p) for p in parts)
    if not named:
        return parts
    types: list[str] = []
    pending = 0
    for part in parts:
        m = re.match(r"^[A-Za-z_]\w*\s+(.+)$", part)
        if m is None:  # a name whose type is the next parameter's
            pending += 1
            continue
        types += [m.group(1).strip()] * (pending + 1)
        pending = 0
    return types


def _wrapped(tests: str, first: int = 0) -> tuple[str, int]:
    """Each `TestX(t *testing.T)` as the harness's test that calls it and, when it ran to its end
    without failing, marks it passed (numbered from `first`), each of its subtests started
    through the harness's `sandlotRun` (which fails it if it did not run); and how many there
    are."""
    out, at, n = [], 0, first
    blanked = braces.blank(tests)
    for m in _TEST.finditer(blanked):
        name, t = m.group(1), m.group(2)
        out += [tests[at : m.start()],
                f"func {name}({t} *testing.T) {{\n\tsandlot{name}({t})\n"
                f"\tsandlotPassed[{n}] = !{t}.Failed()\n}}\n\n"
                f"func sandlot{name}({t} *testing.T) {{"]  # fmt: skip
        at = m.end()
        n += 1
    text = "".join(out) + tests[at:]
    # t.Run(name, f) -> sandlotRun(t, name, f), for the tests' *testing.T parameters' names
    receivers = {m.group(2) for m in _TEST.finditer(blanked)}
    for t in receivers:
        text = re.sub(rf"(?<![\w.]){t}\.Run\(", f"sandlotRun({t}, ", text)
    return text, n - first
