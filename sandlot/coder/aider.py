"""The Aider backend: one `aider --message-file` subprocess per attempt, headless and bounded.

What research/aider.md taught, applied here:
- aider exits 0 whatever happened (401, endpoint down, nothing applied), so the outcome comes
  from git and our own test run, and LLM failures from its output, watched while it runs;
- on a dead endpoint it retries for ~80 s; once an LLM error shows we give it `llm_grace`
  seconds to recover, then stop it, so failure is reported in bounded time;
- OPENAI_BASE_URL beats OPENAI_API_BASE inside the OpenAI client: both are set to one value;
- a fresh HOME per task: ~/.aider (analytics id, caches) and the user's own config stay out;
  the model-price cache is seeded so no run reaches for the internet;
- no auto-commits (we commit, deterministically, no extra LLM call), no .gitignore edits, no
  browser, no update check, no analytics, no shell commands suggested by the model.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandlot.repos import Owner, as_owner

# Output lines that mean the model could not be reached or refused us (litellm's exception
# names as aider prints them, and aider's own explanations of them).
LLM_ERROR = re.compile(
    r"litellm\.\w*(?:Error|Exception|Timeout)\b|"
    r"The API provider(?: is not able to authenticate you|'s servers are down)|"
    r"API provider .*(?:rate limit|not found)|Empty response received from LLM|"
    r"^Model .+ not found|No API key provided|Missing API key",
    re.MULTILINE,
)
# aider's own retry loop; only this starts the grace clock (a reply may quote an error name).
RETRYING = re.compile(r"^Retrying in [\d.]+ seconds", re.MULTILINE)
APPLIED = re.compile(r"^Applied edit to (.+)$", re.MULTILINE)
# Variables passed to aider from our environment: provider keys, endpoints, proxies, CA bundles.
PASS_ENV = re.compile(
    r"^(?:\w+_API_KEY|\w+_API_BASE|\w+_BASE_URL|\w+_API_VERSION|OPENAI_\w+|ANTHROPIC_\w+|"
    r"AZURE_\w+|(?:HTTPS?|NO|ALL)_PROXY|(?:https?|no|all)_proxy|SSL_CERT_\w+|REQUESTS_CA_BUNDLE)$"
)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
ENDPOINT_NAME = re.compile(r"_API_BASE$|_BASE_URL$")


@dataclass(frozen=True, slots=True)
class AiderOptions:
    executable: str
    model: str
    edit_format: str | None = None
    ask: bool = False
    stream: bool = False
    honour_config: bool = False  # read .aider.conf.yml (repo and home) like aider would
    timeout: float = 600.0  # wall-clock seconds per attempt
    llm_grace: float = 20.0  # seconds aider may keep retrying after an LLM error shows
    extra_args: tuple[str, ...] = ()
    owner: Owner | None = None  # who aider runs as (a server's task), else this process's user
    cancel: threading.Event | None = None  # set: aider is stopped at once (the task was cancelled)


@dataclass(slots=True)
class AiderRun:
    output: str
    returncode: int | None
    seconds: float
    timed_out: bool = False
    llm_error: str | None = None  # the first LLM error line seen
    stopped_for_llm: bool = False  # we ended it after `llm_grace`
    applied: list[str] = field(default_factory=list)


def model_env(source: dict[str, str] | None = None) -> dict[str, str]:
    """Keys and endpoints for aider, from the environment; the two OpenAI base names agree."""
    src = os.environ if source is None else source
    env = {k: v for k, v in src.items() if PASS_ENV.match(k) and v}
    base = env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_BASE")
    if base:
        env["OPENAI_BASE_URL"] = env["OPENAI_API_BASE"] = base
    return env


class Redactor:
    """Replaces secret values and endpoints in any text that leaves this module."""

    def __init__(self, env: dict[str, str]) -> None:
        pairs: list[tuple[str, str]] = []
        for name, value in env.items():
            if SECRET_NAME.search(name) and len(value) >= 4:
                pairs.append((value, f"[{name} redacted]"))
            elif ENDPOINT_NAME.search(name) and value:
                pairs.append((value.rstrip("/"), f"<{name}>"))
        self.pairs = sorted(set(pairs), key=lambda p: -len(p[0]))  # longest first

    def __call__(self, text: str) -> str:
        for value, mask in self.pairs:
            text = text.replace(value, mask)
        return text


def argv(opts: AiderOptions, work: Path, message_file: Path, files: list[str],
         read: list[str]) -> list[str]:  # fmt: skip
    args = [
        opts.executable, "--model", opts.model, "--message-file", str(message_file),
        "--yes-always", "--no-pretty", "--stream" if opts.stream else "--no-stream",
        "--no-fancy-input", "--no-check-update", "--no-show-release-notes",
        "--analytics-disable", "--no-show-model-warnings", "--no-gitignore",
        "--no-auto-commits", "--no-dirty-commits", "--no-auto-test",
        "--no-detect-urls", "--no-suggest-shell-commands", "--encoding", "utf-8",
        "--timeout", str(max(10, int(opts.timeout))),
        "--input-history-file", str(work / "input.history"),
        "--chat-history-file", str(work / "chat.history.md"),
    ]  # fmt: skip
    if opts.edit_format:
        args += ["--edit-format", opts.edit_format]
    if opts.ask:
        args += ["--chat-mode", "ask"]
    for name in read:
        args += ["--read", name]
    return [*args, *opts.extra_args, *files]


def environment(opts: AiderOptions, work: Path, keys: dict[str, str]) -> dict[str, str]:
    home = work / "home"
    cache = home / ".aider" / "caches"
    cache.mkdir(parents=True, exist_ok=True)
    # A non-empty price cache stops aider fetching litellm's price list from GitHub; litellm's
    # bundled copy (LITELLM_LOCAL_MODEL_COST_MAP) supplies the model facts instead.
    (cache / "model_prices_and_context_window.json").write_text(json.dumps({"_sandlot": {}}))
    if opts.honour_config:
        user_home = opts.owner.home if opts.owner is not None else os.path.expanduser("~")
        real = Path(user_home) / ".aider.conf.yml"
        if real.is_file():
            (home / ".aider.conf.yml").write_bytes(real.read_bytes())
    bindir = str(Path(opts.executable).parent)
    env = {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "PYTHONUNBUFFERED": "1",  # lines as they happen: LLM errors are caught while it runs
        "BROWSER": "/bin/true",  # aider offers to open URLs (docs, issues): open nothing
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "GIT_TERMINAL_PROMPT": "0",
        **keys,
    }
    if opts.honour_config:
        env.update({k: v for k, v in os.environ.items() if k.startswith("AIDER_")})
    return env


def run(opts: AiderOptions, cwd: Path, work: Path, message: str, files: list[str],
        read: list[str], keys: dict[str, str]) -> AiderRun:  # fmt: skip
    """One aider invocation in `cwd` (the worktree); `work` is a private scratch dir."""
    message_file = work / "message.txt"
    message_file.write_text(message)
    env = environment(opts, work, keys)
    if opts.owner is not None:
        opts.owner.give(work)  # its HOME, caches and histories are written by aider, as the owner
    started = time.monotonic()
    proc = subprocess.Popen(
        argv(opts, work, message_file, files, read), cwd=cwd, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: a timeout kills all of it
        **as_owner(opts.owner),
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=_drain, args=(proc, lines), daemon=True)
    reader.start()
    result = AiderRun("", None, 0.0)
    deadline = started + opts.timeout
    llm_deadline: float | None = None
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if llm_deadline is None and RETRYING.search(recent := "".join(lines[-50:])):
                m = LLM_ERROR.search(recent)
                result.llm_error = m.group(0) if m else "the model endpoint failed; aider retries"
                llm_deadline = now + opts.llm_grace
            if now >= deadline:
                result.timed_out = True
                break
            if llm_deadline is not None and now >= llm_deadline:
                result.stopped_for_llm = True
                break
            if opts.cancel is not None and opts.cancel.is_set():
                break
            time.sleep(0.1)
    finally:  # also on Ctrl-C: aider runs in its own session and would outlive us
        if proc.poll() is None:
            _kill(proc)
    reader.join(10)
    result.returncode = proc.returncode
    result.seconds = time.monotonic() - started
    result.output = "".join(lines)
    seen = dict.fromkeys(m.group(0) for m in LLM_ERROR.finditer(result.output))
    if seen:
        result.llm_error = "; ".join(seen)[:500]
    result.applied = [a.strip() for a in APPLIED.findall(result.output)]
    return result


def _drain(proc: subprocess.Popen[bytes], lines: list[str]) -> None:
    assert proc.stdout is not None
    for raw in proc.stdout:
        lines.append(raw.decode(errors="replace"))
        if len(lines) > 20000:  # a runaway log: keep the start and the recent end
            del lines[1000:11000]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5)
            return
        except subprocess.TimeoutExpired:
            continue


def answer_text(output: str) -> str:
    """The model's reply in ask mode: what aider printed after its start-up banner."""
    marker = re.search(r"^Added .+ to the chat\.?$", output, re.MULTILINE)
    body = output[marker.end() :] if marker else output
    body = re.sub(r"^Tokens: .*$", "", body, flags=re.MULTILINE)
    return body.strip()
