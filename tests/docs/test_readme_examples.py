"""The README's and docs' examples run after `make setup` alone: what they import, the CLI
features they use and the commands they call are what `make setup` installs, or the text
right before the example says how to get them (`pip install ...`).

`make setup` installs the sandlot extras its Makefile names (EXTRAS) and the Debian packages of
`sandlot setup` (BASE_APT and the rows'); the venv is checked as the client-only install is, by
the transitive requirements of those extras.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import shlex
import sys

import pytest

from sandlot.install.apt import BASE_APT
from tests.client.test_client_install import core_closure, normalized
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# Features of the CLI that need an extra, by the flag that asks for them.
EXTRA_FLAGS = {"report": "--report", "ray": "--ray"}
# Commands an example calls that `make setup` does not install, and why the reader has them.
READERS_OWN = {
    "make": "the set-up's own entry point",
    "python3": "Debian's, which `make setup` starts from",
    "podman": "the container pages: the engine the reader runs the image with",
    "podman-compose": "the same, for a compose file",
    "claude": "docs/mcp.md: Claude Code, the MCP client it configures",
    "vllm": "docs/mcp.md: the model server it points at sandlot's python tool",
    **dict.fromkeys(("export", "printf", "mkdir", "cp", "base64"), "the shell and coreutils"),
    "grep": "Debian's essential set, there before set-up",
}
# Commands that Debian packages of `sandlot setup` provide, by package.
FROM_DEBIAN = {"curl": "curl", "jq": "jq"}


def setup_extras() -> tuple[str, ...]:
    found = re.search(r"^EXTRAS \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert found, "the Makefile names no EXTRAS for `make setup`"
    return tuple(found.group(1).split(","))


def examples(kinds: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(page, the text since the previous example or heading, the example) of each fenced
    block of one of `kinds`."""
    out = []
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) in kinds:
                before = text[: match.start()]
                start = max(before.rfind("```"), before.rfind("\n#"))
                out.append((page.name, before[start:], match.group(2)))
    return out


def imported(code: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"sandlot"}


def test_python_examples_import_only_what_setup_installs():
    venv = core_closure(setup_extras())
    owners = md.packages_distributions()
    missing = []
    for page, before, code in examples(("python",)):
        for module in sorted(imported(code)):
            dists = {normalized(d) for d in owners.get(module, [module])}
            said = any(f"pip install {d}" in before.replace("_", "-") for d in dists)
            if not dists & venv and not said:
                missing.append(f"{page}: {module} ({', '.join(sorted(dists))})")
    assert missing == [], "examples import what `make setup` does not install, unannounced"


def test_cli_features_the_examples_use_are_installed_or_announced():
    text = "\n".join(page.read_text() for page in PAGES)
    for extra, flag in EXTRA_FLAGS.items():
        if re.search(rf"`sandlot [^`]*{flag}\b", text) and extra not in setup_extras():
            assert f"sandlot[{extra}]" in text, f"{flag} needs sandlot[{extra}]: say so"
    assert "report" in setup_extras()  # the docs' eval example writes a report


def uncommented(line: str) -> str:
    """The line without a trailing `# ...` comment (one outside quotes, roughly)."""
    for match in re.finditer(r"(?:^|\s)#", line):
        head = line[: match.start()]
        if head.count("'") % 2 == 0 and head.count('"') % 2 == 0:
            return head
    return line


def commands(script: str) -> set[str]:
    """The first word of each simple command of a shell example (enough for these examples)."""
    text = "\n".join(uncommented(line) for line in script.replace("\\\n", " ").splitlines())
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace, lexer.commenters, lexer.whitespace_split = " \t", "", True
    found, starts, target = set(), True, False
    for token in lexer:
        if set(token) <= set("<>"):
            target = True  # a redirection: a file name comes next
        elif set(token) <= set("();|&\n"):
            starts = True
        elif target:
            target = False
        elif starts and not re.fullmatch(r"[A-Za-z_]\w*=.*", token):  # not an assignment
            found.add(token)
            starts = False
    return found


SHELL_EXAMPLES = [
    pytest.param(page, before, script, id=f"{page}-{n}")
    for n, (page, before, script) in enumerate(examples(("sh",)))
]


@pytest.mark.parametrize("page,before,script", SHELL_EXAMPLES)
def test_shell_examples_call_only_what_setup_installs(page: str, before: str, script: str):
    for command in sorted(commands(script)):
        if command == "sandlot" or command.startswith(".venv/bin/") or command in READERS_OWN:
            continue
        assert command in FROM_DEBIAN, f"{page}: what installs `{command}`? ({script[:80]!r})"
        assert FROM_DEBIAN[command] in BASE_APT, f"`sandlot setup` does not install {command}"
