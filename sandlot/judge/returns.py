"""What the tests of a split JVM or .NET program get back from the answer: values the harness
has vetted, built only of the platform's own classes, never of the answer's.

In a split program (split_java.py, split_managed.py) the tests call the answer from outside and
compare what it returns with the platform's equality: `equals`, `Equals`, `==`. A whole answer
may declare its function to return a type of its own whose equality always holds, or return,
where the prompt declared `List<Long>`, an instance of its own subclass of ArrayList; a library
container may also hold code of the answer's (a TreeSet's comparator) that its equality calls.
So every call of the answer's functions whose value the tests use goes through the harness's
`vet` (its text is each harness's, below), which throws, before the tests compare anything,
unless every object reachable in the value is of a class on a short list of the platform's:
boxed primitives, strings, big numbers, the standard lists, sets, maps, tuples, options and
arrays, each as the platform defines it (an exact class, never a subclass), whose equality
depends on nothing but the elements the vetting reached. The vetting calls no method of an
object before its class passed (getClass, GetType and the JVM's class of an object are the
runtime's, which no class can override), so none of the answer's code runs in it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from sandlot.judge import braces

_NAME = r"[A-Za-z_$][\w$]*"


def vet_calls(code: str, names: Collection[str], vet: str, *, statements: bool = False) -> str:
    """`code` with each call of a function named in `names` (a method call `r.f(x)`,
    `new S().f(x)` or `P::Q.f(x)` with its receiver, or a bare `f(x)`) passed to `vet`:
    `vet(r.f(x))`. A call that is a statement of its own (its value unused) is left as it is,
    unless `statements` (a language whose `vet` takes a Unit too)."""
    if not names:
        return code
    blanked = braces.blank(code)
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    spans = []
    for found in re.finditer(rf"(?<![\w$])(?:{alternatives})(?=\s*[(<\[])", blanked):
        if _declares(blanked, found.start()):
            continue
        end = _call_end(blanked, found.end())
        if end is None:
            continue
        start = _receiver_start(blanked, found.start())
        if not statements and _is_statement(blanked, start, end):
            continue
        spans.append((start, end))
    inserts = [(s, -(e - s), f"{vet}(") for s, e in spans] + [(e, -(e - s), ")") for s, e in spans]
    # at one position: an outer call's opening before an inner's; an inner's closing first
    inserts.sort(key=lambda x: (x[0], x[2] == f"{vet}(", x[1] if x[2] != ")" else -x[1]))
    out, last = [], 0
    for at, _, text in inserts:
        out += [code[last:at], text]
        last = at
    out.append(code[last:])
    return "".join(out)


_KEYWORDS = frozenset({"return", "else", "case", "yield", "throw", "assert", "await", "in", "do",
                       "then", "if", "while", "match"})  # fmt: skip


def _declares(blanked: str, at: int) -> bool:
    """Whether the name at `at` is declared there (`long f(`, `def f(`), not called."""
    before = blanked[:at]
    m = re.search(r"([\w$>\]]+)\s+$", before)
    if m is None:
        return False
    word = re.search(r"[\w$]+$", m.group(1))
    return word is None or word.group() not in _KEYWORDS or word.group() in ("def", "fun")


def _call_end(blanked: str, at: int) -> int | None:
    """The end of a call whose name ends at `at`: its type arguments, then its argument lists."""
    i, seen = at, False
    while True:
        j = i
        while j < len(blanked) and blanked[j] in " \t\n":
            j += 1
        if j >= len(blanked) or blanked[j] not in "(<[" or (blanked[j] == "<" and seen):
            return i if seen else None
        if blanked[j] == "<":
            angle = blanked.find(">", j)
            if angle < 0 or re.search(r"[;(){}]", blanked[j:angle]):
                return None
            i = angle + 1
            continue
        close = braces.matching(blanked, j)
        if close is None:
            return None
        i, seen = close + 1, seen or blanked[j] == "("


def _receiver_start(blanked: str, at: int) -> int:
    """Where the receiver of the call named at `at` starts (`at` itself for a bare call)."""
    start = at
    while True:
        j = start - 1
        while j >= 0 and blanked[j] in " \t\n":
            j -= 1
        if j >= 1 and blanked[j - 1 : j + 1] == "::":
            j -= 2
        elif j >= 0 and blanked[j] == ".":
            j -= 1
        else:
            return start
        while j >= 0 and blanked[j] in " \t\n":
            j -= 1
        if j >= 0 and blanked[j] in ")]":
            opening = _opening(blanked, j)
            if opening is None:
                return start
            j = opening - 1
            while j >= 0 and blanked[j] in " \t\n":
                j -= 1
        k = j
        while k >= 0 and (blanked[k].isalnum() or blanked[k] in "_$"):
            k -= 1
        start = k + 1 if k < j else j + 1
        m = re.search(r"(?<![\w$])new\s+$", blanked[:start])
        if m:
            start = m.start()


def _opening(blanked: str, closing: int) -> int | None:
    pairs = {")": "(", "]": "["}
    depth = 0
    for i in range(closing, -1, -1):
        if blanked[i] in pairs:
            depth += 1
        elif blanked[i] in "([":
            depth -= 1
            if depth == 0:
                return i
    return None


def _is_statement(blanked: str, start: int, end: int) -> bool:
    before = blanked[:start].rstrip()
    after = blanked[end:].lstrip()
    return after.startswith(";") and (
        not before
        or before[-1] in ";{})"
        or re.search(r"(?<![\w$])(?:else|do)$", before) is not None
    )


# The refusal: the reason on stderr, then the process ends at once with status 1 (134 in C#, as a
# failed Debug.Assert; no handler or hook of the answer's can catch it, and the seal is never
# written).
JAVA_VET = """
    // The answer's values, vetted before the tests use them (sandlot/judge/returns.py).
    static boolean vet(boolean x) { return x; }
    static byte vet(byte x) { return x; }
    static char vet(char x) { return x; }
    static short vet(short x) { return x; }
    static int vet(int x) { return x; }
    static long vet(long x) { return x; }
    static float vet(float x) { return x; }
    static double vet(double x) { return x; }

    // Immutable (Map.copyOf), in a static final field: reflection cannot widen it.
    private static final java.util.Map<String, Character> KINDS = kinds();

    private static java.util.Map<String, Character> kinds() {
        java.util.Map<String, Character> kinds = new java.util.HashMap<>();
        for (String n : new String[] {"lang.String", "lang.Long", "lang.Integer", "lang.Short",
                "lang.Byte", "lang.Double", "lang.Float", "lang.Boolean", "lang.Character",
                "math.BigInteger", "math.BigDecimal", "util.OptionalInt", "util.OptionalLong",
                "util.OptionalDouble"}) kinds.put("java." + n, 'v');
        for (String n : new String[] {"ArrayList", "LinkedList", "HashSet", "LinkedHashSet",
                "ArrayDeque", "Vector", "Stack", "Arrays$ArrayList", "ArrayList$SubList",
                "ImmutableCollections$List12", "ImmutableCollections$ListN",
                "ImmutableCollections$Set12", "ImmutableCollections$SetN",
                "Collections$EmptyList", "Collections$EmptySet", "Collections$SingletonList",
                "Collections$SingletonSet"}) kinds.put("java.util." + n, 'c');
        for (String n : new String[] {"TreeSet", "PriorityQueue"}) kinds.put("java.util." + n, 's');
        for (String n : new String[] {"HashMap", "LinkedHashMap", "Hashtable",
                "ImmutableCollections$Map1", "ImmutableCollections$MapN", "Collections$EmptyMap",
                "Collections$SingletonMap"}) kinds.put("java.util." + n, 'm');
        kinds.put("java.util.TreeMap", 'o');
        for (String n : new String[] {"AbstractMap$SimpleEntry", "AbstractMap$SimpleImmutableEntry",
                "KeyValueHolder"}) kinds.put("java.util." + n, 'e');
        kinds.put("java.util.Optional", 'p');
        return java.util.Map.copyOf(kinds);
    }

    static <T> T vet(T value) {
        java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>();
        java.util.IdentityHashMap<Object, Object> seen = new java.util.IdentityHashMap<>();
        if (value != null) todo.push(value);
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            if (seen.put(o, o) != null) continue;
            Class<?> c = o.getClass();
            Character kind = c.getClassLoader() == null ? KINDS.get(c.getName()) : null;
            if (c.isArray() && c.getComponentType().isPrimitive()) continue;
            if (c.isArray() && c.getClassLoader() == null) {
                for (Object e : (Object[]) o) if (e != null) todo.push(e);
            } else if (kind == null && c.getName().startsWith("org.javatuples.") && fromJar(c)) {
                for (Object e : (Iterable<?>) o) if (e != null) todo.push(e);
            } else if (kind == null) {
                refuse(c);
            } else if (kind == 'c' || kind == 's') {
                if (kind == 's' && (o instanceof java.util.TreeSet
                        ? ((java.util.TreeSet<?>) o).comparator()
                        : ((java.util.PriorityQueue<?>) o).comparator()) != null) refuse(c);
                for (Object e : (Iterable<?>) o) if (e != null) todo.push(e);
            } else if (kind == 'm' || kind == 'o') {
                if (kind == 'o' && ((java.util.TreeMap<?, ?>) o).comparator() != null) refuse(c);
                ((java.util.Map<?, ?>) o).forEach((k, v) -> {
                    if (k != null) todo.push(k);
                    if (v != null) todo.push(v);
                });
            } else if (kind == 'e') {
                java.util.Map.Entry<?, ?> e = (java.util.Map.Entry<?, ?>) o;
                if (e.getKey() != null) todo.push(e.getKey());
                if (e.getValue() != null) todo.push(e.getValue());
            } else if (kind == 'p') {
                ((java.util.Optional<?>) o).ifPresent(todo::push);
            }
        }
        return value;
    }

    private static boolean fromJar(Class<?> c) {
        java.security.CodeSource source = c.getProtectionDomain().getCodeSource();
        return source != null && source.getLocation().getPath().endsWith(".jar");
    }

    private static void refuse(Class<?> c) {
        System.out.flush();
        System.err.println("sandlot: the answer returned a value of class " + c.getName()
            + ", which the tests may not compare: values must be built of the platform's own "
            + "numbers, strings, lists, sets, maps, tuples and arrays");
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }
"""

CSHARP_VET = """
    // The answer's values, vetted before the tests use them (sandlot/judge/returns.py). A
    // number, bool or string returns at once; the lists below load their assemblies (System,
    // System.Numerics) only when a value needs them.
    public static T Vet<T>(T value) {
        object first = value;
        if (first != null && !(first is string) && !first.GetType().IsPrimitive) VetAll(first);
        return value;
    }

    static void VetAll(object first) {
        var todo = new System.Collections.Generic.List<object> { first };
        var seen = new System.Collections.Generic.HashSet<object>(SandlotSame.It);
        while (todo.Count > 0) {
            var o = todo[todo.Count - 1];
            todo.RemoveAt(todo.Count - 1);
            if (!seen.Add(o)) continue;
            var t = o.GetType();
            if (!Framework(t)) Refuse(t);
            if (t.IsPrimitive || t == typeof(string) || t == typeof(decimal)) continue;
            if (OtherLeaf(t)) continue;
            if (t.IsArray && t.GetElementType().IsPrimitive) continue;
            var definition = t.IsGenericType ? t.GetGenericTypeDefinition() : null;
            if (t.IsArray ? !Library(t.GetElementType()) : !Kind(definition)) Refuse(t);
            foreach (var a in t.IsArray ? new[] { t.GetElementType() } : t.GetGenericArguments()) {
                if (!Library(a)) Refuse(t);
            }
            var comparer = t.GetProperty("Comparer");
            if (comparer != null) {
                var standard = (definition.Name.StartsWith("Sorted")
                    ? typeof(System.Collections.Generic.Comparer<>)
                    : typeof(System.Collections.Generic.EqualityComparer<>))
                    .MakeGenericType(t.GetGenericArguments()[0]).GetProperty("Default");
                var used = comparer.GetValue(o, null);
                if (!object.ReferenceEquals(used, standard.GetValue(null, null))) Refuse(t);
            }
            if (o is System.Collections.IEnumerable) {
                foreach (var e in (System.Collections.IEnumerable)o) if (e != null) todo.Add(e);
                continue;
            }
            var flags = System.Reflection.BindingFlags.Public
                | System.Reflection.BindingFlags.Instance;
            foreach (var f in t.GetFields(flags)) {
                var v = f.GetValue(o);
                if (v != null) todo.Add(v);
            }
            foreach (var p in t.GetProperties(flags)) {
                if (p.GetIndexParameters().Length > 0) continue;
                var v = p.GetValue(o, null);
                if (v != null) todo.Add(v);
            }
        }
    }

    // A type the platform defines, whose values the vetting can see into: of the lists below,
    // or an element type of it (a type parameter's argument, an array's element).
    static bool Library(System.Type t) {
        if (!Framework(t)) return false;
        if (t.IsPrimitive || t == typeof(string) || t == typeof(decimal) || t == typeof(object)
            || OtherLeaf(t)) return true;
        if (t.IsArray) return Library(t.GetElementType());
        if (!t.IsGenericType || !Kind(t.GetGenericTypeDefinition())) return false;
        foreach (var a in t.GetGenericArguments()) if (!Library(a)) return false;
        return true;
    }

    // A type of the framework's own assemblies (a fact of the type, which nothing changes): never
    // the answer's assembly, nor one it made at run time.
    static bool Framework(System.Type t) {
        return t.Assembly == typeof(object).Assembly
            || System.Array.IndexOf(SandlotOtherKinds.Assemblies, t.Assembly) >= 0;
    }

    static bool OtherLeaf(System.Type t) {
        return t.Assembly != typeof(object).Assembly
            && System.Array.IndexOf(SandlotOtherKinds.Leaves, t) >= 0;
    }

    static bool Kind(System.Type definition) {
        return definition != null && (System.Array.IndexOf(SandlotCoreKinds.All, definition) >= 0
            || System.Array.IndexOf(SandlotOtherKinds.All, definition) >= 0);
    }

    static void Refuse(System.Type t) {
        System.Console.Out.Flush();
        System.Console.Error.WriteLine("sandlot: the answer returned a value of type " + t
            + ", which the tests may not compare: values must be built of the platform's own "
            + "numbers, strings, lists, sets, dictionaries, tuples and arrays");
        System.Environment.Exit(134);
    }

    // The kinds of mscorlib, then those of other assemblies, each list made at its first use.
    static class SandlotCoreKinds {
        internal static readonly System.Type[] All = {
            typeof(System.Collections.Generic.List<>),
            typeof(System.Collections.Generic.Dictionary<,>),
            typeof(System.Collections.Generic.KeyValuePair<,>), typeof(System.Nullable<>),
            typeof(System.Tuple<>), typeof(System.Tuple<,>), typeof(System.Tuple<,,>),
            typeof(System.Tuple<,,,>), typeof(System.Tuple<,,,,>), typeof(System.Tuple<,,,,,>),
            typeof(System.Tuple<,,,,,,>), typeof(System.Tuple<,,,,,,,>),
            typeof(System.ValueTuple<>), typeof(System.ValueTuple<,>),
            typeof(System.ValueTuple<,,>), typeof(System.ValueTuple<,,,>),
            typeof(System.ValueTuple<,,,,>), typeof(System.ValueTuple<,,,,,>),
            typeof(System.ValueTuple<,,,,,,>), typeof(System.ValueTuple<,,,,,,,>),
        };
    }

    static class SandlotOtherKinds {
        internal static readonly System.Type[] All = {
            typeof(System.Collections.Generic.HashSet<>),
            typeof(System.Collections.Generic.SortedDictionary<,>),
            typeof(System.Collections.Generic.SortedSet<>),
            typeof(System.Collections.Generic.LinkedList<>),
            typeof(System.Collections.Generic.Queue<>), typeof(System.Collections.Generic.Stack<>),
        };
        internal static readonly System.Type[] Leaves = { typeof(System.Numerics.BigInteger) };
        internal static readonly System.Reflection.Assembly[] Assemblies = {
            typeof(System.Collections.Generic.HashSet<>).Assembly,
            typeof(System.Collections.Generic.LinkedList<>).Assembly,
            typeof(System.Numerics.BigInteger).Assembly, typeof(System.ValueTuple<,>).Assembly,
        };
    }

    sealed class SandlotSame : System.Collections.Generic.IEqualityComparer<object> {
        public static readonly SandlotSame It = new SandlotSame();
        public new bool Equals(object a, object b) { return object.ReferenceEquals(a, b); }
        public int GetHashCode(object o) {
            return System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(o);
        }
    }
