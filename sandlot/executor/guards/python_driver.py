"""sandlot's Python driver: it runs a program, and writes the run's seal (sandlot/executor/seal.py)
only when the program's tests ran to their end.

A sealed run's main.py is this file's text and one call of `__sandlot_driver`. It runs in the box,
never in the server: it uses only the interpreter's built-ins and modules loaded at start-up (a
work dir file named like a module cannot stand in for one), and keeps what it needs in its own
frame before the program runs. Before the first line of the program runs, the secret and the
program's text are out of the work dir, and main.py holds only the answer: the tests exist in
memory alone. `params`:

    seal, program   the files to read and remove: the run's secret, the program's text
    tests_at        where the program's tests begin; the answer before them is compiled on its own,
                    so no string or bracket it leaves open can swallow the tests
    strict          the tests see the built-ins as they were before the answer ran, and what the
                    answer's callables return as plain data (no __eq__ of the answer's making)
    entry           the function the tests are about (HumanEval's entry point): under `strict`
                    the only name of the answer's that may stand for a built-in in the tests
    case            [input, expected]: a /run_code test case, judged after the program
    unittest        the names of the tests' TestCase classes: the driver runs them itself, with
                    the unittest it imported before the program ran (no `load_tests`, runner or
                    module of the program's is asked), and the payload is their counts

The seal's payload is empty for a program, "passed=N failed=N skipped=N" for unittest classes,
and "1" or "0" (passed) then the actual value's repr for a case. `__sandlot_strict`,
`__sandlot_case` and `__sandlot_unittest` go into main.py only for the runs that need them: a
judge's program pays for compiling the core alone.
"""


def __sandlot_driver(params):
    import builtins
    import os
    import sys

    # What is used once the program has started is taken here first: the program may patch the
    # built-ins, os or sys, but not what this frame holds.
    kept = dict(builtins.__dict__)
    write, unlink, hook = os.write, os.unlink, sys.excepthook
    strict, case = params["strict"], params["case"]

    def take(name):
        with kept["open"](name, "rb") as f:
            data = f.read()
        unlink(name)
        return data

    seal = take(params["seal"])
    source = take(params["program"]).decode("utf-8", "surrogateescape")
    here = os.path.abspath(__file__)
    answer, tests = source[: params["tests_at"]], source[params["tests_at"] :]
    with open(here, "wb") as f:  # where the program's __file__ says it is: the answer alone
        f.write(answer.encode("utf-8", "surrogateescape"))

    own = globals()

    def failed(exc, tb):
        # As Python reports it, from the program's frames (not this driver's), with the program's
        # lines: its whole text is on disk again (the run has failed, whatever reads it now).
        with kept["open"](here, "wb") as f:
            f.write(source.encode("utf-8", "surrogateescape"))
        frames = []
        while tb is not None:
            if tb.tb_frame.f_globals is not own:
                frames.append(tb)
            tb = tb.tb_next
        for step in frames[::-1]:
            tb = kept["type"](step)(tb, step.tb_frame, step.tb_lasti, step.tb_lineno)
        hook(kept["type"](exc), kept["BaseException"].with_traceback(exc, tb), tb)
        raise kept["SystemExit"](1)

    try:
        first = compile(answer, here, "exec")
        then = compile("\n" * answer.count("\n") + tests, here, "exec")
    except SyntaxError as exc:
        failed(exc, None)
    # (each goes into main.py only for the runs that need it)
    tests_scope, plain = __sandlot_strict(kept, sys, params.get("entry")) if strict else (0, None)
    judge = __sandlot_case(kept, sys, case, plain) if case is not None else None
    suites = params.get("unittest")
    if suites is not None:
        judge = __sandlot_unittest(kept, sys, suites)

    main = kept["type"](sys)("__main__")
    main.__file__ = here
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        kept["exec"](first, main.__dict__)
        scope = tests_scope(main.__dict__) if strict else main.__dict__
        kept["exec"](then, scope)
        payload = judge(scope) if judge is not None else b""
    except kept["SystemExit"]:
        raise  # an exit, early or not, is the program's own: no seal
    except kept["BaseException"] as exc:
        failed(exc, exc.__traceback__)
    try:
        sys.stdout.flush()  # the program's own output before the seal
    except kept["Exception"]:
        pass
    write(1, seal + payload + seal + b"\n")


