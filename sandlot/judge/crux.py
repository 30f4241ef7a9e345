"""CRUXEval answers read as data, never pasted into the tests as code.

An answer is a value (output mode: what `f(input)` returns) or the arguments of a call (input
mode: what to pass `f` to get the output). Pasted as text into `assert f(x) == ????`, an answer
such as `f(x)`, `1 or True` or `1); exit(0); (` rewrites the test. So:

- Python: the answer is parsed, and only a tree of data survives (literals, containers, a few
  built-in constructors, methods of a literal string; in input mode also the problem's own
  globals and lambdas over their parameters); the test is written anew from that tree.
- CRUXEval-X's other languages: the answer is scanned as tokens and must be a literal of the
  language: its strings, numbers, brackets that balance, the punctuation of literals, and the
  names its literals use (`new ArrayList<Long>(Arrays.asList(...))`, `vec![...]`, `list(...)`);
  no statement ends, comments, operators that test or assign, or any other name.

Either way an answer that is not data is refused with the reason; nothing of it runs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_ANSWER = 20_000  # characters: a literal longer than this is no answer a model gives
MAX_DEPTH = 100


class NotData(ValueError):
    """The answer is not data: the message says what in it is not."""


# -- Python ----------------------------------------------------------------------------------

_CONSTRUCTORS = frozenset(
    ("dict", "list", "tuple", "set", "frozenset", "range", "str", "int", "float", "bool",
     "bytes", "complex")
)  # fmt: skip
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult)


def _parse(text: str) -> ast.expr:
    if len(text) > MAX_ANSWER:
        raise NotData(f"the answer is longer than {MAX_ANSWER} characters")
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotData(f"the answer is not a Python expression ({type(exc).__name__})") from None


class _Data:
    """Checks that a tree is data: `names` are the globals it may use (input mode)."""

    def __init__(self, names: frozenset[str], lambdas: bool) -> None:
        self.names, self.lambdas = names, lambdas

    def check(self, node: ast.AST, bound: frozenset[str] = frozenset(), depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise NotData(f"the answer nests more than {MAX_DEPTH} deep")
        deeper = depth + 1
        match node:
            case ast.Constant():
                return
            case ast.List(elts=items) | ast.Tuple(elts=items) | ast.Set(elts=items):
                for item in items:
                    self.check(item, bound, deeper)
            case ast.Starred(value=value):
                self.check(value, bound, deeper)
            case ast.Dict(keys=keys, values=values):
                for key in keys:
                    if key is not None:
                        self.check(key, bound, deeper)
                for value in values:
                    self.check(value, bound, deeper)
            case ast.UnaryOp(op=ast.USub() | ast.UAdd() | ast.Not(), operand=operand):
                self.check(operand, bound, deeper)
            case ast.BinOp(op=op, left=left, right=right) if isinstance(op, _ARITHMETIC):
                self.check(left, bound, deeper)
                self.check(right, bound, deeper)
            case ast.Call(func=ast.Name(id=name), args=args, keywords=keywords) if (
                name in _CONSTRUCTORS and name not in bound
            ):
                for arg in (*args, *(k.value for k in keywords)):
                    self.check(arg, bound, deeper)
            case ast.Call(func=ast.Attribute(value=owner, attr=attr), args=args, keywords=kw) if (
                not attr.startswith("_") and self._method_owner(owner, bound)
            ):
                # a method of a literal ('-'.join(...)) or, in a lambda, of its parameter
                self.check(owner, bound, deeper)
                for arg in (*args, *(k.value for k in kw)):
                    self.check(arg, bound, deeper)
            case ast.Subscript(value=value, slice=index):
                self.check(value, bound, deeper)
                self.check(index, bound, deeper)
            case ast.Slice(lower=lower, upper=upper, step=step):
                for part in (lower, upper, step):
                    if part is not None:
                        self.check(part, bound, deeper)
            case ast.Name(id=name) if name in bound or name in self.names:
                return
            case ast.Lambda(args=params, body=body) if self.lambdas and _plain_params(params):
                names = frozenset(a.arg for a in (*params.posonlyargs, *params.args))
                self.check(body, bound | names, deeper)
            case ast.Compare(left=left, comparators=rest) if bound:
                for part in (left, *rest):
                    self.check(part, bound, deeper)
            case ast.BoolOp(values=values) if bound:
                for value in values:
                    self.check(value, bound, deeper)
            case ast.Name(id=name):
                raise NotData(f"the answer names {name!r}, which is not data here")
            case _:
                raise NotData(f"the answer holds a {type(node).__name__}, which is not data")

    def _method_owner(self, owner: ast.AST, bound: frozenset[str]) -> bool:
        literal = isinstance(owner, ast.Constant) and isinstance(owner.value, str | bytes)
        return literal or (isinstance(owner, ast.Name) and owner.id in bound)


def _plain_params(params: ast.arguments) -> bool:
    return not (params.vararg or params.kwarg or params.kwonlyargs or params.defaults)


def _code_globals(code: str, functions: tuple[str, ...]) -> frozenset[str]:
    """The problem's own top-level names, but the function under test."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        elif isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            names.add(stmt.name)
    return frozenset(names - set(functions))


