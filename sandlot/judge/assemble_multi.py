"""Program assembly for the multi-language families: HumanEval-X, MultiPL-E, aider polyglot."""

from __future__ import annotations

import re
from pathlib import Path

from sandlot.judge import braces, guards
from sandlot.judge.assemble import Row, build_humaneval, joined_program, no_code
from sandlot.judge.dialects import dialect
from sandlot.judge.extract import Extracted, cut_at, extract
from sandlot.judge.plans import Assembled, JudgeConfig, Program
from sandlot.judge.split import split_assembled
from sandlot.judge.split.families import PRELUDE as _PRELUDE


def _declared_name(line: str, language: str) -> str | None:
    """The last name `line` (without comments and literals) declares as a function, if any."""
    for name in reversed(re.findall(r"[A-Za-z_]\w*", line)):
        if declares(line, name, language):
            return name
    return None


def _signature_name(prompt: str, language: str) -> str | None:
    """The function a prompt ends by declaring: in its last lines, the last name the language
    would declare there (`sub f {`, `f <- function(x)`, `bool f(int x) {`)."""
    lines = [ln for ln in prompt.rstrip().split("\n") if ln.strip()][-3:]
    for line in reversed(lines):
        name = _declared_name(braces.blank(line), language)
        if name is not None:
            return name
    for line in reversed(lines):  # else the identifier before the last `(` of a code line
        m = re.search(r"([A-Za-z_]\w*)\s*(=\s*\([^)]*\)\s*=>|\()", line)
        if m and not line.lstrip().startswith(("//", "#", "/*", "*")):
            return m.group(1)
    return None


def _freeform(ex: Extracted, name: str | None, language: str) -> bool:
    """Whether the extracted code is a whole solution, which it is only when it declares the
    prompt's function; else it is a body (which may call the function, recursively, and may
    open with `use` lines or a helper of its own: Rust takes both in a function's body)."""
    if ex.continuation or not name:
        return False
    return declares(braces.blank(ex.code), name, language)


def declares(blanked: str, name: str, language: str) -> bool:
    """Whether `blanked` (code without comments and literals) declares the function `name`."""
    pattern = dialect(language).declaration.format(n=re.escape(name))
    return re.search(pattern, blanked, re.M) is not None


