"""Program assembly per dataset family: (row, completion, config) -> what to run.

Each family knows its rows' fields, how the completion is extracted and where it goes, and builds
either one program (accepted iff it exits 0: all tests of a task in one process) or a program
plus stdin/stdout cases. Nothing here runs code.
"""

from __future__ import annotations

import ast
import base64
import json
import re
from collections.abc import Callable
from typing import Any

from sandlot.errors import InvalidRequest
from sandlot.judge import (
    braces,
    crux,
    guards,
    harnesses,
    python_tests,
    reports,
    split_java,
    verilog_rules,
)
from sandlot.judge.checkers import Checker
from sandlot.judge.dialects import dialect
from sandlot.judge.extract import Extracted, cut_at, extract
from sandlot.judge.plans import Assembled, JudgeConfig, Program, StdioCase, StdioJob
from sandlot.judge.scripts import Joined
from sandlot.judge.split import split_assembled

Row = dict[str, Any]
Builder = Callable[[Row, str, JudgeConfig, dict[str, Any]], Assembled]

# Standard-library imports HumanEval-style programs may rely on without importing them
# (SandboxFusion prepends the same list, plus numpy, which costs ~100 ms per run; rows that need
# numpy import it themselves).
PY_IMPORTS = (
    "import math\nimport re\nimport sys\nimport copy\nimport datetime\nimport itertools\n"
    "import collections\nimport heapq\nimport statistics\nimport functools\nimport hashlib\n"
    "import string\nimport random\nfrom typing import *\nfrom collections import *\n"
)
PY_TAIL_MARKERS = ('\nif __name__ == "__main__"', "\nif __name__ == '__main__'",
                   "\nif __name__==", "\n# Example usage", "\n# Test", "\n```")  # fmt: skip


def ensure_json(value: Any) -> Any:
    """SandboxFusion stores some columns as JSON text; accept both forms."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def labels(row: Row) -> dict[str, Any]:
    value = ensure_json(row.get("labels"))
    return value if isinstance(value, dict) else {}


def decode_assets(asset: Any) -> dict[str, bytes]:
    asset = ensure_json(asset)
    if not isinstance(asset, dict):
        return {}
    return {name: base64.b64decode(b64) for name, b64 in asset.items() if isinstance(b64, str)}


def no_code(extracted: Extracted, why: str = "") -> Assembled:
    reason = why or f"no code found in the completion ({extracted.how})"
    return Assembled(extracted, None, reason)


def refuse(extracted: Extracted, why: str) -> Assembled:
    """The answer was found, read and refused before anything ran."""
    return Assembled(extracted, None, why, refused=True)


def python_program(answer: str, test_code: str, **kw: Any) -> Program:
    """The answer then its tests, as one sealed Python program: the driver compiles the answer
    on its own and runs the tests after it (sandlot/executor/guards/python_driver.py)."""
    if answer and not answer.endswith("\n"):
        answer += "\n"
    return Program("python", answer + test_code, test_code, seal=True, tests_at=len(answer), **kw)


def joined_program(language: str, joined: Joined, test_code: str, **kw: Any) -> Program:
    """The run a language's harness made of an answer and its tests (guards.join): sealed,
    with the answer's file beside it and the count of assertion sites the seal must attest."""
    files = {**kw.pop("files", {}), **joined.files}
    return Program(language, joined.code, test_code, files=files, seal=True, tests=joined.tests,
                   tests_at=joined.tests_at, **kw)  # fmt: skip


_UNINDENTED = re.compile(r"\n(?=\S)")


def _defines(code: str, name: str) -> bool:
    return re.search(rf"^\s*(async\s+)?def\s+{re.escape(name)}\s*\(", code, re.M) is not None