def _is_call_of(node: ast.AST, functions: tuple[str, ...]) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions
    )


def python_output(answer: str, functions: tuple[str, ...] = ("f",)) -> str:
    """The value of an output-mode answer, written anew (`f(x) == V` gives V)."""
    node = _parse(answer)
    equals = isinstance(node, ast.Compare) and [type(o) for o in node.ops] == [ast.Eq]
    if equals and _is_call_of(node.left, functions):  # type: ignore[attr-defined]
        node = node.comparators[0]  # type: ignore[attr-defined]
    _Data(frozenset(), lambdas=False).check(node)
    return ast.unparse(node)


def python_input(answer: str, code: str, functions: tuple[str, ...] = ("f",)) -> str:
    """The arguments of an input-mode answer, written anew: from `f(args)`, `args`, or
    `f(args) == V`; `code` is the problem's (its globals may be arguments)."""
    node = _parse(answer) if answer.strip() else _parse(f"{functions[0]}()")
    if isinstance(node, ast.Compare) and _is_call_of(node.left, functions):
        node = node.left
    if not _is_call_of(node, functions):
        node = _parse(f"{functions[0]}({answer.strip()})")
        if not _is_call_of(node, functions):
            raise NotData(f"the answer is not the arguments of a call of {functions[0]}")
    assert isinstance(node, ast.Call)
    data = _Data(_code_globals(code, functions), lambdas=True)
    for arg in (*node.args, *(k.value for k in node.keywords)):
        data.check(arg)
    parts = [ast.unparse(a) for a in node.args]
    parts += [f"{k.arg}={ast.unparse(k.value)}" if k.arg else f"**{ast.unparse(k.value)}"
              for k in node.keywords]  # fmt: skip
    return ", ".join(parts)


# -- the other languages of CRUXEval-X ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literals:
    """What a literal of one language may hold besides numbers, strings, brackets and `,.-+*/`:
    names, more punctuation (`<` `>` of generics, `=>` of a hash), its quotes and comments, and
    tokens that start with a character allowed nowhere else (`#t` in Racket, `vec!` in Rust)."""

    names: frozenset[str]
    tokens: tuple[str, ...] = ()
    quotes: str = "\"'"
    comments: tuple[str, ...] = ("//", "/*")
    prefixes: tuple[str, ...] = ()
    # A newline ends the answer even inside brackets (a shell's command ends with its line).
    one_line: bool = False
    # A string is data only where the language reads it as such: what in a string quoted with
    # one of `interpolating` makes the language run code or re-read it as source (`"$(...)"`,
    # `"#{...}"`, Java's `\u0022`, translated before javac reads a string at all) is refused.
    interpolating: str = ""
    in_strings: tuple[str, ...] = ()
    # Quotes in which a backslash escapes nothing (a shell's '...'): the string ends at the next.
    raw: str = ""
    # Outside strings, the punctuation and brackets a literal may hold (a shell's `*`, `[...]`
    # and `(` are patterns and groups, not data).
    punctuation: tuple[str, ...] = (",", ".", "-", "+", "*", "/")
    brackets: bool = True


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_BOOLS = "true false null"
LITERALS: dict[str, Literals] = {
    "cpp": Literals(_names("std vector string tuple make_tuple pair make_pair map set "
                           "unordered_map optional nullopt long int float double bool char "
                           "unsigned size_t true false"), tokens=("::", "<", ">")),
    "java": Literals(_names(f"new ArrayList Arrays asList List of HashMap Map entry HashSet Set "
                            f"Pair with Triplet Optional empty Long long Integer int String "
                            f"Boolean boolean Double double Float float Character char {_BOOLS}"),
                     tokens=("<", ">"), interpolating="\"'", in_strings=("\\u",)),
    "csharp": Literals(_names(f"new List Dictionary HashSet Tuple Create long int string bool "
                              f"double float char {_BOOLS}"), tokens=("<", ">")),
    "scala": Literals(_names("List Map Set Seq Array Tuple2 Tuple3 Tuple4 Some None Option "
                             "toLong toInt toDouble toFloat Long Int String Double Float Boolean "
                             "Char true false"), tokens=("->",)),
    "rust": Literals(_names("vec Vec Some None String from to_string new HashMap HashSet "
                            "true false"), tokens=("::", "<", ">", "&"), prefixes=("vec!",)),
    "go_test": Literals(_names("int int64 float64 string bool rune byte map interface struct "
                               "true false nil"), tokens=(":",)),
    "D_ut": Literals(_names("tuple true false null"), tokens=(":",)),
    "julia": Literals(_names("true false nothing Dict Int64 Float64 String Tuple"),
                      tokens=("=>", ":"), comments=("#",), interpolating='"', in_strings=("$",)),
    "swift": Literals(_names("true false nil String Int Double"), tokens=(":",),
                      interpolating='"', in_strings=("\\(",)),
    "nodejs": Literals(_names("true false null undefined new Map Set"), tokens=(":",)),
    "typescript": Literals(_names("true false null undefined new Map Set"), tokens=(":",)),
    "php": Literals(_names("array true false null"), tokens=("=>",), comments=("//", "/*", "#"),
                    interpolating='"', in_strings=("$",)),
    "perl": Literals(frozenset(), tokens=("=>",), comments=("#",), interpolating='"',
                     in_strings=("$", "@")),
    "ruby": Literals(_names("true false nil"), tokens=("=>", ":"), comments=("#",),
                     interpolating='"', in_strings=("#{", "#$", "#@")),
    "lua": Literals(_names("true false nil"), tokens=("=",), comments=("--",)),
    "R": Literals(_names("c list TRUE FALSE NULL NA"), tokens=("=",), comments=("#",)),
    "racket": Literals(_names("list vector cons quote hash"), tokens=("'",), quotes='"',
                       comments=(";",), prefixes=("#t", "#f", "#\\", "#hash")),
    "bash": Literals(frozenset(), comments=("#",), one_line=True, interpolating='"',
                     in_strings=("$", "`"), raw="'", punctuation=(",", ".", "-", "+", "/"),
                     brackets=False),
}  # fmt: skip
# Never in a literal, whatever the language allows alone: these test, assign, step or end.
_NEVER = ("==", "!=", "&&", "||", "++", "--", "<-", "<=", ">=")
_NUMBER = re.compile(r"[0-9][0-9a-zA-Z_.]*")
_NAME = re.compile(r"[A-Za-z_]\w*")
_OPEN, _CLOSE = "([{", ")]}"