def build_humaneval_x(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = p["language"]
    if dialect(language).python_driver:
        return build_humaneval(row, completion, cfg, p)
    prompt, test = row["prompt"], row["test"]
    name = _signature_name(row.get("declaration") or prompt, language)
    ex = extract(completion, language, name, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    whole = _freeform(ex, name, language)
    d = dialect(language)
    if d.split is not None:
        split = d.split.humaneval_x(row, ex.code, whole, run_timeout=p.get("run_timeout"))
        if split is not None:
            return split_assembled(ex, split)
    joined = guards.join(ex.code if whole else prompt + ex.code, test, language)
    if joined is not None:  # the answer apart from the tests (sandlot/judge/scripts/)
        return Assembled(ex, joined_program(language, joined, test,
                                            run_timeout=p.get("run_timeout")))  # fmt: skip
    # The seal goes in the tests' main before the answer is put in, never in an answer's own.
    as_run = d.hx_tests(test) if d.hx_tests else test
    tests, sealed = guards.guard_end(as_run, language)
    full = d.hx_head + d.hx_splice(row, ex.code, whole, tests)
    if sealed:
        full = guards.with_start(full, language)
    count = guards.tests_of(as_run, language) if sealed else None
    return Assembled(ex, Program(language, full, test, run_timeout=p.get("run_timeout"),
                                 seal=sealed, tests=count))  # fmt: skip


# -- MultiPL-E ----------------------------------------------------------------------------------


def build_multiple(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = p["language"]
    d = dialect(language)
    # MultiPL-E's rows name them `tests`; HumanEval-style rows sent as a HumanEvalDataset, `test`
    prompt, tests = row["prompt"], row["tests"] if "tests" in row else row["test"]
    name = _signature_name(prompt, language)
    ex = extract(completion, language, name, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    stops = tuple(s for s in row.get("stop_tokens") or () if not s.startswith("re:"))
    whole = _freeform(ex, name, language)
    if d.split is not None:
        code = ex.code if whole else cut_at(ex.code, stops)
        split = d.split.multiple(prompt, code, whole, tests, run_timeout=p.get("run_timeout"),
                                 fail_markers=d.fail_markers)  # fmt: skip
        if split is not None:
            return split_assembled(ex, split)
    # the answer apart from the tests (sandlot/judge/scripts/)
    answer, rest = _multiple_answer(ex, name, language, prompt, tests, stops)
    joined = guards.join(answer, rest, language)
    if joined is not None:
        return Assembled(ex, joined_program(language, joined, tests,
                                            run_timeout=p.get("run_timeout"),
                                            fail_markers=d.fail_markers))  # fmt: skip
    for old, new in d.mp_renames:
        prompt, tests = prompt.replace(old, new), tests.replace(old, new)
    program_tests, sealed = guards.guard_end(tests, language)
    if _freeform(ex, name, language):
        code, prelude = _whole_answer(ex.code, prompt, language)
        first, _, rest = program_tests.partition("\n")
        # MultiPL-E tests begin by closing the prompt's function; a whole solution closed it.
        tail = rest if first.strip() == "}" else program_tests
        full = (f"{prelude}\n{code}\n{tail}" if d.mp_program is None
                else d.mp_program(prompt, code, tail))  # fmt: skip
    else:
        # joined on a line break, as SandboxFusion joins them: a completion that ends without one
        # must not run into the tests' first line (`}public class Main {`)
        body = cut_at(ex.code, stops)
        full = prompt + body + ("" if body.endswith("\n") else "\n") + program_tests
    full = d.mp_prelude + full
    if sealed:
        full = guards.with_start(full, language)
    count = guards.tests_of(tests, language) if sealed else None
    return Assembled(ex, Program(language, full, tests, run_timeout=p.get("run_timeout"),
                                 fail_markers=d.fail_markers, seal=sealed,
                                 tests=count))  # fmt: skip


def _whole_answer(code: str, prompt: str, language: str) -> tuple[str, str]:
    """A whole answer without its own main, reshaped for the prompt's scope, and the prompt's
    prelude lines (imports, includes, `<?php`) it lacks."""
    d = dialect(language)
    code = braces.drop_main(code, language)
    if d.mp_whole is not None:
        code = d.mp_whole(code, prompt)
    present = set(code.split("\n"))
    prelude = "\n".join(ln for ln in prompt.split("\n") if _PRELUDE.match(ln) and ln not in present)
    return code, prelude


def _multiple_answer(
    ex: Extracted, name: str | None, language: str, prompt: str, tests: str, stops: tuple[str, ...]
) -> tuple[str, str]:
    """A MultiPL-E answer as a unit of its own, and the tests that follow it. The tests of some
    languages (bash) begin by closing the prompt's function, which a whole answer closed itself:
    that line is left out."""
    if _freeform(ex, name, language):
        code, prelude = _whole_answer(ex.code, prompt, language)
        first, _, rest = tests.partition("\n")
        return f"{prelude}\n{code}\n", rest if first.strip() == "}" else tests
    body = cut_at(ex.code, stops)
    return prompt + body + ("" if body.endswith("\n") else "\n"), tests


# -- aider polyglot -----------------------------------------------------------------------------


def build_aider(row: Row, completion: str, cfg: JudgeConfig, p: dict) -> Assembled:
    language = row["language"]
    resolve = p.get("resolve", lambda x: x)
    target = resolve({"javascript": "nodejs"}.get(language, language))
    ex = extract(completion, target, None, cfg.extra.get("code_block_idx"))
    if ex.empty:
        return no_code(ex)
    d = dialect(target)
    if d.aider is None:
        return Assembled(ex, None, f"aider polyglot {language} exercises have no test runner here")
    if d.aider_needs is not None and not Path(d.aider_needs[0]).exists():  # the jail sees /usr
        path, package = d.aider_needs
        return Assembled(ex, None, f"aider polyglot {language} exercises need {path} (Debian "
                         f"package {package}; `sandlot setup` installs it)")  # fmt: skip
    return d.aider(row, completion, ex)


def reference_completion(row: Row) -> str | None:
    """The aider polyglot reference solution as a fenced completion (for tests and checks)."""
    examples = list(row.get("example_files", {}).values())
    if not examples:
        return None
    return "\n".join(f"```{row['language']}\n{text}\n```" for text in examples)
