"""The playground in a real browser: Debian's headless Chromium driven by Playwright, against a
real `sandlot serve` on 127.0.0.1, with real runs in the jail.

Every test's page fails the test on a console error or an uncaught exception. Screenshots of
each page go to build/screenshots/ for a person to look at.
"""

from __future__ import annotations

import ast
import base64
import json
import shlex
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sandlot.playground.templates import TEMPLATES
from tests.conftest import ROOT, Server

pytestmark = [pytest.mark.browser, pytest.mark.root]  # a real server: the jail

CHROMIUM = "/usr/bin/chromium"
# Flags that work in this kind of machine: no sandbox of Chromium's own (we run as root), no
# GPU, and nothing that reaches out to the network.
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SHOTS = ROOT / "build" / "screenshots"
WIDE = {"width": 1280, "height": 800}
NARROW = {"width": 390, "height": 844}
PAGES = {"run": "", "tests": "tests", "datasets": "datasets", "notebook": "notebook",
         "status": "status"}  # fmt: skip
WAIT = 120_000  # ms: a run on a loaded machine (a JVM compile) can take a while


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM, headless=True, args=FLAGS, viewport=WIDE,
        )  # fmt: skip
        context.set_default_timeout(WAIT)
        yield context
        context.close()


class Page:
    """A browser tab on the test server that records console errors and uncaught exceptions."""

    def __init__(self, context, server: Server) -> None:
        self.tab = context.new_page()
        self.server = server
        self.errors: list[str] = []
        self.allowed: tuple[str, ...] = ()  # console errors a test provokes on purpose
        self.tab.on("console", lambda m: m.type == "error" and self._error(m.text))
        self.tab.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))

    def _error(self, text: str) -> None:
        if not any(a in text for a in self.allowed):
            self.errors.append(text)

    def open(self, page: str = "", fragment: str = "") -> Page:
        self.tab.goto(f"{self.server.url}/playground/{page}{fragment}")
        self.tab.wait_for_selector("body[data-ready=true]")
        return self

    def code(self, value: str | None = None, index: int = 0) -> str:
        editor = f"document.querySelectorAll('.CodeMirror')[{index}].CodeMirror"
        if value is not None:
            self.tab.evaluate(f"code => {editor}.setValue(code)", value)
        return self.tab.evaluate(f"{editor}.getValue()")

    def pane(self, name: str) -> str:
        return self.tab.inner_text(f"[data-pane={name}]")

    def field(self, name: str) -> str:
        return self.tab.inner_text(f"[data-field={name}]")

    def contains(self, selector: str, text: str) -> None:
        """Wait until the element shows `text`. (Playwright's polling, not a predicate string:
        the page's CSP forbids eval, so a string predicate fails if its first check does.)"""
        from playwright.sync_api import expect

        expect(self.tab.locator(selector)).to_contain_text(
            text, use_inner_text=True, timeout=30_000
        )

    def run(self) -> None:
        """Press Run and wait for the result."""
        with self.tab.expect_response(lambda r: r.url.endswith("/run_code")):
            self.tab.click("button.primary")
        self.tab.wait_for_selector("[data-field=status]:not(.busy)")

    def attrs(self, selector: str, name: str) -> list[str]:
        """The data-NAME attribute of every element the selector finds."""
        return self.tab.eval_on_selector_all(selector, f"es => es.map(e => e.dataset.{name})")

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.fixture
def page(browser, server: Server) -> Iterator[Page]:
    tab = Page(browser, server)
    yield tab
    tab.tab.close()
    assert tab.errors == [], "console errors"


@pytest.mark.parametrize(
    "language", ["python", "cpp", pytest.param("java", marks=pytest.mark.slow)]
)
def test_hello_world_runs(page: Page, language: str) -> None:
    page.open()
    page.tab.select_option("#language", language)
    assert page.code() == TEMPLATES[language].code  # the picker loads the language's template
    page.run()
    assert page.field("status") == "Success"
    assert page.pane("stdout") == TEMPLATES[language].output
    assert page.field("limit") == "none"
    assert "s" in page.field("time") and "MiB" in page.field("memory")
    if language == "cpp":
        assert page.pane("compile").startswith("Finished, exit code 0")
    page.shot(f"run-{language}")


