"""Prompts per dataset family: what a model is shown for one row, as SandboxFusion shows it.

Each text is SandboxFusion's, byte for byte (tests/judge/test_prompts.py checks them against
fingerprints of its own builders run on its sample rows), because a prompt that differs changes a
model's score. The long templates are data: `data/sf_prompt_texts.json` (see data/README.md).
"""

# ruff: noqa: RUF001  (the zh prompts use Chinese punctuation on purpose)

from __future__ import annotations

import functools
import gzip
import json
import re
from importlib import resources
from string import Template
from typing import TYPE_CHECKING, Any

from sandlot.judge.assemble import ensure_json, labels
from sandlot.judge.plans import JudgeConfig

if TYPE_CHECKING:
    from sandlot.judge.datasets import DatasetSpec

Row = dict[str, Any]
# The package's data folder (datasets.py reads the rows from it; this module, its templates).
_DATA = resources.files("sandlot.judge").joinpath("data")
_HIDDEN = {"__line__", "__internal_uuid__", "prompt", "content"}

# HumanEval / MultiPL-E in freeform mode: the prompt in a fence, then this.
_FREEFORM = {
    "en": "Please complete the above code according to the requirements in the docstring. "
          "Write the complete code and wrap it in markdown syntax.",
    "zh": "请按照docstring的要求补全如上代码，写出完整的代码，代码要用markdown语法包裹。",
}  # fmt: skip
_NO_MAIN = {"en": " The code should not contain `Main` function.", "zh": "代码不要包含`Main`函数"}
# SandboxFusion's fence tag per dataset id (else the row's `language` before any dot).
_FENCE = {
    **{f"multiple_{ext}": tag for ext, tag in (
        ("cpp", "cpp"), ("ts", "typescript"), ("sh", "bash"), ("cs", "csharp"), ("go", "go"),
        ("java", "java"), ("lua", "lua"), ("js", "js"), ("php", "php"), ("pl", "perl"),
        ("rkt", "racket"), ("r", "r"), ("rs", "rust"), ("scala", "scala"), ("swift", "swift"),
        ("rb", "ruby"), ("d", "d"), ("jl", "julia"))},
    "humaneval_python": "python", "shadow_humaneval_python": "python", "evoeval": "python",
}  # fmt: skip
_STDIO = {
    "en": {
        "default": "Please implement complete executable code with an entry point in "
                   "{language}. Your program should read input from standard input and write "
                   "output to standard output.",
        "cpp": "Please implement complete executable code including a main function in C++. "
               "Your program should read input from standard input and write output to "
               "standard output.",
        "python": "Please implement a complete Python script. Your program should read input "
                  "from standard input and write output to standard output.",
        "java": "Please implement a complete Java program with a public class named Main. Your "
                "class should include a public static void main(String[] args) method. Your "
                "program should read input from System.in and write output to System.out.",
    },
    "zh": {
        "default": "请使用 {language} 实现一个完整的可执行程序，包含程序入口。你的程序应该从标准"
                   "输入读取数据，并将结果输出到标准输出。",
        "cpp": "请使用 C++ 实现一个完整的可执行程序，包含 main 函数。你的程序应该从标准输入读取"
               "数据，并将结果输出到标准输出。",
        "python": "请编写一个完整的 Python 脚本。你的程序应该从标准输入读取数据，并将结果输出到"
                  "标准输出。",
        "java": "请实现一个完整的 Java 程序，包含一个名为 Main 的公共类。你的类中应包含 public "
                "static void main(String[] args) 方法。你的程序应该从 System.in 读取输入，并将"
                "结果输出到 System.out。",
    },
}  # fmt: skip
# MBXP / HumanEvalDS / OODTest: question and answer hints, and the wrap of autoeval_wrap_prompt.
_QA = {
    "en": ("Question:", "Answer:", "Please answer in English with Markdown format. "
           "####Instruction:"),
    "zh": ("问题：", "答案：", "请用中文回答，并用Markdown格式。####Instruction:"),
}  # fmt: skip
_SEP = "----------------"
_AIDER_WRAP = ("Please answer in English with Markdown format. Below is the problem:",
               "Your response here:")  # fmt: skip
