"""Python client for a sandlot server (or any SandboxFusion-compatible one), sync and async.

    from sandlot.client import Client
    with Client("http://127.0.0.1:8080") as sb:
        result = sb.run_code("print(1)", "python")
        print(result.status, result.run_result.stdout)

Both classes accept an httpx transport, so tests can aim them at the ASGI app with no socket.
504 answers (the server is full) are retried with backoff; other errors raise ServerError.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import httpx

from sandlot.api.models import RunCodeResponse
from sandlot.errors import SandlotError

DEFAULT_URL = "http://127.0.0.1:8080"
RETRY_STATUS = 504


class ServerError(SandlotError):
    """The server answered with an error status; `status_code` and the server's detail are kept."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(f"HTTP {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail


class _Base:
    def __init__(self, retries: int) -> None:
        self.retries = retries

    @staticmethod
    def _run_body(code: str, language: str, **fields: Any) -> dict[str, Any]:
        files = fields.pop("files", None)
        if files:
            fields["files"] = {
                name: base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
                for name, data in files.items()
            }
        return {
            "code": code,
            "language": language,
            **{k: v for k, v in fields.items() if v is not None},
        }

    @staticmethod
    def _parse(response: httpx.Response) -> Any:
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise ServerError(response.status_code, str(detail))
        return response.json()

    def _backoff(self, attempt: int) -> float:
        return min(0.1 * 2**attempt, 5.0)


class Client(_Base):
    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        timeout: float = 300,
        retries: int = 5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(retries)
        self._http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout, transport=transport)

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        for attempt in range(self.retries + 1):
            response = self._http.request(method, path, json=body)
            if response.status_code != RETRY_STATUS or attempt == self.retries:
                return self._parse(response)
            time.sleep(self._backoff(attempt))
        raise AssertionError("unreachable")

    def run_code(self, code: str, language: str, **fields: Any) -> RunCodeResponse:
        """Run code; fields are /run_code's (stdin, run_timeout, files as bytes or str, ...)."""
        body = self._run_body(code, language, **fields)
        return RunCodeResponse.model_validate(self._request("POST", "/run_code", body))

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


class AsyncClient(_Base):
    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        timeout: float = 300,
        retries: int = 5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(retries)
        self._http = httpx.AsyncClient(
            base_url=url.rstrip("/"), timeout=timeout, transport=transport
        )

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        for attempt in range(self.retries + 1):
            response = await self._http.request(method, path, json=body)
            if response.status_code != RETRY_STATUS or attempt == self.retries:
                return self._parse(response)
            await asyncio.sleep(self._backoff(attempt))
        raise AssertionError("unreachable")

    async def run_code(self, code: str, language: str, **fields: Any) -> RunCodeResponse:
        body = self._run_body(code, language, **fields)
        return RunCodeResponse.model_validate(await self._request("POST", "/run_code", body))

    async def languages(self) -> list[dict[str, Any]]:
        return await self._request("GET", "/languages")

    async def health(self) -> dict[str, Any]:
        return await self._request("GET", "/health")

    async def ping(self) -> bool:
        return await self._request("GET", "/v1/ping") == "pong"

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
