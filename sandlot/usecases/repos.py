"""Repository tasks (`/repo/grade`, `/repo/setup`, `/repo/test`, `sandlot grade`) and the
tenant's cached environments (`/repo/envs`).

A repository a server's client names goes through the server's policy (`served_repo`); the
task's answer has one shape whatever face asked (sandlot/repos/tasks.py `by_kind`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandlot.repos import Repository
    from sandlot.service import Service
    from sandlot.tenancy import Tenant


def served_repo(service: Service, path: str | None, tarball: bytes | None) -> Repository:
    """The repository a client names, by a path under `coder_roots` or as an upload."""
    return service.repos.served(path, tarball)


async def repo_task(
    service: Service, kind: str, repository: Repository, fields: dict[str, Any]
) -> dict[str, Any]:
    """A repository task by name ("grade", "setup", "test") with a request's fields, answered as
    the HTTP API answers it."""
    from sandlot.repos import by_kind

    return await by_kind(service.repos, kind, repository, fields)


def repo_envs(service: Service, tenant: Tenant) -> list[dict[str, object]]:
    """The tenant's cached environments, with their size and last use."""
    return service.repos.entries(str(tenant))


def remove_repo_env(service: Service, key: str, tenant: Tenant) -> bool:
    """Remove one of the tenant's cached environments; False if a run holds it."""
    return service.repos.remove(key, str(tenant))
