"""The blocking client. Its twin in `_async.py` has the same methods, awaitable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from tenacity import Retrying

from sandlot.client._base import (
    BATCH_TIMEOUT,
    DEFAULT_URL,
    QUEUE_GRACE,
    REPO_TIMEOUT,
    BaseClient,
    Files,
    RetryPolicy,
    auth_headers,
)
from sandlot.client._sessions import Session, Snapshot, _Base
from sandlot.wire import (
    EvalResult,
    RunBatchResponse,
    RunCodeResponse,
    RunJupyterResponse,
    SnapshotInfo,
)


class Client(BaseClient):
    def __init__(
        self,
        url: str | Sequence[str] = DEFAULT_URL,
        *,
        timeout: float = 300,
        retries: int = 5,
        retry: RetryPolicy | None = None,
        cooldown: float = 5.0,
        api_key: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(url, retry or RetryPolicy(attempts=retries + 1), cooldown)
        self._http = httpx.Client(
            timeout=timeout, transport=transport, headers=auth_headers(api_key)
        )

    def _request(
        self, method: str, path: str, body: Any = None, timeout: float | None = None
    ) -> Any:
        for attempt in Retrying(**self.retry.options()):
            with attempt, self.servers.lease() as url:
                try:
                    response = self._http.request(
                        method, url + path, json=body, timeout=self._timeout(timeout)
                    )
                except httpx.TransportError as exc:
                    raise self._failed(url, exc) from exc
                return self._parse(url, response)
        raise AssertionError("unreachable")

    def run_code(self, code: str, language: str, **fields: Any) -> RunCodeResponse:
        """Run code; fields are /run_code's (stdin, run_timeout, files as bytes or str, ...)."""
        body = self._run_body(code, language, fields)
        return self._run_result(self._request("POST", "/run_code", body))

    def run_batch(
        self,
        items: Sequence[dict[str, Any]],
        stop_on_first_failure: bool = False,
        timeout: float = BATCH_TIMEOUT,
    ) -> RunBatchResponse:
        """Score many programs with their tests in one request (POST /run_batch); items are
        /run_batch's (id, code or completion, language, test_cases, ground_truth, asserts)."""
        body = self._batch_body(items, stop_on_first_failure)
        return self._batch_result(self._request("POST", "/run_batch", body, timeout=timeout))

    def submit(self, dataset: str, id: int | str, completion: str, **config: Any) -> EvalResult:
        """Judge one completion; config is /submit's (language, run_timeout, extra, ...)."""
        body = self._submit_body(dataset, id, completion, config)
        return self._eval_result(self._request("POST", "/submit", body))

    def list_ids(self, dataset: str, **config: Any) -> list[int | str]:
        """Every problem id of a dataset (POST /list_ids); config as /submit's."""
        return self._request("POST", "/list_ids", self._ids_body(dataset, config))

    def repo_tests(self, cmd: str, files: Files, timeout: float) -> dict[str, Any]:
        """A test command over a repository's files, in a box on the server."""
        body = self._repo_tests_body(cmd, files, timeout)
        return self._request("POST", "/repo_tests", body, timeout=timeout + QUEUE_GRACE)

    def repo(
        self, path: str, body: dict[str, Any], timeout: float = REPO_TIMEOUT
    ) -> dict[str, Any]:
        """A repository task on the server: `path` is "grade", "setup" or "test" (POST
        /repo/PATH, fields as its schema says: tarball, base, patch, FAIL_TO_PASS, ...)."""
        return self._request("POST", f"/repo/{path}", body, timeout=timeout)

    def run_jupyter(
        self, cells: list[str], *, files: Files | None = None, **fields: Any
    ) -> RunJupyterResponse:
        """Cells in one fresh kernel; fields are /run_jupyter's (cell_timeout, ...)."""
        body = self._jupyter_body(cells, files, fields)
        total = float(fields.get("total_timeout") or 45)
        data = self._request("POST", "/run_jupyter", body, timeout=total + QUEUE_GRACE)
        return RunJupyterResponse.model_validate(data)

    def session(
        self, language: str = "python", *, files: Files | None = None, **fields: Any
    ) -> Session:
        """A new session, on one server (the least busy) for its whole life; a context manager
        that deletes it. Fields are
        POST /sessions' (idle_timeout, lifetime, memory_limit_MB)."""
        with self.servers.lease() as url:
            return Session.create(self._http, url, language, files, **fields)

    def from_snapshot(
        self, snapshot: Snapshot | str, *, url: str | None = None, files: Files | None = None,
        **fields: Any,
    ) -> Session:  # fmt: skip
        """A new session with a snapshot's state, on the server that holds the snapshot (a
        `Snapshot` knows it; for an id, `url`, or the only server). Fields are POST /sessions'
        (idle_timeout, lifetime, memory_limit_MB)."""
        sid = snapshot.id if isinstance(snapshot, Snapshot) else snapshot
        where = snapshot.url if isinstance(snapshot, Snapshot) else url or self.servers.only()
        return Session.create(self._http, where, None, files, snapshot=sid, **fields)

    def snapshots(self, url: str | None = None) -> list[Snapshot]:
        """This API key's snapshots on a server (`url`, or the only one)."""
        where = url or self.servers.only()
        data = _Base._check(self._http.get(f"{where}/snapshots")).json()
        return [Snapshot(i["id"], where, SnapshotInfo.model_validate(i)) for i in data]

    def delete_snapshot(self, snapshot: Snapshot | str, *, url: str | None = None) -> None:
        """Delete it; its layers go once no snapshot or session uses them."""
        sid = snapshot.id if isinstance(snapshot, Snapshot) else snapshot
        where = snapshot.url if isinstance(snapshot, Snapshot) else url or self.servers.only()
        _Base._check(self._http.delete(f"{where}/snapshots/{sid}"))

    def languages(self) -> list[dict[str, Any]]:
        return self._request("GET", "/languages")

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/health")

    def ping(self) -> bool:
        return self._request("GET", "/v1/ping") == "pong"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
