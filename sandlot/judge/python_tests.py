"""What a Python test text holds, read outside the box: its unittest classes and how many tests
it has, as unittest or pytest would collect them. The seal of a run of these tests must attest
that many passed (Program.tests), so a suite the answer emptied, replaced or extended never
matches.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_TESTCASE_BASES = frozenset(("TestCase", "IsolatedAsyncioTestCase"))
_UNITTEST_MAIN = re.compile(r"^([ \t]*)unittest\.main\((.*)\)[ \t]*$", re.M)


@dataclass(frozen=True, slots=True)
class Collected:
    unittest_classes: tuple[str, ...]  # the TestCase subclasses, in the order they are defined
    tests: int | None  # how many tests a runner collects; None: not known from the text


def _base_names(node: ast.ClassDef) -> list[str]:
    out = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            out.append(base.id)
        elif isinstance(base, ast.Attribute):
            out.append(base.attr)
    return out


def _test_functions(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        f
        for f in body
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name.startswith("test")
    ]


def _parametrized(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    """How many tests pytest makes of `function`: the product of its parametrize lists' lengths
    (None: a list that is not a literal)."""
    count = 1
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call) or not ast.unparse(decorator.func).endswith(
            "parametrize"
        ):
            continue
        values = decorator.args[1] if len(decorator.args) > 1 else None
        values = next((k.value for k in decorator.keywords if k.arg == "argvalues"), values)
        if not isinstance(values, ast.List | ast.Tuple):
            return None
        count *= len(values.elts)
    return count


def collect(text: str, *, pytest: bool = False) -> Collected:
    """The tests of `text`; `pytest` also counts its `test*` functions and `Test*` classes."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Collected((), None)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def is_testcase(name: str, seen: frozenset[str] = frozenset()) -> bool:
        node = classes.get(name)
        if node is None or name in seen:
            return False
        bases = _base_names(node)
        return bool(_TESTCASE_BASES & set(bases)) or any(
            is_testcase(b, seen | {name}) for b in bases
        )

    def methods(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        node = classes.get(name)
        if node is None or name in seen:
            return set()
        own = {f.name for f in _test_functions(node.body)}
        for base in _base_names(node):
            own |= methods(base, seen | {name})
        return own

    unittest = tuple(n for n in classes if is_testcase(n))
    total: int | None = sum(len(methods(n)) for n in unittest)
    if pytest:
        for node in tree.body:
            functions = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions = _test_functions([node])
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                if node.name in unittest:
                    continue
                if any(isinstance(f, ast.FunctionDef) and f.name == "__init__" for f in node.body):
                    continue  # pytest collects no class with an __init__
                functions = _test_functions(node.body)
            for function in functions:
                made = _parametrized(function)
                total = None if made is None or total is None else total + made
    return Collected(unittest, total)


def without_unittest_main(text: str) -> tuple[str, str | None]:
    """`text` with its `unittest.main(...)` calls made `pass` (the driver runs the classes), and
    the module the first call names to load the tests from, if it names one."""
    module = None
    for m in _UNITTEST_MAIN.finditer(text):
        named = re.match(r"""\s*(?:module\s*=\s*)?["']([\w.]+)["']""", m.group(2))
        if named and module is None:
            module = named.group(1)
    return _UNITTEST_MAIN.sub(lambda m: f"{m.group(1)}pass", text), module