def __sandlot_strict(kept, sys, entry):
    """`strict`: what the tests get of the answer is plain data. Set up before the program runs;
    returns the tests' globals for the answer's, and `plain`."""
    dict_, type_ = dict, type

    # Code the program did not write: the runtime's standard library and installed packages.
    roots = tuple({f"{sys.prefix}/lib/", f"{sys.base_prefix}/lib/"})
    modules, compiled_in = sys.modules, frozenset(sys.builtin_module_names)
    module_of = kept["type"].__dict__["__module__"].__get__
    members = kept["type"].__dict__["__dict__"].__get__  # a class's own dict, as it really is
    function, wrappers = type(__sandlot_strict), (classmethod, staticmethod)
    bound = type(__sandlot_strict.__get__(0))  # a function bound to an object
    c_level = {
        type(int.__add__),
        type(str.join),
        type(dict.__dict__["fromkeys"]),
        type(type.__dict__["__name__"]),
        type(type.__dict__["__basicsize__"]),
        type(len),
    }
    data_members = {int, float, complex, str, bytes, bool, type(None), tuple, frozenset}
    # The special methods that decide what a comparison or a computation gives.
    ops = ["add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
           "lshift", "rshift", "and", "or", "xor"]  # fmt: skip
    unary = ["eq", "ne", "lt", "le", "gt", "ge", "hash", "bool", "len", "contains", "iter",
             "next", "getitem", "reversed", "int", "float", "complex", "index", "abs", "neg",
             "pos", "invert", "round", "trunc", "floor", "ceil", "getattr", "getattribute",
             "call"]  # fmt: skip
    computing = frozenset(
        [f"__{n}__" for n in unary] + [f"__{p}{n}__" for n in ops for p in ("", "r", "i")]
    )
    trusted = {}

    def honest(kind):
        """Whether `kind` is a library's: made by a module of the runtime or an installed
        package, and no class in its method order holds code of the program's making or a
        method borrowed under another name (`__eq__ = int.__ge__`): its objects compare as the
        library that made them says."""
        if kind in trusted:
            return trusted[kind]
        trusted[kind] = True  # a type whose members are of its own kind (datetime.date.min)
        mro = kind.__mro__
        ok = made_by_library(kind) and all(
            honest_member(mro, key, value) for cls in mro for key, value in members(cls).items()
        )
        trusted[kind] = ok
        return ok

    def made_by_library(kind):
        name = module_of(kind)
        if not kept["isinstance"](name, str):
            return False
        if name in compiled_in or name.startswith("_cython_"):
            return True  # part of the interpreter (builtins, _abc), or Cython's function type
        where = kept["getattr"](modules.get(name), "__file__", None)
        return kept["isinstance"](where, str) and where.startswith(roots)

    def honest_member(mro, key, value):
        kind = kind_of(value)
        if kind in data_members:
            return True
        if kind in wrappers or kind is bound:
            return honest_member(mro, key, value.__func__)
        if kind is property:
            return all(v is None or honest_member(mro, key, v)
                       for v in (value.fget, value.fset, value.fdel))  # fmt: skip
        if kind is function:
            return value.__code__.co_filename.startswith(roots)
        # What compares or computes (`__eq__`, `__add__`...) is the runtime's own, under its own
        # name and of a class it belongs to (`__eq__ = int.__ge__` is neither, `__eq__ = str`
        # answers any comparison with a true string); how an object prints may be borrowed.
        free = key not in computing
        if kind in c_level:
            if free:
                return True
            owner = kept["getattr"](value, "__objclass__", None)
            if owner is None:
                owner = kept["getattr"](value, "__self__", None)
            mine = owner is None or kept["any"](owner is c for c in mro)
            return mine and kept["getattr"](value, "__name__", key) == key
        if not free and kept["callable"](value):
            return False
        if kept["isinstance"](value, type_):
            return honest(value)  # a library's class it refers to (DataFrame's Series)
        return kept["isinstance"](kind, type_) and honest(kind)

    kind_of = kept["type"]
    scalars = (int, float, complex, str, bytes, bool, type(None), range)
    containers = ((list, list.__iter__), (tuple, tuple.__iter__), (set, set.__iter__),
                  (frozenset, frozenset.__iter__))  # fmt: skip
    # A subclass of a built-in as its base's value, taken by the base's own method.
    bases = ((int, int.__int__), (float, float.__float__), (str, str.__str__),
             (bytes, bytes.__bytes__), (complex, complex.__complex__))  # fmt: skip
    items, subclass, error = dict.items, kept["issubclass"], kept["TypeError"]
    exact = {base for base, _ in containers}

    def plain(value, depth=0):
        """`value` as built-in data of exact types: comparing it runs no code of the program's."""
        kind = kept["type"](value)
        if kind in scalars:
            return value
        if depth > 500:
            raise error("strict comparison: data nested more than 500 deep")
        if not honest(kind) and kind is not dict_ and kind not in exact:
            # an instance of the program's own class, or of a subclass of a built-in it made
            raise error(f"strict comparison: a {kind.__name__} is not plain data")
        for base, each in containers:
            if subclass(kind, base):
                return base([plain(v, depth + 1) for v in each(value)])
        if subclass(kind, dict_):
            return {plain(k, depth + 1): plain(v, depth + 1) for k, v in items(value)}
        for base, convert in bases:
            if subclass(kind, base):
                return convert(value)  # a library's subclass of a built-in (an IntFlag)
        return value  # a re.Match, a Decimal, a numpy array: compared as its library says

    def plainly(fn):
        def call(*args, **kwargs):
            return plain(fn(*args, **kwargs))

        for name in ("__name__", "__qualname__", "__doc__"):
            if kept["hasattr"](fn, name):
                kept["setattr"](call, name, kept["getattr"](fn, name, None))
        call.__wrapped__ = fn
        return call

    def tests_scope(scope):
        """The globals of the tests under `strict`: a module of their own, which is __main__
        while they run (unittest.main finds their TestCases there)."""
        module = kept["type"](sys)("__main__")
        out = module.__dict__
        for name, value in items(scope):
            dunder = name.startswith("__") and name.endswith("__")
            shadow = not dunder and name in kept and value is not kept[name]
            if shadow and entry is not None and name != entry:
                continue  # the answer's own `abs` or `round`: the tests get the built-in
            # The function under test gives plain data even when the answer made it a class
            # (whose __new__ returns what it likes); another class of the answer's the tests
            # may build and call (MBPP's), its methods' results as they are.
            wrap = name == entry or not kept["isinstance"](value, type_)
            if kept["callable"](value) and wrap:
                value = plainly(value)
            out[name] = value
        out["__builtins__"] = kept
        out["__sandlot_plain__"] = plain
        sys.modules["__main__"] = module
        return out

    return tests_scope, plain