def python_solution(
    prompt: str, completion: str, entry_point: str | None, extra: dict
) -> tuple[Extracted, str]:
    """The solution code for a prompt-plus-completion Python task (HumanEval and kin).

    Fenced or bare code that defines the entry point is placed after the prompt (the prompt's
    imports and helpers stay; the new definition wins). A completion that continues the prompt
    (an indented body) is appended to it.
    """
    ex = extract(completion, "python", entry_point, extra.get("code_block_idx"))
    if ex.empty:
        return ex, ""
    code = cut_at(ex.code, PY_TAIL_MARKERS)
    if ex.continuation:
        # A raw completion of the body ends where a line starts unindented (the model went on
        # to write other code), as SandboxFusion's HumanEval stop token cuts it.
        code = _UNINDENTED.split(code, 1)[0] + "\n"
    if ex.continuation or not (entry_point and _defines(code, entry_point)):
        if (
            ex.kind == "heuristic"
            and not ex.continuation
            and entry_point
            and not code.startswith((" ", "\t"))
        ):
            # Bare top-level code that does not define the function: still run it after the
            # prompt, which then fails clearly if the function has no body.
            return ex, prompt + "\n" + code
        sep = "" if prompt.endswith("\n") or not code.startswith((" ", "\t")) else "\n"
        return ex, prompt + sep + code
    return ex, prompt + "\n" + code


# -- Python families ----------------------------------------------------------------------------


def build_humaneval(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    prompt = row.get("prompt") if "prompt" in row else row.get("content", "")
    entry = row.get("entry_point") or labels(row).get("entry_point")
    ex, solution = python_solution(prompt or "", completion, entry, cfg.extra)
    if ex.empty:
        return no_code(ex)
    test = row.get("test", "")
    if p.get("unittest"):  # BigCodeBench: TestCase classes, which the driver runs and counts
        found = python_tests.collect(test)
        program = python_program(f"{PY_IMPORTS}{solution}\n\n", f"{test}\n",
                                 run_timeout=p.get("run_timeout"), entry=entry,
                                 unittest=found.unittest_classes, tests=found.tests)  # fmt: skip
        return Assembled(ex, program)
    call = "" if re.search(r"^check\(", test, re.M) or not entry else f"\ncheck({entry})\n"
    reference = (prompt or "") + str(row.get("canonical_solution") or "")
    entry = entry or tests_entry(test, prompt or "")
    helpers = prompt_helpers(prompt or "", entry, test)
    program = python_program(f"{PY_IMPORTS}{solution}\n\n", f"{helpers}{test}\n{call}",
                             run_timeout=p.get("run_timeout"), entry=entry,
                             split=splittable(reference))  # fmt: skip
    return Assembled(ex, program)


def tests_entry(test: str, reference: str) -> str | None:
    """The function the tests are about where the row does not name it: the one the tests'
    `check` is called with (HumanEval-X), else the one function of the reference that the
    tests call (MBPP). Under `strict`, no other name of the answer's stands for a built-in in
    the tests (an answer's own `set` or `abs` would make them compare what it likes)."""
    checked = re.search(r"^check\((\w+)\)\s*$", test, re.M)
    if checked:
        return checked.group(1)
    called = {name for name in re.findall(r"^def\s+(\w+)", reference, re.M)
              if re.search(rf"\b{name}\s*\(", test)}  # fmt: skip
    return called.pop() if len(called) == 1 else None


def prompt_helpers(prompt: str, entry: str | None, test: str) -> str:
    """The prompt's own functions that the tests call besides the one under test (HumanEval/38's
    `encode_cyclic`, /32's `poly`), with the prompt's imports: they go before the tests, so the
    tests use the dataset's helpers, never ones the answer redefined (none where the function
    under test is unknown: it could be taken for a helper)."""
    if entry is None:
        return ""
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    helpers = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name != entry
        and re.search(rf"\b{node.name}\s*\(", test)
        and not _docstring_only(node)
    ]
    if not helpers:
        return ""
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    return "".join(f"{ast.get_source_segment(prompt, node)}\n" for node in (*imports, *helpers))


def _docstring_only(node: ast.FunctionDef) -> bool:
    """A function the prompt only declares (its body a docstring, `pass` or `...`): the answer's."""
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in node.body
    )


def splittable(reference: str, setup: str = "") -> bool:
    """Whether a problem's tests can call its answer in a process of its own (`strict`'s
    split): they get plain data back, so the problem's reference defines no class for them to
    build, and no setup code builds objects before it."""
    if setup.strip():
        return False
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # a prompt cut mid-body: its classes would be in what it shows
    return not any(isinstance(node, ast.ClassDef) for node in ast.walk(tree))


