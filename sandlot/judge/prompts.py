"""Prompts per dataset family: what a model is shown for one row."""

# ruff: noqa: RUF001  (the zh prompts use Chinese punctuation on purpose)

from __future__ import annotations

from typing import Any

from sandlot.judge.assemble import ensure_json, labels
from sandlot.judge.plans import JudgeConfig

Row = dict[str, Any]
_HIDDEN = {"__line__", "__internal_uuid__", "prompt", "content"}

# Chinese punctuation is intended in the zh prompts.
_FREEFORM = {
    "en": "Complete the following {lang} code. Reply with the whole solution in one fenced "
          "code block.\n```{tag}\n{prompt}\n```",
    "zh": "请补全下面的 {lang} 代码，并把完整的解答放在一个代码块中。\n```{tag}\n{prompt}\n```",
}  # fmt: skip
_STDIO = {
    "en": "\n\nWrite a complete {lang} program that reads the input from standard input and "
          "writes the answer to standard output. Reply with the program in one fenced code block.",
    "zh": "\n\n请用 {lang} 编写完整的程序，从标准输入读取输入，把答案写到标准输出，"
          "并把程序放在一个代码块中。",
}  # fmt: skip
_CRUX_OUTPUT = (
    "You are given a Python function and an assertion containing an input to the function. "
    "Complete the assertion with a literal (no unsimplified expressions, no function calls) "
    "containing the output when executing the code on the given input, even if the function "
    "is incorrect or incomplete. Give the full assertion between [ANSWER] and [/ANSWER].\n\n"
    "[PYTHON]\n{code}\nassert f({input}) == ??\n[/PYTHON]\n"
)
_CRUX_INPUT = (
    "You will be given a function f and an output in the form f(??) == output. Find any input "
    "such that executing f on it leads to the given output. There may be several answers; give "
    "one, as a passing assertion between [ANSWER] and [/ANSWER].\n\n"
    "[PYTHON]\n{code}\nassert f(??) == {output}\n[/PYTHON]\n"
)


def _locale(cfg: JudgeConfig) -> str:
    return "zh" if (cfg.locale or "en").lower().startswith("zh") else "en"


def row_labels(row: Row) -> dict[str, Any]:
    lab = labels(row)
    if lab:
        return lab
    return {k: v for k, v in row.items() if k not in _HIDDEN}


def build(family: str, row: Row, cfg: JudgeConfig, language: str | None) -> str | list[str]:
    """The prompt text (cruxeval without a mode gives both of its prompts)."""
    extra = cfg.extra
    if family in ("humaneval", "humaneval_x", "multiple"):
        prompt = row.get("prompt") if "prompt" in row else row.get("content", "")
        if extra.get("is_freeform"):
            lang = language or "python"
            return _FREEFORM[_locale(cfg)].format(lang=lang, tag=lang, prompt=prompt.strip())
        return prompt
    if family == "mbpp":
        if "prompt" in row and "text" not in row:
            text = row["prompt"]
        else:
            text = row.get("text") or row.get("content", "")
        tests = "\n".join(row.get("test_list") or [])
        return (f"You are an expert Python programmer, and here is your task: {text} "
                f"Your code should pass these tests:\n\n{tests}\n")  # fmt: skip
    if family == "cruxeval":
        modes = [extra["mode"]] if extra.get("mode") else ["output", "input"]
        texts = [(_CRUX_OUTPUT if m == "output" else _CRUX_INPUT).format(**row) for m in modes]
        return texts[0] if len(texts) == 1 else texts
    if family == "mhpp":
        first = (row.get("test") or "").split("\n")[0]
        return f"{row['content']}\n\nFor example, this must hold:\n{first}\n"
    if family == "stdio":
        lang = cfg.language or row.get("language") or "Python"
        return row.get("content", row.get("prompt", "")) + _STDIO[_locale(cfg)].format(lang=lang)
    if family == "aider":
        stubs = {k: v for k, v in row.get("solution_files", {}).items()
                 if not k.endswith((".toml", ".json"))}  # fmt: skip
        lang = row["language"]
        if len(stubs) > 1:  # C++: a header and its .cpp, each wanted back in a block of its own
            shown = "".join(f"{path}:\n```{lang}\n{text}\n```\n" for path, text in stubs.items())
            return (f"{row.get('instructions', '')}\n\nUse these files as a starting point and "
                    "reply with each complete file in a fenced code block of its own, in this "
                    f"order:\n{shown}")  # fmt: skip
        stub = next(iter(stubs.values()), "")
        return (f"{row.get('instructions', '')}\n\nUse this file as a starting point and reply "
                f"with the complete file in one fenced code block:\n```{lang}\n"
                f"{stub}\n```\n")  # fmt: skip
    if family == "user":
        return row["prompt"]
    text = row.get("content", row.get("prompt", ""))
    return text if isinstance(text, str) else str(ensure_json(text))