def test_compile_error_shows_in_the_compile_pane(page: Page) -> None:
    page.open()
    page.tab.select_option("#language", "cpp")
    page.code("int main() { return undefined_name; }\n")
    page.run()
    assert page.field("status") == "Failed"
    assert "undefined_name" in page.pane("compile") and "error" in page.pane("compile")
    assert page.pane("stdout") == "(empty)"
    assert page.field("build").startswith("compile failed: Finished, exit code 1")
    page.shot("run-compile-error")


def test_time_limit_shows_which_limit_fired(page: Page) -> None:
    page.open()
    page.code("import time\nprint('started', flush=True)\ntime.sleep(30)\n")
    page.tab.fill("input[name=run_timeout]", "1")
    page.run()
    assert page.field("status") == "Failed"
    assert page.field("limit").startswith("time: the wall-time limit")
    assert page.field("run").startswith("TimeLimitExceeded")
    assert page.pane("stdout") == "started\n"


def test_a_program_printing_markup_shows_it_as_text(page: Page) -> None:
    hostile = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b>'
    page.open()
    page.code(f"print({hostile!r})\nimport sys\nprint({hostile!r}, file=sys.stderr)\n")
    page.run()
    assert page.pane("stdout") == hostile + "\n"
    assert page.pane("stderr") == hostile + "\n"
    assert page.tab.evaluate("window.pwned") is None
    assert page.tab.query_selector_all(".result script, .result img, .result b") == []