"""

SCALA_VET = """
  // The answer's values, vetted before the tests use them (sandlot/judge/returns.py).
  private lazy val leaves = Set("java.lang.String", "java.lang.Long", "java.lang.Integer",
    "java.lang.Short", "java.lang.Byte", "java.lang.Double", "java.lang.Float",
    "java.lang.Boolean", "java.lang.Character", "java.math.BigInteger", "java.math.BigDecimal",
    "scala.runtime.BoxedUnit", "scala.math.BigInt", "scala.math.BigDecimal", "scala.None$",
    "scala.collection.immutable.Nil$", "scala.collection.immutable.Range",
    "scala.collection.immutable.Range$Inclusive")
  private lazy val products = ((1 to 22).map("scala.Tuple" + _) ++ Seq("scala.Some",
    "scala.collection.immutable.$colon$colon", "scala.util.Left", "scala.util.Right")).toSet
  private lazy val collections = Set("Vector", "List", "HashMap", "HashMap$HashMap1",
    "HashMap$HashTrieMap", "HashMap$HashMapCollision1", "HashMap$EmptyHashMap$", "Map$Map1",
    "Map$Map2", "Map$Map3", "Map$Map4", "Map$EmptyMap$", "ListMap", "ListMap$Node",
    "ListMap$EmptyListMap$", "HashSet", "HashSet$HashSet1", "HashSet$HashTrieSet",
    "HashSet$HashSetCollision1", "HashSet$EmptyHashSet$", "Set$Set1", "Set$Set2", "Set$Set3",
    "Set$Set4", "Set$EmptySet$", "ListSet", "ListSet$Node", "ListSet$EmptyListSet$", "Queue",
    "Stack").map("scala.collection.immutable." + _) ++ Set("ArrayBuffer", "ListBuffer",
    "HashMap", "HashSet", "LinkedHashMap", "LinkedHashSet", "ArraySeq", "Queue", "Stack",
    "ArrayStack", "WrappedArray$ofRef", "WrappedArray$ofLong", "WrappedArray$ofInt",
    "WrappedArray$ofDouble", "WrappedArray$ofFloat", "WrappedArray$ofChar",
    "WrappedArray$ofBoolean", "WrappedArray$ofShort", "WrappedArray$ofByte").map(
    "scala.collection.mutable." + _)

  def vet[T](value: T): T = {
    val todo = new java.util.ArrayDeque[AnyRef]()
    val seen = new java.util.IdentityHashMap[AnyRef, AnyRef]()
    val first = value.asInstanceOf[AnyRef]
    if (first ne null) todo.push(first)
    while (!todo.isEmpty) {
      val o = todo.pop()
      if (seen.put(o, o) eq null) {
        val c = o.getClass
        val name = c.getName
        def push(e: Any): Unit = { val r = e.asInstanceOf[AnyRef]; if (r ne null) todo.push(r) }
        if (c.isArray) {
          if (!c.getComponentType.isPrimitive) {
            if (!platform(c)) refuse(c)
            o.asInstanceOf[Array[AnyRef]].foreach(push)
          }
        } else if (!platform(c)) refuse(c)
        else if (leaves(name)) ()
        else if (products(name) || name.endsWith("$sp") && products(c.getSuperclass.getName))
          o.asInstanceOf[Product].productIterator.foreach(push)  // a TupleN, or one specialized
        else if (collections(name))
          o.asInstanceOf[scala.collection.GenTraversableOnce[Any]].foreach(push)
        else refuse(c)
      }
    }
    value
  }

  // A class of the JDK's, or of a jar on the class path (the Scala library's); never the
  // answer's (a directory of classes).
  private def platform(c: Class[_]): Boolean = (c.getClassLoader eq null) || {
    val source = c.getProtectionDomain.getCodeSource
    (source ne null) && source.getLocation.getPath.endsWith(".jar")
  }

  private def refuse(c: Class[_]): Unit = {
    System.out.flush()
    System.err.println("sandlot: the answer returned a value of class " + c.getName +
      ", which the tests may not compare: values must be built of the platform's own " +
      "numbers, strings, lists, sets, maps, tuples and arrays")
    System.err.flush()
    Runtime.getRuntime.halt(1)
  }
"""
