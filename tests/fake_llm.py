"""A scripted, recording fake of an OpenAI-compatible chat-completions server, on 127.0.0.1.

Tests queue what the model "says" next; every request is recorded so a test can assert on the
prompts, the model name and the auth header. Replies are served plain or as SSE chunks, whichever
the client asked for. Requests that are not the main conversation (Aider's commit-message and
history-summary prompts) get a harmless canned answer and do not consume the script.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIDE_PROMPTS = ("commit message", "summariz", "summaris")


@dataclass(frozen=True, slots=True)
class Reply:
    """The assistant's text; `delay` seconds pass before the answer starts."""

    text: str
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Fail:
    """An HTTP error in OpenAI's error shape (401 bad key, 429, 500, ...)."""

    status: int
    message: str = "error"
    code: str = "error"


@dataclass(slots=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def last_user(self) -> str:
        users = [m for m in self.body.get("messages", []) if m.get("role") == "user"]
        return _text(users[-1]) if users else ""

    @property
    def side(self) -> bool:
        system = " ".join(
            _text(m) for m in self.body.get("messages", []) if m.get("role") == "system"
        )
        return any(word in system.lower() for word in SIDE_PROMPTS)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # the multi-part form
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


@dataclass(slots=True)
class FakeLLM:
    url: str = ""
    script: list[Reply | Fail] = field(default_factory=list)
    default: Reply | Fail | None = None  # served when the script is empty
    requests: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base(self) -> str:
        return self.url + "/v1"

    def queue(self, *items: Reply | Fail) -> None:
        with self.lock:
            self.script.extend(items)

    def main_requests(self) -> list[Seen]:
        return [r for r in self.requests if r.path.endswith("/chat/completions") and not r.side]

    def next_for(self, seen: Seen) -> Reply | Fail:
        with self.lock:
            self.requests.append(seen)
            if seen.side:
                return Reply("Update code")
            if self.script:
                return self.script.pop(0)
        return self.default or Fail(500, "the fake model's script is exhausted")


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def _json(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "fake-coder"}]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = {}
            seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            if not self.path.endswith("/chat/completions"):
                fake.requests.append(seen)
                self._json(404, {"error": {"message": "not found"}})
                return
            answer = fake.next_for(seen)
            if isinstance(answer, Fail):
                error = {"message": answer.message, "type": answer.code, "code": answer.code}
                self._json(answer.status, {"error": error})
                return
            time.sleep(answer.delay)
            model = str(body.get("model", "fake-coder"))
            if body.get("stream"):
                self._stream(model, answer.text)
            else:
                self._json(200, _completion(model, answer.text))

        def _stream(self, model: str, text: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            pieces = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
            chunks = [_chunk(model, {"role": "assistant", "content": ""}, None)]
            chunks += [_chunk(model, {"content": p}, None) for p in pieces]
            chunks.append(_chunk(model, {}, "stop"))
            final = _chunk(model, {}, None)
            final["choices"] = []
            final["usage"] = _usage(text)
            chunks.append(final)
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _usage(text: str) -> dict[str, int]:
    out = max(1, len(text) // 4)
    return {"prompt_tokens": 100, "completion_tokens": out, "total_tokens": 100 + out}


def _completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(text),
    }


def _chunk(model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@contextmanager
def serve() -> Iterator[FakeLLM]:
    """Run a FakeLLM on an ephemeral port for the duration of the block."""
    fake = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def whole_file(path: str, content: str) -> str:
    """A reply in Aider's `whole` edit format: the path, then the full new file fenced."""
    return f"Here is the change.\n\n{path}\n```python\n{content}```\n"
