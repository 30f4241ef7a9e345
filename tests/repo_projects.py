# ruff: noqa: E501 - the projects table: one bug, one cheat, one line each
"""Real open-source projects as repositories to grade, fetched from the package registries.

Each project is a released package (a PyPI sdist, an npm tarball, a Go module from the module
proxy: each carries its tests) committed as a git repository, then a bug injected the way
SWE-smith makes tasks (one function changed so that some tests fail) and committed: that commit
is the base. A later commit fixes it again and is tagged, so that the history past the base
holds the answer (a grade must never see it). The gold patch is the fix; the cheat patch edits
the failing test instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SOURCES = Path(os.environ.get("SANDLOT_TEST_SOURCES", "/var/cache/sandlot-test/sources"))
GO = "/opt/sandlot/go/bin/go"


@dataclass(frozen=True)
class Project:
    name: str
    fetch: str  # how: pypi, npm, go
    package: str
    version: str
    bug: tuple[str, str, str]  # file, text, the text that replaces it
    cheat: tuple[str, str, str]  # a test file edited instead of the code
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    setup: str
    test: str
    prepare: Callable[[Path], None] | None = None  # what the repository changes in the package


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed: {done.stderr[-2000:]}")
    return done.stdout


def _untar(archive: Path, dest: Path) -> None:
    dest.mkdir()
    _run(["tar", "-xzf", str(archive), "-C", str(dest), "--no-same-owner"])


def fetched(p: Project) -> Path:
    """The released package's files, fetched once into SOURCES."""
    dest = SOURCES / f"{p.fetch}-{p.package.replace('/', '_')}-{p.version}"
    if dest.is_dir():
        return dest
    tmp = dest.with_name(dest.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if p.fetch == "pypi":
        _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", p.package,
              "-d", str(tmp), f"{p.package}=={p.version}"])  # fmt: skip
        (archive,) = tmp.glob("*.tar.gz")
        _untar(archive, tmp / "x")
        (root,) = (tmp / "x").iterdir()
    elif p.fetch == "npm":
        _run(["npm", "pack", "-q", f"{p.package}@{p.version}", "--pack-destination", str(tmp)])
        (archive,) = tmp.glob("*.tgz")
        _untar(archive, tmp / "x")
        root = tmp / "x" / "package"
    else:
        info = json.loads(_run([GO, "mod", "download", "-json", f"{p.package}@{p.version}"],
                               env={"GOMODCACHE": str(tmp / "mod"), "GOFLAGS": "-modcacherw",
                                    "GOPROXY": "https://proxy.golang.org"}))  # fmt: skip
        root = Path(info["Dir"])
    shutil.copytree(root, tmp / "src", symlinks=True)
    shutil.rmtree(tmp / "x", ignore_errors=True)
    shutil.rmtree(tmp / "mod", ignore_errors=True)
    tmp.rename(dest)
    return dest


def git(repo: Path, *args: str) -> str:
    return _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo)


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@dataclass
class Task:
    repo: Path
    base: str
    later: str  # the commit past the base that holds the fix
    gold: str
    cheat: str


def make_task(p: Project, where: Path) -> Task:
    """The project as a git repository with the bug injected at its base, and its patches."""
    repo = where / p.name
    shutil.rmtree(repo, ignore_errors=True)  # a fixture made again starts afresh
    shutil.copytree(fetched(p) / "src", repo, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(repo):  # a module cache's files are read-only
        for name in (*dirnames, *filenames):
            os.chmod(os.path.join(dirpath, name), 0o755 if name in dirnames else 0o644)
    if p.prepare is not None:
        p.prepare(repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{p.package} {p.version}")
    file, old, new = p.bug
    _replace(repo / file, old, new)
    git(repo, "commit", "-qam", "a bug")
    base = git(repo, "rev-parse", "HEAD").strip()
    _replace(repo / file, new, old)
    gold = git(repo, "diff")
    git(repo, "commit", "-qam", "the fix")
    git(repo, "tag", "fixed")
    later = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", base)
    file, old, new = p.cheat
    _replace(repo / file, old, new)
    cheat = git(repo, "diff")
    git(repo, "checkout", "-q", "--", file)
    return Task(repo, base, later, gold, cheat)


QS_DEV = {"tape": "^5.9.0", "es-value-fixtures": "^1.7.1", "for-each": "^0.3.5",
          "has-bigints": "^1.1.0", "has-override-mistake": "^1.0.1",
          "has-property-descriptors": "^1.0.2", "has-proto": "^1.2.0", "has-symbols": "^1.1.0",
          "iconv-lite": "^0.5.2", "mock-property": "^1.1.2", "object-inspect": "^1.13.4",
          "safer-buffer": "^2.1.2", "tap-xunit": "^2.4.1"}  # fmt: skip


def with_qs_dev(src: Path) -> None:
    """qs's own devDependencies pin a linter this registry does not serve: keep its tests'."""
    manifest = json.loads((src / "package.json").read_text())
    manifest["devDependencies"] = QS_DEV
    manifest["scripts"] = {"test": "tape 'test/**/*.js'"}
    (src / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")


PROJECTS = {
    "prettytable": Project(
        name="prettytable", fetch="pypi", package="prettytable", version="3.16.0",
        bug=("src/prettytable/prettytable.py", 'self._hrules = kwargs["hrules"] or HRuleStyle.FRAME',
             'self._hrules = kwargs["hrules"] or HRuleStyle.ALL'),
        cheat=("tests/test_latex.py", "def test_latex_output_formatted", "def _latex_output_formatted"),
        fail_to_pass=("tests/test_latex.py::TestLatexOutput::test_latex_output_formatted",
                      "tests/test_html.py::TestHtmlOutput::test_html_output_formatted"),
        pass_to_pass=("tests/test_colortable.py::TestColorTable::test_themeless",
                      "tests/test_colortable.py::TestFormatCode::test_basic"),
        setup="python3 -m venv .venv && .venv/bin/pip install -e '.[tests]'",
        test="python -m pytest -q -p no:cov tests",
    ),
    "qs": Project(
        name="qs", fetch="npm", package="qs", version="6.17.1",
        bug=("lib/parse.js", "depth: 5,", "depth: 4,"),
        cheat=("test/parse.js", "'defaults to a depth of 5'", "'defaults to a depth of 5 (skipped)', { skip: true }"),
        fail_to_pass=("parse()", "decode dot keys correctly"),
        pass_to_pass=("parses a simple string", "parse()::#1 parses a single nested string"),
        setup="npm install --ignore-scripts --no-package-lock --no-audit --no-fund",
        test="tape 'test/**/*.js' | tap-xunit > $SANDLOT_REPORT_DIR/tape.xml",
        prepare=with_qs_dev,
    ),
    "go-multierror": Project(
        name="go-multierror", fetch="go", package="github.com/hashicorp/go-multierror",
        version="v1.1.1",
        bug=("format.go", 'points := make([]string, len(es))', 'points := make([]string, len(es)+1)'),
        cheat=("format_test.go", "func TestListFormatFuncMultiple", "func testListFormatFuncMultiple"),
        fail_to_pass=("github.com/hashicorp/go-multierror::TestListFormatFuncMultiple",
                      "github.com/hashicorp/go-multierror::TestErrorError_default"),
        pass_to_pass=("github.com/hashicorp/go-multierror::TestAppend_Error",
                      "github.com/hashicorp/go-multierror::TestAppend_NilError"),
        setup="auto",
        test="go test -json ./... > $SANDLOT_REPORT_DIR/go-test.json",
    ),
}  # fmt: skip