_MBPP_TASK = ("You are an expert Python programmer, and here is your task: {text} Your code "
              "should pass these tests:\n\n{tests}")  # fmt: skip


@functools.cache
def _texts() -> dict[str, Any]:
    return json.loads(_DATA.joinpath("sf_prompt_texts.json").read_text(encoding="utf-8"))


@functools.cache
def _cruxeval_x_examples() -> dict[str, list[dict[str, str]]]:
    packed = _DATA.joinpath("sf_cruxeval_x_examples.json.gz").read_bytes()
    return json.loads(gzip.decompress(packed))


def _locale(cfg: JudgeConfig) -> str:
    return "zh" if cfg.locale == "zh" else "en"


def row_labels(row: Row) -> dict[str, Any]:
    lab = labels(row)
    if lab:
        return lab
    return {k: v for k, v in row.items() if k not in _HIDDEN}


# One builder per family (families.py): (dataset, row, config) -> the prompt text. A family with
# modes (CRUXEval) is asked once per mode, which is in `config.extra["mode"]`.


def humaneval(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    """HumanEval and MultiPL-E rows (`prompt`), and the older schema (`content`, `labels`)."""
    old = "prompt" not in row
    prompt = row["content"] if old else row["prompt"]
    if not cfg.extra.get("is_freeform"):
        return prompt
    key = re.sub(r"^multiple_mbpp_", "multiple_", spec.name)  # sandlot's MBPP half of MultiPL-E
    if old:
        tag = _FENCE.get(key) or labels(row).get("programming_language")
    else:
        tag = (_FENCE.get(key) or row.get("language") or spec.language or "python").split(".")[0]
    loc = _locale(cfg)
    ask = _FREEFORM[loc] + ("" if old else _NO_MAIN[loc])
    return f"```{tag}\n{prompt}\n```\n\n{ask}"


def mbpp(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    text = row["prompt"] if "prompt" in row and "text" not in row else row.get("text", "")
    text = text or row.get("content", "")
    tests = list(ensure_json(row.get("test_list")) or [])
    if not cfg.is_fewshot:
        return _MBPP_TASK.format(text=text, tests="\n".join(tests))
    task = _MBPP_TASK.format(text=text, tests="\n".join(tests[:2]))
    return f"{_texts()['mbpp_fewshot']}{task}\n[BEGIN]\n"


def cruxeval(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    texts, extra = _texts(), cfg.extra
    mode = extra["mode"]
    if "gt" in row or spec.name == "cruxeval_x":
        lang = "_".join(str(row["id"]).split("_")[:-1])
        text = _cruxeval_x(lang, row["code"] + row[mode], mode)
    elif extra.get("use_cot"):
        text = Template(texts[f"cruxeval_{mode}_cot"]).substitute(**row)
    elif mode == "output" and extra.get("phind_output"):
        text = Template(texts["cruxeval_output_phind"]).substitute(**row)
    else:
        text = Template(texts[f"cruxeval_{mode}"]).substitute(**row)
    if extra.get("coding_wrap_prompt") is True:
        ins, res = texts["cruxeval_wrap"]
        text = f"{ins}\n{text}\n{res}\n"
    return text


def mhpp(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    text = row["content"]
    first = (row.get("test") or "").split("\n")[0]
    return text[: text.rfind('"""')] + f'\n    e.g. {first} """'


def stdio(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    lang = cfg.language or row.get("language") or "python"
    texts = _STDIO.get(cfg.locale or "en", _STDIO["en"])
    text = texts.get(lang, texts["default"]).format(language=lang)
    return (row.get("content", row.get("prompt")) or "") + f"\n\n{text}"


def insert(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    lab = labels(row)
    if "reference" in lab and not spec.params.get("mbxp"):
        return _aider_benchmark(row["content"], lab["reference"], cfg)
    return _mbxp(spec, row, cfg)


def lcb(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    return _lcb_fewshot(row["content"]) if cfg.is_fewshot else row["content"]


def given(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    """The row's own `prompt`, as it is (user datasets, RepoBench)."""
    return row["prompt"]


def content(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    """The row's `content` (else `prompt`), as text."""
    text = row.get("content", row.get("prompt", ""))
    return text if isinstance(text, str) else str(ensure_json(text))


def _cruxeval_x(lang: str, code: str, mode: str) -> str:
    """CRUXEval-X: the language's solved examples, then the task (`????` marks the blank)."""
    calls = _texts()["cruxeval_x_language_calls"]
    key = "inputs" if mode == "input" else "outputs"
    shown = ""
    for item in _cruxeval_x_examples()[lang]:
        blank = calls[lang] if mode == "input" else "????"
        body = item["code"].replace(item[key], blank).strip()
        shown += f"```{lang}\n{body}\n```\n[ANSWER]\n{item[key]}\n[/ANSWER]\n"
    header = Template(_texts()[f"cruxeval_x_{mode}_header"]).substitute(language=lang)
    return f"{header}\n\n{shown.rstrip()}\n```{lang}\n{code}\n```\n"


def _mbxp(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    lab = labels(row)
    question, context = row.get("content", ""), lab.get("docs")
    fewshot = None
    if cfg.is_fewshot:
        custom = cfg.extra.get("autoeval_custom_fewshot") or {}
        kind = str(lab.get("task_id", "")).split("/")[0]
        fewshot = custom.get(kind, custom.get("default", lab.get("fewshot")))
    q, a, wrap = _QA["en" if "_en" in spec.name else "zh"]
    wrapped = cfg.extra.get("autoeval_wrap_prompt") is True
    if context and fewshot:
        return f"{context}\n\n{_SEP}\n\n{fewshot}\n\n{q}{question}\n\n{a}\n"
    if context:
        if wrapped:
            return f"{context}\n\n{wrap}\n{question}\nResponse:\n"
        return f"{context}\n\n{q}{question}\n\n{a}\n"
    if fewshot:
        return f"{fewshot}\n\n{q}{question}\n\n{a}\n"
    return f"{wrap}\n{question}\nResponse:\n" if wrapped else question


def _aider_benchmark(question: str, reference: str, cfg: JudgeConfig) -> str:
    prompt = (f"\n{question}\n\nPlease generate the code in the following format:\n```python\n"
              f"{reference}\n```\n")  # fmt: skip
    if cfg.extra.get("autoeval_wrap_prompt"):
        ins, res = _AIDER_WRAP
        prompt = f"{ins}\n{prompt}\n{res}\n"
    return prompt


def verilog(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    lab = labels(row)
    preface = row.get("code_preface", "")
    body = (f"{lab.get('system_prompt', '')}\n{lab.get('question_prompt', '')}\n"
            f"{row.get('description', '')}\n```verilog\n{preface}```")  # fmt: skip
    fewshot = lab.get("fewshot") if cfg.is_fewshot else None
    return f"{fewshot}\n\n{_SEP}\n\nQuestion:\n{body}\n\nAnswer:" if fewshot else body


def _lcb_fewshot(content: str) -> str:
    """LiveCodeBench's few-shot prompt: its solved examples, then the row's question."""
    question = re.search(r"### Question:\n(.*)\n\n### Format:", content, re.S)
    starter = re.search(r"### Format: .*\n```python\n(.*)\n```\n\n", content, re.S)
    if question is None or starter is None:
        return content
    code = None if starter.group(1) == "# YOUR CODE HERE" else starter.group(1)
    text = _texts()["lcb_fewshot_prefix"] + question.group(1) + "\n\n"
    if code:
        text += ("### Format: You will use the following starter code to write the solution to "
                 "the problem and enclose your code within delimiters.\n"
                 f"```python\n{code}\n```")  # fmt: skip
    else:
        text += ("### Format: Read the inputs from stdin solve the problem and write the answer "
                 "to stdout (do not directly test on the sample inputs). Enclose your code "
                 "within delimiters as follows.\n```python\n```")  # fmt: skip
    return text + "\n\n### Answer: (use the provided format with backticks)\n"


def aider(spec: DatasetSpec, row: Row, cfg: JudgeConfig) -> str:
    """sandlot's own aider polyglot rows (SandboxFusion has no such dataset)."""
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
            "with the complete file in one fenced code block:\n"
            f"```{lang}\n{stub}\n```\n")  # fmt: skip
