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

The seal's payload is empty for a program, and "1" or "0" (passed) then the actual value's repr
for a case. `__sandlot_strict` and `__sandlot_case` go into main.py only for the runs that need
them: a judge's program pays for compiling the core alone.
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
        for step in reversed(frames):
            tb = kept["type"](step)(tb, step.tb_frame, step.tb_lasti, step.tb_lineno)
        hook(kept["type"](exc), exc.with_traceback(tb), tb)
        raise kept["SystemExit"](1)

    try:
        first = compile(answer, here, "exec")
        then = compile("\n" * answer.count("\n") + tests, here, "exec")
    except SyntaxError as exc:
        failed(exc, None)
    # (each goes into main.py only for the runs that need it)
    tests_scope, plain = __sandlot_strict(kept, sys, params.get("entry")) if strict else (0, None)
    judge = __sandlot_case(kept, case, plain) if case is not None else None

    main = kept["type"](sys)("__main__")
    main.__file__ = here
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        kept["exec"](first, main.__dict__)
        scope = tests_scope(main.__dict__) if strict else main.__dict__
        kept["exec"](then, scope)
        payload = judge(scope) if case is not None else b""
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
    members = kept["type"].__dict__["__dict__"].__get__  # a class's own dict, as it really is
    function, wrappers = type(__sandlot_strict), (classmethod, staticmethod)
    c_level = {
        type(int.__add__),
        type(str.join),
        type(dict.__dict__["fromkeys"]),
        type(type.__dict__["__name__"]),
        type(type.__dict__["__basicsize__"]),
        type(len),
    }
    plain_members = c_level | {int, float, complex, str, bytes, bool, type(None), tuple, frozenset}
    trusted = {}

    def honest(kind):
        """Whether no class in `kind`'s method order holds code of the program's making: its
        objects compare as the library that made them says."""
        if kind in trusted:
            return trusted[kind]
        trusted[kind] = True  # a type whose members are of its own kind (datetime.date.min)
        for cls in kind.__mro__:
            for value in members(cls).values():
                if kind_of(value) not in plain_members and not honest_member(value):
                    trusted[kind] = False
                    return False
        return True

    def honest_member(value):
        kind = kind_of(value)
        if kind in wrappers:
            value, kind = value.__func__, kind_of(value.__func__)
        if kind is property:
            return all(v is None or honest_member(v) for v in (value.fget, value.fset, value.fdel))
        if kind is function:
            return value.__code__.co_filename.startswith(roots)
        return kind_of(kind) is type and not kept["callable"](value) and honest(kind)

    kind_of = kept["type"]
    scalars = (int, float, complex, str, bytes, bool, type(None), range)
    containers = ((list, list.__iter__), (tuple, tuple.__iter__), (set, set.__iter__),
                  (frozenset, frozenset.__iter__))  # fmt: skip
    # A subclass of a built-in as its base's value, taken by the base's own method.
    bases = ((int, int.__int__), (float, float.__float__), (str, str.__str__),
             (bytes, bytes.__bytes__), (complex, complex.__complex__))  # fmt: skip
    items, subclass, error = dict.items, kept["issubclass"], kept["TypeError"]

    def plain(value, depth=0):
        """`value` as built-in data of exact types: comparing it runs no code of the program's."""
        kind = kept["type"](value)
        if kind in scalars:
            return value
        if depth > 500:
            raise error("strict comparison: data nested more than 500 deep")
        for base, each in containers:
            if subclass(kind, base):
                return base([plain(v, depth + 1) for v in each(value)])
        if subclass(kind, dict_):
            return {plain(k, depth + 1): plain(v, depth + 1) for k, v in items(value)}
        for base, convert in bases:
            if subclass(kind, base):
                return convert(value)
        if honest(kind):
            return value  # a re.Match, a Decimal, a numpy array: compared as its library says
        raise error(f"strict comparison: a {kind.__name__} is not plain data")

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
            if kept["callable"](value) and not kept["isinstance"](value, type_):
                value = plainly(value)
            out[name] = value
        out["__builtins__"] = kept
        out["__sandlot_plain__"] = plain
        sys.modules["__main__"] = module
        return out

    return tests_scope, plain


def __sandlot_case(kept, case, plain):
    """A /run_code test case, judged in the program's globals after it ran (set up before)."""
    inf = float("inf")

    def close(x, y):  # math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), math being unloaded
        if x == y:
            return True
        size, big = kept["abs"], kept["max"]
        if x != x or y != y or size(x) == inf or size(y) == inf:
            return False
        return size(x - y) <= big(1e-9 * big(size(x), size(y)), 1e-12)

    def number(value):
        return kept["isinstance"](value, (int, float)) and not kept["isinstance"](value, bool)

    def judge(scope):
        expression, text = case
        actual = kept["eval"](expression, scope)
        try:
            expected, evaluated = kept["eval"](text, scope), True
        except kept["Exception"]:
            expected, evaluated = None, False
        if plain is not None:
            actual = plain(actual)
            expected = plain(expected) if evaluated else None
        if not evaluated:
            passed = kept["str"](actual) == text or kept["repr"](actual) == text
        elif number(actual) and number(expected):
            passed = close(actual, expected)
        else:
            passed = actual == expected
        mark = b"1" if kept["bool"](passed) else b"0"
        return mark + kept["repr"](actual).encode("utf-8", "backslashreplace")

    return judge
