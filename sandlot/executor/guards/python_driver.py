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
                    (with none, no name of the answer's does)
    case            [input, expected]: a /run_code test case, judged after the program
    split           the split: the answer runs in a process of its own, forked before this
                    one reads the secret or the tests, and the tests call its functions through a
                    socket, plain data both ways (`__sandlot_split`)
    unittest        the names of the tests' TestCase classes: the driver runs them itself, with
                    the unittest it imported before the program ran (no `load_tests`, runner or
                    module of the program's is asked), and the payload is their counts

The seal's payload is empty for a program, "passed=N failed=N skipped=N" for unittest classes,
and "1" or "0" (passed) then the actual value's repr for a case. `__sandlot_strict`,
`__sandlot_case`, `__sandlot_unittest` and `__sandlot_split` go into main.py only for the runs
that need them: a judge's program pays for compiling the core alone.
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

    # The answer's process is forked before anything of the tests or the secret is read.
    link = __sandlot_split(kept, os, sys) if params.get("split") else None
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
        first = compile(answer, here, "exec") if link is None else None
        then = compile("\n" * answer.count("\n") + tests, here, "exec")
    except SyntaxError as exc:
        failed(exc, None)
    if link is not None:
        # main.py now holds the answer alone: its process may read it, and tell the names the
        # tests (and the case's expression) use, no more
        link.start(then, case[0] if case is not None else None, params.get("entry"))
        judge = __sandlot_case(kept, sys, case, None) if case is not None else None
        scope = link.scope(here, params.get("entry"))
        try:
            kept["exec"](then, scope)
            payload = judge(scope) if judge is not None else b""
        except kept["SystemExit"]:
            raise
        except kept["BaseException"] as exc:
            failed(exc, exc.__traceback__)
        write(1, seal + payload + seal + b"\n")
        return
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
            if shadow and name != entry:
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


def __sandlot_split(kept, os, sys):
    """The split. The answer runs in a process of its own (A), forked before this one (T) reads
    the secret or the tests; A waits until main.py holds the answer alone, runs it, and serves
    calls of its functions. T's tests see a proxy for each function and a copy of each value
    the answer defines that they name, and every call crosses a socket as plain data (JSON
    with tags for tuples, sets, bytes...): nothing of A's making runs in T, and A cannot reach
    T's memory (T is not dumpable; ptrace and process_vm_* are refused in every box). Returns
    T's end."""
    import json
    import socket

    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        mine.close()
        status = 0
        try:
            __sandlot_answer_process(os, sys, json, theirs)
        except SystemExit as exc:  # the answer's exit, with the status Python would give it
            status = exc.code if isinstance(exc.code, int) else (exc.code is not None)
            if exc.code is not None and not isinstance(exc.code, int):
                sys.stderr.write(f"{exc.code}\n")
        finally:
            import contextlib

            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(BaseException):
                    stream.flush()
            os._exit(status)
    theirs.close()

    def writable(path):
        """Whether the box may write `path`, or make it where it is missing."""
        while not os.path.exists(path):
            parent = os.path.dirname(path)
            if parent == path:
                return True
            path = parent
        return os.access(path, os.W_OK)

    # T imports nothing A could have written: every import from now on (the tests' own, the
    # numpy or fractions a value from A is rebuilt with) is from paths the box cannot write.
    # The work dir, sys.path[0], is A's.
    sys.path[:] = [p for p in sys.path if p and not writable(p)]
    sys.path_importer_cache.clear()
    import ctypes

    # PR_SET_DUMPABLE 0: /proc/T is not A's to read (libc through the handle ctypes already
    # holds: a dlopen of its own cost every run)
    ctypes.pythonapi.prctl(4, 0, 0, 0, 0)
    reader = mine.makefile("rb")
    dumps, loads, limit = json.dumps, json.loads, 64 << 20
    isinstance_, type_, list_, dict_ = kept["isinstance"], kept["type"], kept["list"], kept["dict"]
    inf = float("inf")
    error, exit_ = kept["TypeError"], kept["SystemExit"]
    roots = tuple({f"{sys.prefix}/lib/", f"{sys.base_prefix}/lib/"})

    def encode(value, depth=0):
        kind = type_(value)
        if depth > 500:
            raise error("strict comparison: data nested more than 500 deep")
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if -(1 << 53) < value < (1 << 53) else {"i": kept["str"](value)}
        if kind is float:
            return value if value == value and value not in (inf, -inf) else {"f": repr(value)}
        if kind is list:
            return [encode(v, depth + 1) for v in value]
        if kind is dict_:
            return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
        for tag, each in (("t", tuple), ("s", set), ("fs", frozenset)):
            if kind is each:
                return {tag: [encode(v, depth + 1) for v in value]}
        if kind is bytes:
            return {"b": value.decode("latin-1")}
        if kind is complex:
            return {"c": [encode(value.real), encode(value.imag)]}
        if kind is type_ and kept.get(value.__name__) is value:
            return {"ty": value.__name__}  # a built-in type (MBPP passes `int`)
        raise error(f"strict comparison: a {kind.__name__} cannot be passed to the answer")

    def decode(value, depth=0):
        if depth > 500:
            raise error("strict comparison: data nested more than 500 deep")
        if isinstance_(value, list_):
            return [decode(v, depth + 1) for v in value]
        if not isinstance_(value, dict_):
            return value
        ((tag, body),) = value.items()
        if tag == "d":
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in body}
        if tag in ("t", "s", "fs", "it"):
            items = [decode(v, depth + 1) for v in body]
            kinds = {"t": tuple, "s": set, "fs": frozenset, "it": kept["iter"]}
            return kinds[tag](items)
        if tag == "i":
            return kept["int"](body)
        if tag == "f":
            return kept["float"](body)
        if tag == "r":
            return kept["range"](*(kept["int"](n) for n in body))
        if tag == "ty" and isinstance_(kept.get(body), type_):
            return kept[body]
        if tag == "b":
            return body.encode("latin-1")
        if tag == "c":
            return kept["complex"](decode(body[0]), decode(body[1]))
        if tag == "frac":
            import fractions

            return fractions.Fraction(kept["int"](body[0]), kept["int"](body[1]))
        if tag == "dec":
            import decimal

            return decimal.Decimal(body)
        if tag == "m":
            return match_of(body)
        if tag == "nd":
            import numpy

            return numpy.array(decode(body[0], depth + 1), dtype=body[1])
        raise error(f"the answer's process sent {tag!r}, which is no data")

    class Match:
        """What a re.Match the answer returned says, rebuilt here: its string and spans (MBPP's
        tests ask a match for its truth, a group or a span)."""

        def __init__(self, text, span, groups):
            self.string, self.spans = text, [tuple(span), *(tuple(g) for g in groups)]

        def __bool__(self):
            return True

        def span(self, group=0):
            return self.spans[group]

        def start(self, group=0):
            return self.spans[group][0]

        def end(self, group=0):
            return self.spans[group][1]

        def group(self, *groups):
            found = [None if a < 0 else self.string[a:b]
                     for a, b in (self.spans[g] for g in (groups or (0,)))]  # fmt: skip
            return found[0] if len(found) == 1 else tuple(found)

        def groups(self):
            return tuple(self.group(g) for g in range(1, len(self.spans)))

        def __repr__(self):
            return f"<re.Match object; span={self.spans[0]}, match={self.group()!r}>"

    def match_of(body):
        text, span, groups = body
        if not isinstance_(text, str):
            raise error("the answer's process sent a match of no string")
        return Match(text, span, groups)

    def send(message):
        mine.sendall(dumps(message, separators=(",", ":")).encode() + b"\n")

    def receive(what):
        line = reader.readline(limit)
        if not line.endswith(b"\n"):
            # The answer's process ended: this one ends as it did (an exit with its status, a
            # signal), with no seal, as a program that ends before its tests do.
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            sys.stderr.write(f"the answer's process ended {what}\n")
            if code < 0:
                os.kill(os.getpid(), -code)
            raise exit_(code)
        try:
            return loads(line)
        except kept["BaseException"]:
            sys.stderr.write(f"the answer's process sent what is no data {what}\n")
            raise exit_(1) from None

    def proxy(name):
        def call(*args, **kwargs):
            send({"call": name, "args": encode(list_(args)),
                  "kwargs": {k: encode(v) for k, v in kwargs.items()}})  # fmt: skip
            answer = receive(f"in a call of {name}")
            if "raise" in answer:
                kind, text = answer["raise"]
                found = kept.get(kind)
                if not (isinstance_(found, type_) and issubclass(found, kept["Exception"])):
                    found, text = kept["Exception"], f"{kind}: {text}"
                raise found(text)
            result = decode(answer["ok"])
            changed = decode(answer["args"])  # what the call changed in place
            for old, new in zip(args, changed, strict=False):
                if type_(old) is list_ and type_(new) is list_:
                    old[:] = new
                elif type_(old) in (dict_, set) and type_(new) is type_(old):
                    old.clear()
                    old.update(new)
            return result

        call.__name__ = call.__qualname__ = name
        return call

    def names_in(code, out):
        """Every global name `code` and the code it holds may look up (and attribute names)."""
        out.update(code.co_names)
        for const in code.co_consts:
            if type_(const) is type_(code):
                names_in(const, out)
        return out

    class Link:
        def start(self, tests, expression, entry):
            wanted = names_in(tests, set())
            if expression is not None:
                try:
                    names_in(kept["compile"](expression, "<case>", "eval"), wanted)
                except kept["BaseException"]:
                    wanted = None  # judged (and reported) by the case's own eval
            if wanted is not None and entry is not None:
                wanted.add(entry)
            send({"go": True, "names": None if wanted is None else kept["sorted"](wanted)})

        def scope(self, here, entry):
            """The tests' globals: the built-ins as they were, a proxy for each function of the
            answer (where the tests are about one function, the answer's own `abs` is not the
            tests'), a copy of each value."""
            report = receive("before its tests ran")
            if "error" in report:
                sys.stderr.write(report["error"])
                raise exit_(1)
            out = {"__builtins__": kept, "__name__": "__main__", "__file__": here}
            for name, kind in report["names"].items():
                if name in kept and name != entry:
                    continue  # with no entry named, no name of the answer's is a built-in
                if kind == "call":
                    out[name] = proxy(name)
                elif kind == "data":
                    out[name] = decode(report["data"][name])
                elif kind.startswith("module:"):  # the tests use what the answer imported
                    found = library(kind.removeprefix("module:"))
                    if found is not None:
                        out[name] = found
            return out

    def library(name):
        """The module `name` of the runtime or an installed package, imported here (never a
        file of the work dir, which is the answer's), or None."""
        import importlib.util

        try:
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
            if origin in ("built-in", "frozen") or (
                origin is not None and origin.startswith(roots)
            ):
                return kept["__import__"](name, fromlist=["*"])
        except kept["Exception"]:
            pass
        return None

    return Link()


def __sandlot_answer_process(os, sys, json, link):
    """A: the answer's own process. It runs the answer (main.py, once T has put the answer alone
    there) and serves T's calls; whatever it sends T reads as data only."""
    import traceback

    # Non-blocking underneath (socket calls wait for it, up to a time no run has): an answer
    # that reads every descriptor it has gets nothing from this one, rather than waiting forever
    link.settimeout(1 << 24)
    reader = link.makefile("rb")
    try:
        go = json.loads(reader.readline())
        wanted = go["names"]
    except (ValueError, KeyError, TypeError):
        return  # the tests' process ended before it said go
    if not go.get("go"):
        return
    here = os.path.abspath(__file__)
    main = type(sys)("__main__")
    main.__file__ = here
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main

    def send(message):
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        link.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def encode(value, depth=0):
        kind = type(value)
        if depth > 500:
            raise TypeError("strict comparison: data nested more than 500 deep")
        if value is None or kind in (bool, str):
            return value
        if kind is int:
            return value if -(1 << 53) < value < (1 << 53) else {"i": str(value)}
        if kind is float:
            return value if value == value and abs(value) != float("inf") else {"f": repr(value)}
        if kind in (list, __import__("collections").deque):
            return [encode(v, depth + 1) for v in value]
        if isinstance(value, dict) and kind.__module__ in ("builtins", "collections"):
            return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
        for tag, each in (("t", tuple), ("s", set), ("fs", frozenset)):
            if kind is each:
                return {tag: [encode(v, depth + 1) for v in value]}
        if kind is bytes:
            return {"b": value.decode("latin-1")}
        if kind is complex:
            return {"c": [encode(value.real), encode(value.imag)]}
        name = f"{kind.__module__}.{kind.__qualname__}"
        if name == "fractions.Fraction":
            return {"frac": [str(value.numerator), str(value.denominator)]}
        if name == "decimal.Decimal":
            return {"dec": str(value)}
        if name == "re.Match":
            return {
                "m": [
                    value.string,
                    list(value.span()),
                    [list(value.span(g)) for g in range(1, value.re.groups + 1)],
                ]
            }
        if kind.__module__ == "numpy" and hasattr(value, "tolist"):
            if hasattr(value, "shape") and value.shape:
                return {"nd": [encode(value.tolist(), depth + 1), value.dtype.str]}
            return encode(value.item(), depth + 1)
        if name in ("builtins.generator", "builtins.map", "builtins.filter", "builtins.zip",
                    "builtins.list_iterator", "builtins.range_iterator", "builtins.enumerate",
                    "builtins.reversed"):  # fmt: skip
            return {"it": [encode(v, depth + 1) for v in value]}
        if kind is range:
            return {"r": [value.start, value.stop, value.step]}
        if kind is type and getattr(__builtins__, value.__name__, None) is value:
            return {"ty": value.__name__}
        raise TypeError(f"strict comparison: a {kind.__name__} is not plain data")

    def decode(value):
        if isinstance(value, list):
            return [decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        ((tag, body),) = value.items()
        if tag == "d":
            return {decode(k): decode(v) for k, v in body}
        kinds = {"t": tuple, "s": set, "fs": frozenset}
        if tag in kinds:
            return kinds[tag](decode(v) for v in body)
        if tag == "i":
            return int(body)
        if tag == "f":
            return float(body)
        if tag == "b":
            return body.encode("latin-1")
        if tag == "c":
            return complex(decode(body[0]), decode(body[1]))
        if tag == "ty":
            return getattr(__builtins__, body)
        if tag == "r":
            return range(*body)
        raise TypeError(f"cannot decode {tag!r}")

    try:
        with open(here, "rb") as f:
            code = compile(f.read(), here, "exec")
        exec(code, main.__dict__)
    except SystemExit:
        raise  # an exit before the tests: no report, the tests' process ends as this one
    except BaseException as exc:
        shown = traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next)
        send({"error": "".join(shown)})
        return
    names, data = {}, {}
    scope = main.__dict__
    # Only what the tests name: an answer's `from typing import *` is a hundred names they
    # never use, each a proxy to make
    found = list(scope.items()) if wanted is None else [(n, scope[n]) for n in wanted if n in scope]
    for name, value in found:
        if name.startswith("__"):
            continue
        if isinstance(value, type(sys)):
            names[name] = f"module:{value.__name__}"
            continue
        if callable(value):
            names[name] = "call"
            continue
        try:
            data[name] = encode(value)
            names[name] = "data"
        except TypeError:
            continue
    send({"names": names, "data": data})
    for line in reader:
        request = json.loads(line)
        function = main.__dict__.get(request["call"])
        args = decode(request["args"])
        kwargs = {k: decode(v) for k, v in request["kwargs"].items()}
        try:
            result = function(*args, **kwargs)
        except Exception as exc:  # the answer's own frames, as Python would show them
            traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
            send({"raise": [type(exc).__name__, str(exc)]})
            continue
        try:
            answer = {"ok": encode(result), "args": encode(args)}
        except (TypeError, ValueError, RecursionError) as exc:
            answer = {"raise": ["TypeError", str(exc)]}
        send(answer)
