"""The docs' tables of settings, verdict integrity and datasets, rendered from `SETTINGS` and
`VARIABLES` (sandlot/config.py), the integrity rows (`integrity_rows`: the languages', families'
and datasets' rows of sandlot/judge/integrity.py) and the shipped datasets as `GET /v1/datasets`
lists them."""

from __future__ import annotations

from typing import Any, NoReturn

from sandlot.config import SETTINGS, VARIABLES, MiB, Setting
from sandlot.judge import integrity_rows

RUNTIME = "/opt/sandlot"  # where a registry looks for toolchains: nothing here probes them
# Defaults that depend on the machine the table is rendered on, in words.
MACHINE_DEFAULTS = {"slots": "the number of CPUs"}


def cell(text: str) -> str:
    """Text fit for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


def default(s: Setting) -> str:
    if s.name in MACHINE_DEFAULTS:
        return MACHINE_DEFAULTS[s.name]
    value: Any = s.default
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`' if value else "(none)"
    if s.name.endswith("_bytes") and value >= MiB and value % MiB == 0:
        return f"`{value}` ({value // MiB} MiB)"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def accepted(s: Setting) -> str:
    if s.choices:
        return ", ".join(f"`{c}`" for c in s.choices)
    bounds = [f"{word} {bound:g}" for word, bound in (("≥", s.ge), (">", s.gt), ("≤", s.le))
              if bound is not None]  # fmt: skip
    return ", ".join(bounds)


def settings() -> str:
    lines = [
        "| setting | default | accepted | environment variable | meaning |",
        "|---|---|---|---|---|",
    ]
    for s in SETTINGS:
        lines.append(f"| `{s.name}` | {default(s)} | {accepted(s)} | `{s.env}` | {cell(s.help)} |")
    return "\n".join(lines)


def variables() -> str:
    lines = ["| variable | what |", "|---|---|"]
    lines += [f"| `{name}` | {cell(what)} |" for name, what in VARIABLES.items()]
    return "\n".join(lines)


def integrity() -> str:
    lines = [
        "| family | language | class | sealed by | the seal attests | split | out of reach "
        "| shown by |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for family, language, row in integrity_rows():
        lines.append(
            f"| `{family}` | `{language}` | {row.level.value} | {cell(row.sealed_by)} | "
            f"{cell(row.attests) or '—'} | {cell(row.split) or '—'} | "
            f"{cell(row.out_of_reach)} | `{row.tests}` |"
        )
    return "\n".join(lines)


def datasets() -> str:
    """The shipped datasets as GET /v1/datasets lists them (no user datasets: no dataset_dir)."""
    from sandlot.convert import dataset_infos
    from sandlot.judge import Datasets, Judge
    from sandlot.languages import LANGUAGES, Registry

    def no_executor() -> NoReturn:
        raise AssertionError("listing datasets runs nothing")

    judge = Judge(Datasets(Registry(LANGUAGES, RUNTIME)), no_executor)
    lines = [
        "| dataset | aliases | family | languages (class) | class | what |",
        "|---|---|---|---|---|---|",
    ]
    for info in dataset_infos(judge):
        aliases = ", ".join(f"`{a}`" for a in info.aliases) or "—"
        langs = ", ".join(f"`{k}` ({v.integrity})" for k, v in info.languages.items())
        lines.append(
            f"| `{info.name}` | {aliases} | `{info.family}` | {langs} | {info.integrity} | "
            f"{cell(info.summary)} |"
        )
    return "\n".join(lines)
