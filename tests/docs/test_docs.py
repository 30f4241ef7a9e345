"""The docs site: it builds with warnings as errors and fetches nothing, its generated parts say
what the code does now, and everything a user can name (a setting, a language, an endpoint, a
dataset, a command) is in its pages. The README is the front door: short, and its links lead
to pages that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from sandlot.config import SETTINGS, VARIABLES
from sandlot.docgen import DOCS, blocks, current, stale
from sandlot.judge import Datasets
from sandlot.languages import LANGUAGES, Registry
from tests.conftest import ROOT

README_LINES = 250
# Plugins known to fetch nothing at build time (Material's social and privacy plugins do).
OFFLINE_PLUGINS = {"search"}
# Where a fetch would go: nowhere. Any plugin that reached for the network fails the build.
NO_NETWORK = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
              "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
              "NO_PROXY": "", "no_proxy": ""}  # fmt: skip


def page(name: str) -> str:
    return (DOCS / name).read_text()


def config() -> dict:
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.SafeLoader)


def test_site_builds_strict_and_offline(tmp_path) -> None:
    plugins = {p if isinstance(p, str) else next(iter(p)) for p in config().get("plugins", [])}
    assert plugins <= OFFLINE_PLUGINS, f"{plugins - OFFLINE_PLUGINS}: does it fetch when it builds?"
    assert config()["theme"].get("font") is False, "Material loads Google Fonts unless font: false"
    env = {**os.environ, **NO_NETWORK, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").exists()


def test_every_page_is_in_the_nav() -> None:
    def files(nav: list) -> set[str]:
        found: set[str] = set()
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            found |= files(value) if isinstance(value, list) else {value}
        return found

    assert files(config()["nav"]) == {p.name for p in DOCS.glob("*.md")}


def test_the_generated_parts_are_current() -> None:
    assert stale() == [], "the docs disagree with the code: run `make docs`"


@pytest.mark.parametrize("name", [b.name for b in blocks()])
def test_a_stale_block_is_found(name: str, tmp_path) -> None:
    """The check itself: a block edited by hand is named (each block, so a renderer that
    returned what the page holds whatever the code said would show)."""
    block = next(b for b in blocks() if b.name == name)
    for p in DOCS.glob("*.md"):
        text = p.read_text()
        if p.name == block.page:
            text = text.replace(current(text, name), current(text, name) + "\n| edited |")
        (tmp_path / p.name).write_text(text)
    assert stale(tmp_path) == [f"{block.page}: {name}"]


def test_every_setting_and_variable_is_documented() -> None:
    text = current(page("configuration.md"), "settings")
    for s in SETTINGS:
        assert f"| `{s.name}` |" in text and f"`{s.env}`" in text, s.name
    variables = current(page("configuration.md"), "variables")
    for name in VARIABLES:
        assert f"`{name}`" in variables, name


def test_every_language_is_documented() -> None:
    table = current(page("languages.md"), "languages")
    for row in LANGUAGES:
        assert re.search(rf"^\| `{re.escape(row.name)}` \|", table, re.M), row.name
        for alias in row.aliases:
            assert f"`{alias}`" in table, (row.name, alias)


def test_every_dataset_is_documented() -> None:
    table = current(page("judge.md"), "datasets")
    for name in Datasets(Registry(LANGUAGES, "/opt/sandlot")).names():
        assert f"| `{name}` |" in table, name


def test_every_endpoint_is_documented_by_hand_too() -> None:
    """The reference lists each endpoint; the pages people read name each too (a new route
    needs a sentence somewhere, not only its schema)."""
    from sandlot.docgen.api import schema

    reference = page("api-reference.md")
    prose = "".join(p.read_text() for p in DOCS.glob("*.md") if p.name != "api-reference.md")
    for path, methods in schema()["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}`" in reference, (method, path)
        pattern = re.sub(r"\\\{\w+\\\}", r"\\{\\w+\\}", re.escape(path))  # {session_id} ~ {id}
        assert re.search(pattern + r"(?![\w/])", prose), f"{path}: no page says what it is for"


def test_every_command_is_documented() -> None:
    from sandlot.cli import app

    text = current(page("cli.md"), "cli")
    for command in app.registered_commands:
        name = command.name or command.callback.__name__.replace("_", "-")
        assert f"## `sandlot {name}`" in text, name


def test_readme_is_a_short_front_door_with_links_that_lead_somewhere() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < README_LINES
    links = re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]+)?\)", text)
    assert links, "the README links to no docs page"
    for link in links:
        assert (ROOT / link).exists(), link
