"""Where `sandlot test` and `sandlot code` run a repository's tests: a jail in this process, or a
sandlot server's (`POST /repo_tests`, through sandlot's client). `run(root, cmd, timeout)` of
either is the coder's TestRunner."""

from __future__ import annotations

import asyncio
import base64
import tempfile
from pathlib import Path
from typing import Any

from sandlot import usecases
from sandlot.client import Client
from sandlot.coder import TestOutcome, collect_files
from sandlot.config import Config
from sandlot.errors import SandlotError, ServerError
from sandlot.service import Service


def _bundle(root: Path, base: str) -> tuple[str, str]:
    """The base's history as a git bundle (base64), and the base's hash: what a server gets."""
    from sandlot.repos import bundle_from_path

    with tempfile.TemporaryDirectory() as tmp:
        bundle, sha = bundle_from_path(root, base, Path(tmp), None)
        return base64.b64encode(bundle.read_bytes()).decode(), sha


class LocalSandbox:
    """A Service started in this process, with one event loop for its whole life, so that the
    executor's admission queue stays on one loop."""

    def __init__(self, config: Config) -> None:
        self.service = Service(config).start()
        self.loop = asyncio.new_event_loop()

    @property
    def problem(self) -> str | None:
        """Why this machine's jail cannot run anything, or None."""
        return self.service.problem

    def run(self, root: Path, cmd: str, timeout: float) -> TestOutcome:
        return self.loop.run_until_complete(usecases.repo_tests(self.service, root, cmd, timeout))

    def repo(self, kind: str, root: Path, fields: dict[str, Any]) -> dict[str, Any]:
        """A repository task (grade, setup, test) on the repository at `root`, in this process."""
        from sandlot.repos import Repository

        job = usecases.repo_task(self.service, kind, Repository(path=str(root)), fields)
        return self.loop.run_until_complete(job)

    def close(self) -> None:
        self.service.close()
        self.loop.close()

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RemoteSandbox:
    """A sandlot server's sandbox, for machines that cannot run the jail themselves (not root,
    no isolation)."""

    def __init__(self, url: str, max_bytes: int = 64 << 20) -> None:
        self.url = url.rstrip("/")
        self.max_bytes = max_bytes
        self.problem: str | None = None  # the server says its own problems, per request
        self.client = Client(url)

    def run(self, root: Path, cmd: str, timeout: float) -> TestOutcome:
        files = collect_files(root, self.max_bytes)
        try:
            return TestOutcome.from_dict(self.client.repo_tests(cmd, files, timeout))
        except ServerError as exc:
            if exc.status_code in (404, 405):
                raise SandlotError(
                    f"{self.url} is not a sandlot server (it has no /repo_tests)"
                ) from None
            raise SandlotError(
                f"the sandbox at {self.url} answered {exc.status_code}: {exc.detail}"
            ) from None

    def repo(self, kind: str, root: Path, fields: dict[str, Any]) -> dict[str, Any]:
        """The same on the server: the repository goes as a bundle of its base's history."""
        tarball, sha = _bundle(root, fields.pop("base"))
        try:
            return self.client.repo(kind, {**fields, "tarball": tarball, "base": sha})
        except ServerError as exc:
            raise SandlotError(f"the server at {self.url} answered {exc.status_code}: "
                               f"{exc.detail}") from None  # fmt: skip

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RemoteSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sandbox(url: str | None, config: Config) -> LocalSandbox | RemoteSandbox:
    """A sandlot server's when a URL is given, else a jail in this process."""
    return RemoteSandbox(url, config.max_files_bytes) if url else LocalSandbox(config)
