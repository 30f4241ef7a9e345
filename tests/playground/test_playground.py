"""The playground over plain HTTP: its routes, headers and files, and each language's template
run in the real jail. The pages themselves are tested in a browser (test_playground_browser.py).
"""

from __future__ import annotations

import re

import httpx
import pytest

from sandlot.api.playground import CSP, PAGES
from sandlot.languages import LANGUAGES
from sandlot.playground import static_files
from sandlot.playground.templates import TEMPLATES
from tests.conftest import ROOT


@pytest.mark.root
def test_root_and_bare_path_redirect_to_the_playground(client: httpx.Client) -> None:
    for path, target in (("/", "/playground/"), ("/playground", "/playground/")):
        r = client.get(path)
        assert r.status_code == 307
        assert str(r.url.join(r.headers["location"])).endswith(target)
    assert client.get("/", follow_redirects=True).url.path == "/playground/"


@pytest.mark.root
@pytest.mark.parametrize("path", ["/playground/", *(f"/playground/{p}" for p in PAGES)])
def test_every_page_is_the_shell_with_a_strict_policy(client: httpx.Client, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.headers["content-security-policy"] == CSP
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert '<script type="module" src="static/js/app.js">' in r.text


def test_the_policy_allows_nothing_inline_and_no_other_origin() -> None:
    rules = dict(rule.split(" ", 1) for rule in CSP.split("; "))
    assert rules["default-src"] == "'none'" and rules["frame-ancestors"] == "'none'"
    assert rules["script-src"] == rules["style-src"] == "'self'"
    assert "unsafe" not in CSP and "http" not in CSP and "*" not in CSP


def test_the_shell_has_no_inline_script_or_style() -> None:
    html = (ROOT / "sandlot/playground/static/playground.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)", html) == []
    assert "<style" not in html and " style=" not in html
    assert re.findall(r"\son[a-z]+\s*=", html) == []  # no inline event handler


def test_no_page_script_writes_markup() -> None:
    """Text reaches the pages as text: no script of ours parses a string as HTML."""
    scripts = (ROOT / "sandlot/playground/static/js").rglob("*.js")
    for path in scripts:
        source = path.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            allowed = path.name == "dom.js" and sink == "innerHTML"  # the check that refuses it
            assert allowed or sink not in source, f"{path.name} uses {sink}"


@pytest.mark.root
def test_static_files_are_served_with_their_types(client: httpx.Client) -> None:
    files = static_files()
    assert "vendor/codemirror/codemirror.js" in files and "js/app.js" in files
    for name, media in (("js/app.js", "text/javascript"), ("playground.css", "text/css")):
        r = client.get(f"/playground/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(media)
        tag = {"If-None-Match": r.headers["etag"]}
        again = client.get(f"/playground/static/{name}", headers=tag)
        assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("path", [
    "/playground/static/../../api/app.py",
    "/playground/static/%2e%2e/%2e%2e/api/playground.py",
    "/playground/static/..%2f__init__.py",
    "/playground/static//etc/passwd",
    "/playground/static/js",
    "/playground/static/" + "a/" * 2000,
    "/playground/nosuchpage",
    "/playground/static/js/app.js%00.html",
])  # fmt: skip
@pytest.mark.root
def test_only_the_packaged_files_are_served(client: httpx.Client, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404
    assert "detail" in r.json()


@pytest.mark.root
def test_templates_cover_the_language_table(client: httpx.Client) -> None:
    rows = {row.name for row in LANGUAGES}
    assert set(TEMPLATES) - rows == set(), "templates of no language row"
    assert rows - set(TEMPLATES) == set(), "rows without a template: add one in templates.py"
    served = client.get("/playground/templates.json").json()
    assert served.keys() == TEMPLATES.keys()
    assert served["python"] == {"mode": "text/x-python", "code": 'print("Hello, world!")\n',
                                "output": "Hello, world!\n"}  # fmt: skip


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(TEMPLATES))
def test_every_template_does_what_it_says(run, client: httpx.Client, language: str) -> None:
    row = next(r for r in client.get("/languages").json() if r["name"] == language)
    if not row["available"]:
        pytest.skip(f"{language} cannot run here: {row['reason']}")
    template = TEMPLATES[language]
    out = run(template.code, language, compile_timeout=120, run_timeout=60)
    assert out["status"] == "Success", out
    if template.output is not None:
        assert out["run_result"]["stdout"] == template.output


@pytest.mark.root
def test_a_foreign_host_gets_no_page(client: httpx.Client) -> None:
    """DNS rebinding: a page of another site that resolves to this server gets nothing."""
    for path in ("/playground/", "/playground/static/js/app.js", "/"):
        r = client.get(path, headers={"Host": "attacker.example"})
        assert r.status_code == 400 and "Host" in r.json()["detail"]