def test_files_go_in_and_fetch_files_come_back(page: Page, tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("three\nlines\nhere\n")
    page.open()
    page.code("text = open('data.txt').read()\nopen('out.txt', 'w').write(text.upper())\n"
              "print(len(text.splitlines()))\n")  # fmt: skip
    page.tab.set_input_files("input[name=files]", str(data))
    page.tab.fill("input[name=fetch_files]", "out.txt")
    page.run()
    assert page.pane("stdout") == "3\n"
    assert page.tab.inner_text("[data-file='out.txt']") == "THREE\nLINES\nHERE\n"
    href = page.tab.get_attribute(".files a", "href")
    assert href.startswith("blob:") and page.tab.get_attribute(".files a", "download") == "out.txt"


def test_a_refused_request_shows_the_servers_reason(page: Page) -> None:
    page.allowed = ("status of 400",)  # the browser logs the refused request itself
    page.open()
    page.tab.fill("input[name=run_timeout]", "100000")
    page.run()
    assert page.field("status").startswith("HTTP 400: ")
    assert "run_timeout" in page.pane("message") and "maximum" in page.pane("message")


def test_an_api_key_is_asked_for_sent_and_never_shown(page: Page) -> None:
    """A server with API keys (none here yet: its 401 is played by the browser) gets the key
    the reader types; snippets name it by a variable and share links never hold it."""
    page.allowed = ("status of 401",)
    page.open()
    assert page.tab.is_hidden("#api-key")

    def refuse(route) -> None:
        route.fulfill(status=401, content_type="application/json",
                      body='{"detail": "this server needs an API key"}')  # fmt: skip

    page.tab.route("**/run_code", refuse)
    page.run()
    assert page.field("status") == "HTTP 401: this server needs an API key"
    assert page.tab.is_visible("#api-key")
    page.tab.unroute("**/run_code")
    page.tab.fill("#api-key", "key-8c1f")
    page.tab.press("#api-key", "Enter")
    with page.tab.expect_request(lambda r: r.url.endswith("/run_code")) as sent:
        page.run()
    assert sent.value.headers["authorization"] == "Bearer key-8c1f"
    assert page.pane("stdout") == TEMPLATES["python"].output
    curl = page.tab.text_content("[data-snippet=curl]")
    python = page.tab.text_content("[data-snippet=python]")
    assert "key-8c1f" not in curl + python
    assert '"Authorization: Bearer $SANDLOT_API_KEY"' in curl
    assert 'os.environ["SANDLOT_API_KEY"]' in python
    env = {"PATH": "/usr/bin:/bin", "SANDLOT_API_KEY": "key-8c1f"}
    done = subprocess.run(["bash", "-c", curl], env=env, capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert json.loads(done.stdout)["stdout"] == TEMPLATES["python"].output
    page.tab.click("text=Share link")
    assert "key-8c1f" not in _unpack(page.tab.input_value("[data-share=link]").split("#p=")[1])


def test_ctrl_enter_runs_and_escape_leaves_the_editor(page: Page) -> None:
    page.open()
    page.tab.click(".CodeMirror-line")
    page.tab.keyboard.press("Control+A")
    page.tab.keyboard.type('print("typed", 6 * 7)')
    with page.tab.expect_response(lambda r: r.url.endswith("/run_code")):
        page.tab.keyboard.press("Control+Enter")
    page.tab.wait_for_selector("[data-field=status]:not(.busy)")
    assert page.pane("stdout") == "typed 42\n"
    page.tab.keyboard.press("Escape")  # focus moves on, to the Run button below the editor
    assert page.tab.evaluate("document.activeElement.textContent") == "Run"
    with page.tab.expect_response(lambda r: r.url.endswith("/run_code")):
        page.tab.keyboard.press("Enter")


def test_copy_as_curl_and_python_reproduce_the_request(page: Page, browser) -> None:
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    page.open()
    page.code("import sys\nprint(sys.stdin.read().upper(), end='')\nprint(\"it's\")\n")
    page.tab.fill("textarea[name=stdin]", 'quote \' and "double" \\ back')
    with page.tab.expect_request(lambda r: r.url.endswith("/run_code")) as sent:
        page.run()
    body = sent.value.post_data
    expected = page.pane("stdout")
    page.tab.click("details.reproduce summary")
    page.tab.click("text=Copy as curl")
    curl = page.tab.inner_text("[data-snippet=curl]")
    assert page.tab.evaluate("navigator.clipboard.readText()") == curl
    argv = shlex.split(curl)
    assert argv[argv.index("--data-binary") + 1] == body  # byte for byte
    assert f"{page.server.url}/run_code" in argv
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout)["run_result"]["stdout"] == expected
    page.tab.click("text=Copy as Python")
    python = page.tab.inner_text("[data-snippet=python]")
    assert page.tab.evaluate("navigator.clipboard.readText()") == python
    tree = ast.parse(python)
    literal = next(n.value for n in tree.body if isinstance(n, ast.Assign))
    assert ast.literal_eval(literal) == json.loads(body)
    done = subprocess.run([sys.executable, "-c", python], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert ast.literal_eval(done.stdout)["run_result"]["stdout"] == expected


def test_share_link_round_trips_and_never_runs_by_itself(page: Page, browser, server) -> None:
    page.open()
    page.tab.select_option("#language", "cpp")
    code = '#include <cstdio>\nint main() { std::puts("shared ✓"); }\n'
    page.code(code)
    page.tab.fill("textarea[name=stdin]", "some stdin")
    page.tab.fill("input[name=run_timeout]", "3")
    page.tab.click("text=Share link")
    link = page.tab.input_value("[data-share=link]")
    assert link.startswith(f"{server.url}/playground/#p=") and page.tab.url == link
    state = json.loads(_unpack(link.split("#p=", 1)[1]))
    assert state == {"v": 1, "page": "run", "language": "cpp", "code": code,
                     "stdin": "some stdin", "fetch_files": "", "run_timeout": 3}  # fmt: skip

    other = Page(browser, server)
    posts: list[str] = []
    other.tab.on("request", lambda r: r.method == "POST" and posts.append(r.url))
    other.tab.goto(link)
    other.tab.wait_for_selector("body[data-ready=true]")
    assert other.code() == code
    assert other.tab.input_value("#language") == "cpp"
    assert other.tab.input_value("textarea[name=stdin]") == "some stdin"
    assert other.tab.input_value("input[name=run_timeout]") == "3"
    other.tab.wait_for_timeout(500)
    assert posts == []  # opening a link runs nothing
    other.run()
    assert other.pane("stdout") == "shared ✓\n"
    other.tab.close()
    assert other.errors == []


def test_a_tests_page_link_round_trips_its_cases(page: Page, browser, server) -> None:
    page.open("tests")
    page.tab.check("#kind-stdin")
    page.tab.fill(".case:nth-child(1) [data-case=input]", "7 8")
    page.tab.fill(".case:nth-child(1) [data-case=expected]", "15")
    page.tab.click("text=Share link")
    link = page.tab.input_value("[data-share=link]")
    assert link.startswith(f"{server.url}/playground/tests#p=")
    other = Page(browser, server)
    other.tab.goto(link)
    other.tab.wait_for_selector("body[data-ready=true]")
    assert other.tab.is_checked("#kind-stdin")
    assert other.tab.input_value(".case:nth-child(1) [data-case=input]") == "7 8"
    assert other.tab.input_value(".case:nth-child(1) [data-case=expected]") == "15"
    assert other.tab.locator(".case").count() == 3 and other.code() == page.code()
    other.tab.close()
    assert other.errors == []


def _unpack(text: str) -> str:
    return zlib.decompress(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), -15).decode()


def test_a_share_link_holds_no_files(page: Page, tmp_path: Path) -> None:
    secret = tmp_path / "credentials.txt"
    secret.write_text("token=s3cr3t")
    page.open()
    page.tab.set_input_files("input[name=files]", str(secret))
    page.tab.click("text=Share link")
    link = page.tab.input_value("[data-share=link]")
    state = _unpack(link.split("#p=", 1)[1])
    assert "files" not in json.loads(state) and "s3cr3t" not in state


def _fragment(payload: bytes) -> str:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, as CompressionStream's
    packed = packer.compress(payload) + packer.flush()
    return "#p=" + base64.urlsafe_b64encode(packed).decode().rstrip("=")


@pytest.mark.parametrize("fragment,says", [
    ("#p=bm90IGRlZmxhdGU", "the link is damaged"),
    (_fragment(b'{"v": 1, "page": "run", "code": "' + b" " * (8 << 20) + b'"}'),
     "unpacks to more than"),
    (_fragment(b'{"v": 1, "page": "tests", "code": "x"}'), "not one of this page's"),
    (_fragment(b'[1, 2]'), "not one of this page's"),
])  # fmt: skip
def test_a_hostile_share_link_is_refused(page: Page, fragment: str, says: str) -> None:
    page.open(fragment=fragment)
    assert says in page.tab.inner_text(".notice")
    assert page.code() == TEMPLATES["python"].code  # the page still works, as if no link


def test_unavailable_languages_are_greyed_out_with_the_reason(page: Page, server) -> None:
    rows = httpx.get(f"{server.url}/languages").json()
    page.open()
    options = page.tab.eval_on_selector_all(
        "#language option", "os => os.map(o => [o.value, o.disabled, o.textContent, o.title])"
    )
    assert [o[0] for o in options if not o[1]] == [r["name"] for r in rows if r["available"]]
    for name, disabled, text, title in options:
        row = next(r for r in rows if r["name"] == name)
        if disabled:
            assert title == row["reason"] and text.startswith(f"{name}: ")


def test_editor_modes_cover_the_table(page: Page) -> None:
    """Every language's highlighting mode is one the vendored CodeMirror has loaded."""
    page.open()
    modes = {t.mode for t in TEMPLATES.values() if t.mode}
    missing = page.tab.evaluate(
        "modes => modes.filter(m => !(m in CodeMirror.mimeModes))", sorted(modes)
    )
    assert missing == []
    assert page.tab.query_selector(".CodeMirror .cm-builtin, .CodeMirror .cm-keyword")
    assert page.tab.query_selector(".CodeMirror .cm-string")


def test_tests_page_gives_a_verdict_per_case(page: Page) -> None:
    page.open("tests")
    page.run()
    rows = page.attrs("table.cases tbody tr", "verdict")
    assert rows == ["passed", "passed", "failed"]  # add(2, 2) is not 5
    assert page.field("verdict") == "2 of 3 cases passed"
    page.shot("tests")
    page.tab.check("#kind-stdin")
    page.tab.select_option("#language", "cpp")
    page.code('#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}\n')
    for n, (given, want) in enumerate([("1 2", "3"), ("2 2", "4"), ("5 5", "11")]):
        page.tab.fill(f".case:nth-child({n + 1}) [data-case=input]", given)
        page.tab.fill(f".case:nth-child({n + 1}) [data-case=expected]", want)
    page.run()
    rows = page.attrs("table.cases tbody tr", "verdict")
    assert rows == ["passed", "passed", "failed"]


def test_a_dataset_problem_is_accepted_and_rejected(page: Page) -> None:
    from sandlot.judge.datasets import read_jsonl

    data = Path(__file__).resolve().parents[2] / "sandlot/judge/data/humaneval.jsonl.gz"
    row = next(r for r in read_jsonl(data) if r["task_id"] == "HumanEval/0")
    page.open("datasets")
    page.tab.select_option("#dataset", "humaneval_python")
    page.tab.select_option("#problem", "HumanEval/0")
    page.contains("[data-pane=prompt]", "def has_close_elements")

    def submit(completion: str) -> None:
        page.code(completion)
        with page.tab.expect_response(lambda r: r.url.endswith("/submit")):
            page.tab.click("button.primary")
        page.tab.wait_for_selector("[data-field=accepted]")

    submit(row["prompt"] + row["canonical_solution"])
    assert page.field("accepted") == "Accepted"
    assert page.field("verdict") == "accepted"
    assert "def has_close_elements" in page.pane("full")
    page.shot("datasets-accepted")
    stub = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
    submit(stub)
    assert page.field("accepted") == "Rejected"
    assert page.field("verdict") == "wrong_answer" and page.field("reason") not in ("", "—")
    assert page.pane("extracted") == "def has_close_elements(numbers, threshold):\n    return False"
    assert page.tab.query_selector("table.cases tbody tr[data-verdict=wrong_answer]")
    page.shot("datasets-rejected")


def _openapi_without(server: Server, *paths: str):
    spec = httpx.get(f"{server.url}/openapi.json").json()
    for path in list(spec["paths"]):
        if path.startswith(paths):
            del spec["paths"][path]

    def handler(route) -> None:
        route.fulfill(status=200, content_type="application/json", body=json.dumps(spec))

    return handler


def test_notebook_without_notebook_support_says_so(page: Page, server) -> None:
    page.tab.route("**/openapi.json", _openapi_without(server, "/sessions", "/run_jupyter"))
    page.open("notebook")
    assert "no notebook support" in page.field("notebook-status")


def _needs(server: Server, path: str, page: Page) -> None:
    if path not in httpx.get(f"{server.url}/openapi.json").json()["paths"]:
        page.open("notebook")  # what this server's readers see instead: a clear message
        assert "no notebook support" in page.field("notebook-status")
        page.shot("notebook")
        pytest.skip(f"this server has no {path} (the notebook page says so)")


def _run_all_cells(page: Page) -> list[str]:
    page.tab.click("text=Run all")
    page.tab.wait_for_selector(".cell:nth-child(4) .cell-meta")
    outputs = page.tab.eval_on_selector_all(".cell-output", "os => os.map(o => o.innerText)")
    assert "x = 21" in outputs[0] and "42" in outputs[1]
    assert page.tab.query_selector(".cell:nth-child(3) .html-output table")  # pandas' table
    assert page.tab.evaluate("document.querySelector('.cell:nth-child(4) img').naturalWidth") > 0
    return outputs


def test_notebook_runs_cells_in_a_live_session(page: Page, server) -> None:
    _needs(server, "/sessions", page)
    page.open("notebook")
    _run_all_cells(page)
    sid = page.field("notebook-status").split()[1].rstrip(":")
    page.code("x += 1\nx", index=1)  # the session keeps x between runs
    with page.tab.expect_response(lambda r: r.url.endswith("/execute")):
        page.tab.click(".cell:nth-child(2) button:text('Run')")
    page.contains(".cell >> nth=1", "22")
    page.shot("notebook")
    page.tab.goto("about:blank")  # leaving the page ends its session
    alive = [s["id"] for s in httpx.get(f"{server.url}/sessions").json()]
    for _ in range(50):
        if sid not in alive:
            break
        page.tab.wait_for_timeout(100)
        alive = [s["id"] for s in httpx.get(f"{server.url}/sessions").json()]
    assert sid not in alive


def test_notebook_without_sessions_runs_the_cells_through_run_jupyter(page: Page, server) -> None:
    _needs(server, "/run_jupyter", page)
    page.tab.route("**/openapi.json", _openapi_without(server, "/sessions"))
    page.open("notebook")
    assert "no sessions" in page.field("notebook-status")
    _run_all_cells(page)
    assert "fresh kernel" in page.field("notebook-status")


@pytest.mark.parametrize("html,shown", [
    ('<style>td{color:red}</style><table border="1"><tr style="x"><th colspan="2">a&amp;b</th>'
     "</tr></table>", '<table><tr><th colspan="2">a&amp;b</th></tr></table>'),
    ('<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><b>ok</b>',
     "<b>ok</b>"),
    ('<a href="javascript:window.pwned=3">link</a><div onclick="x">d</div>', "link<div>d</div>"),
    ("<iframe srcdoc='<script>parent.pwned=4</script>'></iframe>after",
     "&lt;iframe srcdoc=''&gt;after"),  # a tag it cannot read stays text
    ("<td colspan='99999'>wide</td><p>unclosed", "<td>wide</td><p>unclosed</p>"),
    ("<!-- <script>x</script> -->&lt;script&gt; &#60;b&#62; &#xD800;",
     "&lt;script&gt; &lt;b&gt; \ufffd"),
])  # fmt: skip
def test_kernel_html_is_rebuilt_without_scripts_or_styles(
    page: Page, html: str, shown: str
) -> None:
    page.open("notebook")
    out = page.tab.evaluate(
        "html => import('./static/js/outputs.js').then(m => m.safeHTML(html).innerHTML)", html
    )
    assert out == shown
    assert page.tab.evaluate("window.pwned") is None


def test_status_page_shows_health_and_languages_live(page: Page, server) -> None:
    rows = httpx.get(f"{server.url}/languages").json()
    page.open("status")
    assert page.field("health").startswith("Ready")
    assert page.field("busy").endswith("of 2")
    shown = page.attrs("tr[data-language]", "language")
    assert shown == [r["name"] for r in rows]
    for r in rows:
        if r["version"]:
            assert r["version"] in page.tab.text_content(f"tr[data-language='{r['name']}']")
    with page.tab.expect_request(lambda r: r.url.endswith("/health")):
        pass  # the page asks again by itself
    # The raw metrics are behind a disclosure, not hundreds of rows above the languages.
    assert page.tab.is_hidden("pre.raw-metrics")
    top = page.tab.evaluate("document.querySelector('table.languages').offsetTop")
    assert top < WIDE["height"], "the languages start below the first screen"
    page.tab.click("details.raw summary")
    page.contains("pre.raw-metrics", "sandlot_slots")
    page.shot("status")


@pytest.mark.parametrize("size", ["wide", "narrow"])
@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_is_readable_without_console_errors(page: Page, name: str, size: str) -> None:
    page.tab.set_viewport_size(WIDE if size == "wide" else NARROW)
    page.open(PAGES[name])
    page.tab.wait_for_timeout(300)
    overflow = page.tab.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 0, f"{name} scrolls sideways at {size} width"
    assert page.tab.evaluate("parseFloat(getComputedStyle(document.body).fontSize)") >= 14
    page.shot(f"page-{name}-{size}")


def test_an_eval_report_opens_and_shows_its_plots(page: Page, server, tmp_path: Path) -> None:
    from tests.judge.test_judge_cli import sandlot, write_samples

    samples = tmp_path / "samples.jsonl"
    write_samples(samples)
    report = tmp_path / "report.html"
    done = sandlot("eval", "-d", "humaneval", "-s", str(samples), "--k", "1,2",
                   "--server", server.url, "--report", str(report))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    page.tab.goto(report.as_uri())
    images = page.tab.eval_on_selector_all("img", "is => is.map(i => [i.alt, i.naturalWidth])")
    assert [alt for alt, _ in images] == [
        "pass@k and verdicts per dataset and language", "histogram of run times"]  # fmt: skip
    assert all(width > 0 for _, width in images)  # decoded: the plots are there
    first = page.tab.inner_text("table")
    assert "pass@2" in first and "humaneval_python" in first and "0.2500" in first
    assert "HumanEval/0" in page.tab.inner_text("body")
    page.shot("report")


def test_api_docs_come_from_this_server_under_the_playgrounds_policy(page: Page, server) -> None:
    """/docs is Swagger UI from the package (no CDN: it works offline), with the playground's
    Content-Security-Policy; the page fixture fails on any violation of it."""
    from sandlot.api.playground import CSP

    elsewhere: list[str] = []
    page.tab.on("request", lambda r: r.url.startswith(server.url) or elsewhere.append(r.url))
    response = page.tab.goto(f"{server.url}/docs")
    assert response.headers["content-security-policy"] == CSP
    page.contains("#swagger-ui", "/run_code")
    page.tab.wait_for_selector(".opblock-summary-path[data-path='/run_code']")
    assert elsewhere == []
    page.shot("docs")
    assert httpx.get(f"{server.url}/redoc").headers["location"] == "docs"


def test_api_docs_try_it_out_sends_the_playgrounds_key(page: Page, server) -> None:
    page.open()
    page.tab.evaluate("sessionStorage.setItem('sandlot-api-key', 'key-d0c5')")
    page.tab.goto(f"{server.url}/docs")
    page.tab.click(".opblock-summary-path[data-path='/languages']")
    page.tab.click("text=Try it out")
    with page.tab.expect_request(lambda r: r.url.endswith("/languages")) as sent:
        page.tab.click("button.execute")
    assert sent.value.headers["authorization"] == "Bearer key-d0c5"
    page.contains(".responses-wrapper .live-responses-table", "python")


@pytest.mark.parametrize("where", ["run", "datasets"])
def test_what_was_just_typed_in_is_what_is_sent(page: Page, where: str) -> None:
    """Text an input method (or the browser's insertText) put in the editor, followed at once
    by Run or Submit, is sent: the editor takes such input into its document only 80 ms later,
    and it used to send what was there before (the template, or an empty completion)."""
    page.open("datasets" if where == "datasets" else "")
    if where == "run":
        page.tab.select_option("#language", "cpp")  # the editor now holds C++'s template
        before, typed = TEMPLATES["cpp"].code, "// typed in"
    else:
        page.contains("[data-pane=prompt]", "def ")
        before, typed = "", "def typed_in(): return 1"
    page.tab.click(".CodeMirror-line")
    page.tab.keyboard.press("Control+End")
    # One task, as a fast user's text then click are for the 80 ms timer: no wait between.
    # (One line at the end: insertText over a selection of lines would have Chromium style the
    # merged lines inline, which the page's CSP refuses.)
    insert_then_send = """text => {
        document.execCommand("insertText", false, text);
        document.querySelector("button.primary").click();
    }"""
    endpoint = "/submit" if where == "datasets" else "/run_code"
    with page.tab.expect_request(lambda r: r.url.endswith(endpoint)) as sent:
        page.tab.evaluate(insert_then_send, typed)
    body = json.loads(sent.value.post_data)
    assert body["completion" if where == "datasets" else "code"] == before + typed
    assert page.code() == before + typed


KEY = "key-0f3c9a7d6e5b4c3a2f1e0d9c8b7a6f5e"


@pytest.fixture(scope="module")
def keyed() -> Iterator[Server]:
    """A server with API keys and two worker processes, one slot each."""
    from tests.conftest import running_server

    with running_server("--slots", "2", "--workers", "2", env={"SANDLOT_API_KEYS": KEY}) as srv:
        # Ready once both workers count their slot (the first answers /v1/ping on its own).
        for _ in range(600):
            text = httpx.get(f"{srv.url}/metrics", headers={"Authorization": f"Bearer {KEY}"}).text
            if "\nsandlot_slots 2.0" in text:
                break
            time.sleep(0.2)
        yield srv


def test_a_server_with_keys_asks_for_one_checks_it_and_opens(browser, keyed: Server) -> None:
    page = Page(browser, keyed)
    page.allowed = ("status of 401",)  # the browser logs each refused request itself
    page.tab.goto(f"{keyed.url}/playground/")
    page.tab.wait_for_selector("body[data-started=true]")
    assert page.tab.query_selector_all(".status.bad") == []  # no red "HTTP 401" to open with
    assert "asks for an API key" in page.field("start")
    assert page.tab.is_visible("#api-key")
    assert page.tab.evaluate("document.activeElement.id") == "api-key"

    page.tab.fill("#api-key", "key-wrong-0000000000000000000000000")
    page.tab.press("#api-key", "Enter")
    page.contains("[data-field=key-note]", "This key was refused")
    assert "bad" in page.tab.get_attribute("[data-field=key-note]", "class")
    assert page.tab.evaluate("sessionStorage.getItem('sandlot-api-key')") is None
    assert page.tab.query_selector("body[data-ready=true]") is None

    page.tab.fill("#api-key", KEY)
    page.tab.press("#api-key", "Enter")
    page.tab.wait_for_selector("body[data-ready=true]")  # the page opens, no reload
    assert page.field("key-note") == "Key accepted; kept for this tab."
    with page.tab.expect_request(lambda r: r.url.endswith("/run_code")) as sent:
        page.run()
    assert sent.value.headers["authorization"] == f"Bearer {KEY}"
    assert page.pane("stdout") == TEMPLATES["python"].output
    page.tab.close()
    assert page.errors == []


def test_status_page_sums_the_workers_and_reads_as_a_summary(browser, keyed: Server) -> None:
    """Two workers, a slot each: the page tells the server's two slots (each worker's /health
    tells its own one), its runs per language, and names that do not break inside."""
    headers = {"Authorization": f"Bearer {KEY}"}
    for _ in range(2):
        done = httpx.post(f"{keyed.url}/run_code", headers=headers, timeout=120,
                          json={"code": "print(1)", "language": "python"})  # fmt: skip
        assert done.status_code == 200, done.text
    page = Page(browser, keyed)
    page.allowed = ("status of 401",)  # the browser's own /favicon.ico for /v1/ping, keyless
    page.tab.goto(f"{keyed.url}/v1/ping")  # this origin, for its sessionStorage
    page.tab.evaluate("key => sessionStorage.setItem('sandlot-api-key', key)", KEY)
    page.open("status")
    assert page.field("busy").endswith("of 2")
    assert page.field("workers") == "2"
    assert int(page.tab.inner_text("tr[data-language=python] [data-count=runs]")) >= 2
    assert page.field("refused") == "0" and page.field("server-errors") == "0"
    page.tab.set_viewport_size(NARROW)
    lines = page.tab.eval_on_selector_all(
        "tr[data-language] td:first-child code", "cs => cs.map(c => c.getClientRects().length)"
    )
    assert set(lines) == {1}, "a language's name breaks across lines"
    page.shot("status-workers-narrow")
    page.tab.close()
    assert page.errors == []