def build_mbpp(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    text = cut_at(completion, ("[DONE]",))
    ex = extract(text, "python", None, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    code = cut_at(ex.code, PY_TAIL_MARKERS)
    if not ex.kind.endswith("fenced"):
        code = cut_at(code, ("\nassert ", '\n"""'))
    tests = list(row.get("test_list") or [])
    lab = labels(row)
    if cfg.extra.get("challenge"):
        tests += list(row.get("challenge_test_list") or lab.get("challenge_test_list") or [])
    test_code = "\n".join(tests) + "\n"
    if p.get("sanitized"):
        setup = "\n".join(row.get("test_imports") or [])
    else:
        # Setup first, as SandboxFusion (and the original MBPP harness) do: tasks 367 and 927
        # build objects in their setup before their reference code defines the class.
        setup = row.get("test_setup_code") or lab.get("test_setup_code") or ""
    reference = str(row.get("code") or "")
    split = splittable(reference, setup if not p.get("sanitized") else "")
    return Assembled(ex, python_program(f"{setup}\n{code}\n\n", test_code,
                                        run_timeout=p.get("run_timeout"), split=split,
                                        entry=tests_entry(test_code, reference)))  # fmt: skip


def cruxeval_answer(completion: str) -> tuple[Extracted, str]:
    text = completion
    if "[ANSWER]" in text:
        text = text.split("[ANSWER]", 1)[1]
    text = cut_at(text, ("[/ANSWER]", "# done"))
    ex = extract(text, "python")
    if ex.empty and text.strip():
        # An answer is an expression (a literal), which need not look like a line of code.
        ex = Extracted(text.strip(), "heuristic", "the answer text")
    answer = ex.code.strip()
    if answer.startswith("assert "):
        answer = answer[len("assert ") :]
    return ex, answer


def build_cruxeval(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    mode = cfg.extra.get("mode", "output")
    if mode not in ("input", "output"):
        raise InvalidRequest("cruxeval: config.extra.mode must be 'input' or 'output'")
    ex, answer = cruxeval_answer(completion)
    if not answer:
        return no_code(ex, "no answer found in the completion")
    extracted = Extracted(answer, ex.kind, ex.how, ex.language)
    try:
        if "gt" in row:
            return _cruxeval_x(row, extracted, answer, mode, p)
        if mode == "output":
            test = f"assert {crux.python_output(answer)} == f({row['input']})"
        else:
            test = f"assert f({crux.python_input(answer, row['code'])}) == {row['output']}"
    except crux.NotData as exc:
        return refuse(extracted, f"the answer is not data: {exc}")
    return Assembled(extracted, python_program(f"{row['code']}\n", f"{test}\n",
                                               run_timeout=p.get("run_timeout")))  # fmt: skip


# What a CRUXEval-X test calls the function it is about, in any of its languages' forms.
_CRUX_CALLEES = ("candidate", "f", "F")


def _cruxeval_x(row: Row, ex: Extracted, answer: str, mode: str, p: dict) -> Assembled:
    """The answer, read as data (crux.py), in the blank of the row's test in its language (the
    id's prefix); an input answer may be the call itself, whose arguments go in the blank."""
    lang = "_".join(str(row["id"]).split("_")[:-1])
    call = dialect(lang).crux_call
    if call is None:
        raise InvalidRequest(f"cruxeval_x: row {row['id']!r} names no known language")
    language = p.get("resolve", lambda x: x)(lang)
    d = dialect(language)
    if d.python_driver:
        blank = (crux.python_input(answer, row["code"], _CRUX_CALLEES) if mode == "input"
                 else crux.python_output(answer, _CRUX_CALLEES))  # fmt: skip
    elif mode == "input":
        labels = frozenset(re.findall(r"(\w+)\s*:", _crux_declaration(row["code"])))
        blank = crux.literal(_crux_arguments(answer, call), lang, labels)
    else:
        blank = crux.literal(answer, lang)
    extracted = Extracted(blank, ex.kind, ex.how, ex.language)
    # The row's code is trusted; the blank holds data, read as a literal of its language.
    filled = row[mode].replace("????", blank)
    if d.split is not None:
        program = d.split.cruxeval(row["code"], filled, run_timeout=30, compile_timeout=30)
        if program is not None:
            return split_assembled(extracted, program)
    joined = guards.join(row["code"], filled, language)
    if joined is not None:
        return Assembled(extracted, joined_program(
            language, joined, filled, run_timeout=30, compile_timeout=30,
            fail_markers=d.fail_markers))  # fmt: skip
    # The seal goes in the test before the answer is put in.
    guarded, sealed = guards.guard_end(row[mode], language)
    test = guarded.replace("????", blank)
    if d.python_driver:
        return Assembled(extracted, python_program(row["code"], test, run_timeout=30))
    full = row["code"] + test
    program = Program(language, guards.with_start(full, language) if sealed else full, test,
                      run_timeout=30, compile_timeout=30, seal=sealed,
                      fail_markers=d.fail_markers,
                      tests=guards.tests_of(row[mode], language) if sealed else None)  # fmt: skip
    return Assembled(extracted, program)


def _crux_arguments(answer: str, call: str) -> str:
    """The arguments of an input answer written as the whole call (`candidate(1, 2)`), else the
    answer: what goes in the blank of the test's own call."""
    text = answer.strip()
    before, after = call.split("????", 1)
    forms = [(before, after)] + [(f"{name}(", ")") for name in _CRUX_CALLEES]
    for head, tail in forms:
        if text.startswith(head) and text.endswith(tail) and len(text) >= len(head + tail):
            return text[len(head) : len(text) - len(tail)]
    return text


def _crux_declaration(code: str) -> str:
    """The line of `code` that declares the function `f` (Swift's labels are in it)."""
    found = re.search(r"^.*\bf\s*\(.*$", code, re.M)
    return found.group() if found else ""


def build_mhpp(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    ex = extract(completion, "python", None, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    code = cut_at(ex.code, PY_TAIL_MARKERS)
    if ex.continuation:
        code = row.get("content", "") + code
    test, content = row.get("test", ""), row.get("content", "")
    return Assembled(ex, python_program(f"{PY_IMPORTS}{code}\n\n", f"{test}\n",
                                        test_info=labels(row),
                                        split=splittable(content),
                                        entry=tests_entry(test, content)))  # fmt: skip


def build_palmath(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    ex = extract(completion, "python", "solution")
    if ex.empty or not _defines(ex.code, "solution"):
        return no_code(ex, "the completion has no `def solution():` in a python block")
    files = decode_assets(ensure_json(row.get("test", {})).get("asset"))
    # The ground truth goes into the tests' text, which is in memory only: a file in the work
    # dir would be the answer's to read.
    truth = json.loads(files.pop("answer.json", b"{}") or b"{}").get("gt")
    code = cut_at(ex.code, PY_TAIL_MARKERS)
    # The answer is code.py, which the harness loads once it holds what it compares with.
    files["code.py"] = code.encode()
    return Assembled(ex, python_program("", harnesses.palmath(truth), files=files))


def build_insert(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    """Rows whose test is a program with an `#<INSERT>` slot (aider, MBXP, HumanEvalDS, ...)."""
    lab = labels(row)
    test = ensure_json(row.get("test")) or {}
    if not isinstance(test, dict) or not isinstance(test.get("code"), str):
        raise InvalidRequest(f"row {row.get('id')!r} has no test.code")
    language = lab.get("execution_language") or lab.get("programming_language") or "python"
    wanted = lab.get("programming_language") or language
    # SandboxFusion's extraction: unfenced code only in python, bash and sql.
    ex = extract(completion, p.get("resolve", lambda x: x)(wanted), None,
                 cfg.extra.get("code_block_idx"), strict=True)  # fmt: skip
    if ex.empty and not p.get("mbxp"):
        return no_code(ex)
    # MBXP's tests run even with no code in the slot (they fail), as in SandboxFusion: every
    # result has its test, exec_info and test_code.
    code = ex.code
    if dialect(p.get("resolve", lambda x: x)(wanted)).python_driver:
        code = cut_at(code, PY_TAIL_MARKERS)
    template = test["code"]
    resolved = p.get("resolve", lambda x: x)(language)
    slot = template.find("#<INSERT>")
    d = dialect(resolved)
    for marker, line in d.optional_imports:
        if marker not in code:
            template = template.replace(line, "")
    if d.slot_template is not None:
        template = d.slot_template(template)
    forbidden = dialect(language).mbxp_forbidden if p.get("mbxp") else ()
    files, fetch = decode_assets(test.get("asset")), reports.fetch_for(resolved)
    why = d.refuse_answer(code) if d.refuse_answer is not None else None
    if why is not None:
        return refuse(ex, why)
    if d.split is not None and slot >= 0:
        split = d.split.insert(template, code, str(row.get("content") or ""), files=files,
                               run_timeout=p.get("run_timeout"), forbidden=forbidden, fetch=fetch,
                               fail_markers=d.fail_markers)  # fmt: skip
        if split is not None:
            return split_assembled(ex, split)
    joined = guards.join(code, template.replace("#<INSERT>", "", 1), resolved)
    if joined is not None:  # the answer apart from the tests (sandlot/judge/scripts/)
        return Assembled(ex, joined_program(
            language, joined, template, files=files, run_timeout=p.get("run_timeout"),
            forbidden=forbidden, fail_markers=d.fail_markers, fetch=fetch))  # fmt: skip
    if d.slot_members and slot >= 0:
        code = class_members(code, template, template.find("#<INSERT>"), resolved)
    found = None
    if d.python_driver:
        template, found = _python_unittest(template, files)
    program_template, sealed = guards.guard_end(template, resolved)
    if slot >= 0:
        full = program_template.replace("#<INSERT>", code)
        answer_end = slot + len(code)
    else:
        full, answer_end = f"{code}\n{program_template}", len(code) + 1
    if sealed:
        full = guards.with_start(full, resolved)
    if d.python_driver:
        reference = str(row.get("canonical_solution") or "")
        checked = re.search(r"^\w*check\((\w+)\)\s*$", template, re.M)
        entry = checked.group(1) if checked else None
        classes = found.unittest_classes if found is not None else ()
        program = python_program(
            full[:answer_end],
            full[answer_end:],
            files=files,
            run_timeout=p.get("run_timeout"),
            forbidden=forbidden,
            fetch=fetch,
            entry=entry,
            unittest=classes or None,
            tests=found.tests if found is not None and classes else None,
            split=not classes and splittable(reference),
        )
        return Assembled(ex, program)
    count = guards.tests_of(template, resolved) if sealed else None
    program = Program(language, full, template, files=files, run_timeout=p.get("run_timeout"),
                      forbidden=forbidden, fail_markers=d.fail_markers, seal=sealed,
                      fetch=fetch, tests=count)  # fmt: skip
    return Assembled(ex, program)


def _python_unittest(template: str, files: dict[str, bytes]) -> tuple[str, python_tests.Collected]:
    """A Python test program whose `unittest.main(...)` the driver stands in for: the call goes,
    and a test module it loads from the row's files comes into the tests' text (in memory only:
    on disk, the answer could swap it), with the classes to run and their count."""
    template, module = python_tests.without_unittest_main(template)
    source = files.pop(f"{module}.py", None) if module else None
    if source is not None:
        text, _ = python_tests.without_unittest_main(source.decode(errors="replace"))
        template = f"{template}\n{text}\n"
    return template, python_tests.collect(template.replace("#<INSERT>", ""))


def class_members(code: str, template: str, slot: int, language: str) -> str:
    """What of a Java or C# answer goes in a slot inside the test's class: the members of the
    answer's class of that name (else of its first class; else the answer is bare methods).
    Its using/import directives, namespace and other types are dropped, and so is its own entry
    point when the test has one. SandboxFusion keeps less (the first static method alone), so
    whatever it accepts is accepted here too; it does not carry the answer's directives over
    either, so the test's stand."""
    name = braces.enclosing_class(template, slot)
    if name is None:
        return code
    body = braces.class_body(code, name)
    members = braces.without_directives(code if body is None else body)
    if braces.main_span(template, language) is not None:
        members = braces.drop_main(members, language)
    return members


NCB_ANSWER = "solution.py"


def build_ncb(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    """NaturalCodeBench: its python rows run under pytest, its java rows under JUnit."""
    test = ensure_json(row.get("test")) or {}
    return _NCB.get(p.get("language") or "", _ncb_python)(row, completion, test)


def _ncb_python(row: Row, completion: str, test: dict) -> Assembled:
    ex = extract(completion, "python")
    if ex.empty:
        return no_code(ex)
    code = cut_at(ex.code, PY_TAIL_MARKERS)
    # The answer is a module of its own, which the tests import: it cannot close or swallow
    # their text; tests it brings along are counted, and no count but the tests' own passes.
    files = {**decode_assets(test.get("asset")), NCB_ANSWER: code.encode()}
    tests = test.get("code", "")
    full = f"import pytest\nfrom {NCB_ANSWER.removesuffix('.py')} import *\n\n{tests}\n"
    return Assembled(ex, Program("pytest", full, tests, files=files,
                                tests=python_tests.collect(tests, pytest=True).tests))  # fmt: skip


def _ncb_java(row: Row, completion: str, test: dict) -> Assembled:
    """The solution's classes in Main.java (JUnit's row names the file), the test class beside."""
    ex = extract(completion, "java")
    if ex.empty:
        return no_code(ex)
    files = decode_assets(test.get("asset"))
    test_code = test.get("code", "")
    m = re.search(r"\bclass\s+(\w+)", test_code)
    files[f"{m.group(1) if m else 'SolutionTest'}.java"] = test_code.encode()
    asked = f"{row.get('canonical_solution') or ''}\n{row.get('content') or ''}"
    expected = {"Main", *split_java.declared_types(asked)}
    files.update(split_java.junit_reserved([test_code], expected))
    # One file may hold one public type: the first stays public (the file is named after it),
    # the others become package-private, which the test class in the same package still sees.
    publics = list(re.finditer(r"^public\s+(?=(final\s+|abstract\s+)?(class|interface|enum)\b)",
                               ex.code, re.M))  # fmt: skip
    code = ex.code
    for found in reversed(publics[1:]):
        code = code[: found.start()] + code[found.end() :]
    return Assembled(ex, Program("junit", code, test_code, files=files,
                                 tests=split_java.junit_tests(test_code)))  # fmt: skip


# The test framework a NaturalCodeBench row runs under (its language) -> its assembler.
_NCB = {"junit": _ncb_java}


def build_verilog(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    """VerilogEval: the module body after the row's header, under the row's testbench.

    The testbench always exits 0; it reports "Mismatches: N in M samples", so 0 must be seen.
    A body without `endmodule` is not completed: it fails to compile, as in SandboxFusion.
    """
    ex = extract(completion, "verilog")
    if ex.empty:
        return no_code(ex)
    body = ex.code
    header = re.search(r"\bmodule\s+top_module\b[^;]*;", body)
    if header:  # a whole module was given: keep its body, the preface declares the ports
        body = body[header.end() :]
    why = verilog_rules.refusal(body, row["test"])
    if why is not None:
        return refuse(ex, why)
    code = f"{row['test']}\n{row.get('code_preface', '')}{body}\n"
    return Assembled(ex, Program("verilog", code, row["test"], run_timeout=30,
                                stdout_check=verilog_rules.summary_passes))  # fmt: skip


def build_lcb(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    """LiveCodeBench: LCB's harness (`harnesses.lcb`) runs every case of the answer in one
    process, as SandboxFusion does; full_code is the answer, test_code the harness."""
    io = ensure_json(row.get("test")) or {}
    ex = extract(completion, "python")
    if ex.empty:
        return no_code(ex)
    code = cut_at(ex.code, PY_TAIL_MARKERS)
    inputs, outputs = io.get("inputs", []), io.get("outputs", [])
    timeout = int(cfg.run_timeout or 6)  # per case, SandboxFusion's default
    spec = {"fn_name": io.get("fn_name"), "inputs": inputs, "outputs": outputs,
            "timeout": timeout}  # fmt: skip
    # The cases go into the harness's text (in memory only), not into a file the answer could
    # read; the answer is code.py, which the harness compiles.
    harness = harnesses.lcb(spec)
    program = python_program("", harness, files={"code.py": code.encode()},
                             run_timeout=min((timeout + 1) * len(inputs) + 5, 160),
                             timeout_from_config=True)  # fmt: skip
    return Assembled(ex, program)


# -- stdin/stdout -------------------------------------------------------------------------------


def stdio_cases(tests: Any) -> list[StdioCase]:
    out = []
    for case in ensure_json(tests) or []:
        if "expected_stdout" in case:
            out.append(StdioCase(case.get("stdin") or "", case["expected_stdout"]))
        else:
            out.append(StdioCase((case.get("input") or {}).get("stdin") or "",
                                 (case.get("output") or {}).get("stdout") or ""))  # fmt: skip
    return out


def stdio_job(
    language: str, code: str, cases: list[StdioCase], cfg: JudgeConfig, *,
    default_checker: str = "whitespace", row_checker: Any = None,
) -> StdioJob:  # fmt: skip
    extra = cfg.extra
    checker = Checker.parse(
        extra.get("checker") or row_checker or default_checker, strict=bool(extra.get("strict"))
    )
    return StdioJob(
        language=language, code=code, cases=cases, checker=checker,
        run_all=bool(extra.get("run_all_cases")), full_cases=bool(extra.get("return_full_case")),
    )  # fmt: skip


def require_language(cfg: JudgeConfig, dataset: str) -> str:
    if not cfg.language:
        raise InvalidRequest(
            f"{dataset} judges any language: set config.language (or 'language' in the simple "
            "shape), e.g. python or cpp"
        )
    return cfg.language


def build_stdio(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = cfg.language or row.get("language") or require_language(cfg, "this dataset")
    # SandboxFusion's tables (CommonOJ) take unfenced code only in python, bash and sql; users'
    # datasets take any bare code.
    strict = not p.get("user")
    ex = extract(completion, language, None, cfg.extra.get("code_block_idx"), strict=strict)
    if ex.empty:
        return no_code(ex)
    job = stdio_job(language, ex.code, stdio_cases(row.get("test") or row.get("tests")), cfg,
                    default_checker=p.get("checker", "sandboxfusion"),
                    row_checker=row.get("checker"))  # fmt: skip
    return Assembled(ex, job)


def user_row_problem(row: Row) -> str | None:
    """Why a user row cannot be judged: it needs an id, a prompt, and `test` (a program) or
    `tests` (stdin cases)."""
    if "id" not in row:
        return "missing 'id'"
    if not isinstance(row.get("prompt"), str):
        return "missing 'prompt' (a string)"
    test, tests = row.get("test"), row.get("tests")
    if test is None and tests is None:
        return "give 'test' (code run after the solution) or 'tests'"
    if test is not None and not isinstance(test, str):
        return "'test' must be a string of code"
    if tests is not None:
        if not isinstance(tests, list) or not tests:
            return "'tests' must be a non-empty list"
        for i, case in enumerate(tests):
            if not isinstance(case, dict) or not (
                "expected_stdout" in case or isinstance(case.get("output"), dict)
            ):
                return (
                    f"tests[{i}] must be {{'stdin', 'expected_stdout'}} or "
                    "{'input': {'stdin'}, 'output': {'stdout'}}"
                )
    if "language" in row and not isinstance(row["language"], str):
        return "'language' must be a string"
    return None


def build_user(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    """User datasets: `tests` (stdin cases) or `test` (code run after the solution)."""
    language = row.get("language") or cfg.language or "python"
    if row.get("tests") is not None:
        return build_stdio({**row, "language": language}, completion, cfg,
                           {"checker": "whitespace", "user": True})  # fmt: skip
    ex = extract(completion, language, row.get("entry_point"), cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    code = ex.code
    if ex.continuation:
        code = row["prompt"] + code
    test = row["test"]
    if dialect(p.get("resolve", lambda x: x)(language)).python_driver:
        return Assembled(ex, python_program(code, f"{test}\n", run_timeout=row.get("run_timeout"),
                                            entry=row.get("entry_point"),
                                            split=splittable(row["prompt"])))  # fmt: skip
    return Assembled(ex, Program(language, f"{code}\n{test}\n", test,
                                run_timeout=row.get("run_timeout")))  # fmt: skip