def __sandlot_case(kept, sys, case, plain):
    """A /run_code test case, judged in the program's globals after it ran (set up before). The
    expected value is evaluated now, before the program runs, with the built-ins and the
    standard modules it names: no name of the program's can stand for it."""
    inf = float("inf")

    def constant(text):
        scope = {"__builtins__": kept}
        path, here = sys.path, sys.path[0]
        for _ in range(8):
            try:
                return kept["eval"](text, scope), True
            except kept["NameError"] as exc:
                name = exc.name
            except kept["BaseException"]:
                return None, False
            path.remove(here)  # a file of the work dir named like the module is not it
            try:
                scope[name] = kept["__import__"](name)
            except kept["BaseException"]:
                return None, False
            finally:
                path.insert(0, here)
        return None, False

    expected, evaluated = constant(case[1])

    def close(x, y):  # math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), math being unloaded
        if x == y:
            return True
        size, big = kept["abs"], kept["max"]
        if x != x or y != y or size(x) == inf or size(y) == inf:
            return False
        return size(x - y) <= big(1e-9 * big(size(x), size(y)), 1e-12)

    numbers, truth = (kept["int"], kept["float"]), kept["bool"]

    def number(value):
        return kept["isinstance"](value, numbers) and not kept["isinstance"](value, truth)

    def judge(scope):
        expression, text = case
        actual = kept["eval"](expression, scope)
        wanted = expected
        if plain is not None:
            actual = plain(actual)
            wanted = plain(expected) if evaluated else None
        if not evaluated:
            passed = kept["str"](actual) == text or kept["repr"](actual) == text
        elif number(actual) and number(wanted):
            passed = close(actual, wanted)
        else:
            passed = actual == wanted
        mark = b"1" if kept["bool"](passed) else b"0"
        return mark + kept["repr"](actual).encode("utf-8", "backslashreplace")

    return judge


def __sandlot_unittest(kept, sys, names):
    """The tests' TestCase classes `names`, run by the driver: their test methods (found in the
    classes' own dicts, as unittest's loader would), in suites of the unittest imported here,
    before the program ran. Returns what judges the tests' scope: the counts, or exit 1."""
    import unittest

    suite_type, result_type, case_type = unittest.TestSuite, unittest.TestResult, unittest.TestCase
    members = kept["type"].__dict__["__dict__"].__get__
    write = sys.stderr.write

    def methods(cls):
        found = {}
        for base in kept["reversed"](cls.__mro__):
            for name, value in members(base).items():
                if name.startswith("test") and kept["callable"](value):
                    found[name] = True
        return kept["sorted"](found)

    def run(scope):
        result = result_type()
        for name in names:
            cls = scope.get(name)
            if not (kept["isinstance"](cls, type) and kept["issubclass"](cls, case_type)):
                write(f"the tests' class {name} is not a unittest.TestCase here\n")
                raise kept["SystemExit"](1)
            suite_type([cls(method) for method in methods(cls)]).run(result)
        failed = [*result.failures, *result.errors]
        for test, text in failed:
            write(f"FAIL: {test}\n{text}\n")
        failed_count = kept["len"](failed) + kept["len"](result.unexpectedSuccesses)
        skipped = kept["len"](result.skipped) + kept["len"](result.expectedFailures)
        passed = result.testsRun - failed_count - skipped
        write(f"Ran {result.testsRun} tests: {passed} passed, {failed_count} failed, "
              f"{skipped} skipped\n")  # fmt: skip
        if failed_count:
            raise kept["SystemExit"](1)
        return f"passed={passed} failed={failed_count} skipped={skipped}".encode()

    return run
