"""The docs' generated parts, each a block between two markers in a page of `docs/`, rendered
from what it documents (the OpenAPI schema, the settings table, the integrity table, the
shipped datasets, the CLI's help, the languages table), so that a page cannot drift from what
the server does.

    python -m sandlot.docgen            # rewrite every block (make docs)
    python -m sandlot.docgen --check    # exit 1 naming the stale blocks (tests/docs/test_docs.py)

The languages table is apart (`python -m sandlot.docgen.languages`, or `bench/languages.py`
after measuring): its versions are probed from this machine's toolchains and its times are
measured, so it is rewritten where both are at hand, not checked for equality.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


@dataclass(frozen=True, slots=True)
class Block:
    page: str  # under docs/
    name: str  # the markers: <!-- name:start --> ... <!-- name:end -->
    render: Callable[[], str]


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def current(text: str, name: str) -> str:
    """What a page holds between the markers of `name`."""
    start, end = markers(name)
    if start not in text or end not in text:
        raise SystemExit(f"no {start} ... {end} block to rewrite")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def rewrite(page: Path, name: str, block: str) -> bool:
    """Put `block` between the markers of `name` in `page`; True if that changed it."""
    text = page.read_text()
    if current(text, name) == block:
        return False
    start, end = markers(name)
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    page.write_text(f"{head}{start}\n{block}\n{end}{tail}")
    return True


def blocks() -> tuple[Block, ...]:
    # Imported here: the API's block needs the server's extras, and none is needed to import this.
    from sandlot.docgen import api, cli, tables

    return (
        Block("api-reference.md", "api", api.render),
        Block("configuration.md", "settings", tables.settings),
        Block("configuration.md", "variables", tables.variables),
        Block("integrity.md", "integrity", tables.integrity),
        Block("judge.md", "datasets", tables.datasets),
        Block("cli.md", "cli", cli.render),
    )


def stale(docs: Path = DOCS) -> list[str]:
    """The blocks whose page does not hold what they render now, as `page: name`."""
    return [
        f"{b.page}: {b.name}"
        for b in blocks()
        if current((docs / b.page).read_text(), b.name) != b.render()
    ]