def literal(answer: str, language: str, extra_names: frozenset[str] = frozenset()) -> str:
    """`answer` if it is a literal of `language` (what CRUXEval-X puts in its blank), else
    NotData. `extra_names` are the call's own (input mode: the function's name)."""
    rules = LITERALS.get(language)
    if rules is None:
        raise NotData(f"answers in {language} cannot be read as data here")
    text = answer.strip()
    if not text:
        raise NotData("the answer is empty")
    if len(text) > MAX_ANSWER:
        raise NotData(f"the answer is longer than {MAX_ANSWER} characters")
    names = rules.names | extra_names
    tokens = sorted((*rules.punctuation, *rules.tokens), key=len, reverse=True)
    stack: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        prefix = next((p for p in rules.prefixes if text.startswith(p, i)), None)
        if prefix is not None:
            i += len(prefix) + (1 if prefix.endswith("\\") else 0)  # Racket's char `#\a`
            continue
        bad = next((t for t in (*rules.comments, *_NEVER) if text.startswith(t, i)), None)
        if bad is not None:
            raise NotData(f"the answer holds {bad!r}, which no literal needs")
        if c in rules.quotes:
            end = _string_end(text, i, c in rules.raw)
            if c in rules.interpolating:
                held = next((t for t in rules.in_strings if t in text[i:end]), None)
                if held is not None:
                    raise NotData(
                        f"the answer's string holds {held!r}, which {language} reads as code"
                    )
            i = end
        elif c.isdigit():
            i = _NUMBER.match(text, i).end()  # type: ignore[union-attr]
        elif c.isalpha() or c == "_":
            name = _NAME.match(text, i).group()  # type: ignore[union-attr]
            if name not in names:
                raise NotData(f"the answer names {name!r}, which is not data here")
            i += len(name)
        elif c.isspace():
            if c == "\n" and (not stack or rules.one_line):
                raise NotData("the answer goes on past the end of its line")
            i += 1
        elif (c in _OPEN or c in _CLOSE) and rules.brackets:
            if c in _OPEN:
                stack.append(_CLOSE[_OPEN.index(c)])
            elif not stack or stack.pop() != c:
                raise NotData(f"the answer closes a {c!r} it did not open")
            i += 1
        else:
            token = next((t for t in tokens if text.startswith(t, i)), None)
            if token is None:
                raise NotData(f"the answer holds {c!r}, which no literal of {language} needs")
            i += len(token)
    if stack:
        raise NotData("the answer leaves a bracket open")
    return text


def _string_end(text: str, start: int, raw: bool = False) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\" and not raw:
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    raise NotData("the answer leaves a string open")
