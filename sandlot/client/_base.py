"""What the sync and async clients share and that needs no I/O: request bodies, response
parsing, the retry policy and the servers' bookkeeping. The twins only send."""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import retry_if_exception, stop_after_attempt, wait_random_exponential

from sandlot.client._servers import Servers
from sandlot.errors import ServerError, Unreachable
from sandlot.wire import EvalResult, RunBatchResponse, RunCodeResponse

DEFAULT_URL = "http://127.0.0.1:8080"
API_KEY_ENV = "SANDLOT_API_KEY"
RETRY_STATUS = 504  # the server is full; verl and the SandboxFusion client retry it too
# Transport failures after which a request may go again, to another server when there is one:
# it never reached a server, or the server went away (a crash, a restart) before answering.
# A read timeout is not among them: the server may still be running the work.
GONE = (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ConnectTimeout)
QUEUE_GRACE = 120.0  # seconds a server may keep a long run queued, on top of its time limit
REPO_TIMEOUT = 3600.0  # a repository task: its setup (cold, up to 900 s by default) and its tests
BATCH_TIMEOUT = 3600.0  # seconds a /run_batch may take: thousands of cases over a few slots
Files = Mapping[str, bytes | str]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """`attempts` in all; before the n-th retry a wait drawn uniformly from
    [0, min(initial * 2**(n-1), max_wait)] seconds ("full jitter"), so that many clients told
    "full" at once do not come back at once. Only 504s and lost connections are retried."""

    attempts: int = 6
    initial: float = 0.1
    max_wait: float = 5.0

    def options(self) -> dict[str, Any]:
        """Keyword arguments for tenacity's Retrying and AsyncRetrying (the same policy)."""
        return {
            "stop": stop_after_attempt(max(1, self.attempts)),
            "wait": wait_random_exponential(multiplier=self.initial, max=self.max_wait),
            "retry": retry_if_exception(retryable),
            "reraise": True,
        }


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The header that carries the server's API key: `api_key`, else $SANDLOT_API_KEY, else none
    (a server without keys ignores it)."""
    key = api_key or os.environ.get(API_KEY_ENV)
    return {"Authorization": f"Bearer {key}"} if key else {}


def retryable(exc: BaseException) -> bool:
    if isinstance(exc, ServerError):
        return exc.status_code == RETRY_STATUS
    return isinstance(exc, Unreachable) and isinstance(exc.__cause__, GONE)


class BaseClient:
    def __init__(self, url: str | Sequence[str], retry: RetryPolicy, cooldown: float) -> None:
        self.servers = Servers([url] if isinstance(url, str) else list(url), cooldown)
        self.retry = retry

    @property
    def url(self) -> str:
        """The first server's URL."""
        return self.servers.urls[0]

    def _failed(self, url: str, exc: httpx.TransportError) -> Unreachable:
        if isinstance(exc, GONE):
            self.servers.down(url)
        return Unreachable(f"cannot reach {url}: {type(exc).__name__}: {exc}")

    def _parse(self, url: str, response: httpx.Response) -> Any:
        self.servers.up(url)
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except (ValueError, AttributeError):
                detail = response.text
            raise ServerError(response.status_code, str(detail), url)
        return response.json()

    @staticmethod
    def _timeout(timeout: float | None) -> Any:
        return httpx.USE_CLIENT_DEFAULT if timeout is None else timeout

    @staticmethod
    def _files(files: Files) -> dict[str, str]:
        return {
            name: base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
            for name, data in files.items()
        }

    def _run_body(self, code: str, language: str, fields: dict[str, Any]) -> dict[str, Any]:
        files = fields.pop("files", None)
        if files:
            fields["files"] = self._files(files)
        return {"code": code, "language": language,
                **{k: v for k, v in fields.items() if v is not None}}  # fmt: skip

    @staticmethod
    def _submit_body(dataset: str, id: int | str, completion: str,
                     config: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
        return {"dataset": dataset, "id": id, "completion": completion,
                "config": {k: v for k, v in config.items() if v is not None}}  # fmt: skip

    @staticmethod
    def _ids_body(dataset: str, config: dict[str, Any]) -> dict[str, Any]:
        return {"dataset": dataset, "config": {k: v for k, v in config.items() if v is not None}}

    def _repo_tests_body(self, cmd: str, files: Files, timeout: float) -> dict[str, Any]:
        return {"cmd": cmd, "timeout": timeout, "files": self._files(files)}

    def _jupyter_body(
        self, cells: list[str], files: Files | None, fields: dict[str, Any]
    ) -> dict[str, Any]:
        body = {"cells": cells, **{k: v for k, v in fields.items() if v is not None}}
        if files:
            body["files"] = self._files(files)
        return body

    @staticmethod
    def _batch_body(items: Sequence[dict[str, Any]], stop: bool) -> dict[str, Any]:
        return {"items": list(items), "stop_on_first_failure": stop}

    @staticmethod
    def _batch_result(data: Any) -> RunBatchResponse:
        return RunBatchResponse.model_validate(data)

    @staticmethod
    def _run_result(data: Any) -> RunCodeResponse:
        return RunCodeResponse.model_validate(data)

    @staticmethod
    def _eval_result(data: Any) -> EvalResult:
        return EvalResult.model_validate(data)
