"""HTTP routes of repository tasks: POST /repo/grade, /repo/setup and /repo/test, GET
/repo/envs and DELETE /repo/envs/{key}.

Thin: validate, call the use cases (sandlot/usecases/repos.py), shape the answer. HTTP 200
whatever the tests say; `resolved`, `status` and `message` tell.
"""

from __future__ import annotations

from fastapi import APIRouter

from sandlot import convert, usecases
from sandlot.api.deps import ServiceDep, TenantDep
from sandlot.api.errors import responses
from sandlot.wire import GradeRequest, SetupRequest, TestRequest

router = APIRouter(tags=["repositories"])
REPO = responses(400, 403, 404, 413, 503, 504)


@router.post("/repo/grade", responses=REPO)
async def grade(req: GradeRequest, service: ServiceDep, tenant: TenantDep) -> dict[str, object]:
    """A candidate patch graded SWE-bench style: its tests restored, per-test verdicts,
    `resolved`, and the test files it touched."""
    return await usecases.repo_task(
        service, "grade", convert.repository(service, req), convert.grade_fields(req, tenant)
    )


@router.post("/repo/setup", responses=REPO)
async def setup(req: SetupRequest, service: ServiceDep, tenant: TenantDep) -> dict[str, object]:
    """The repository's environment at `base`: set up now, or found cached."""
    fields = {"base": req.base, "setup": req.setup, "owner": str(tenant)}
    return await usecases.repo_task(service, "setup", convert.repository(service, req), fields)


@router.post("/repo/test", responses=REPO)
async def test(req: TestRequest, service: ServiceDep, tenant: TenantDep) -> dict[str, object]:
    """A test command over the base (with `patch` applied) on its environment, no network."""
    fields = {"base": req.base, "setup": req.setup, "test": req.test, "patch": req.patch,
              "timeout": req.timeout, "owner": str(tenant)}  # fmt: skip
    return await usecases.repo_task(service, "test", convert.repository(service, req), fields)


@router.get("/repo/envs")
async def envs(service: ServiceDep, tenant: TenantDep) -> dict[str, object]:
    """The tenant's cached environments, with their size and last use."""
    entries = usecases.repo_envs(service, tenant)
    return {"entries": entries, "quota": service.config.repo_env_quota}


@router.delete("/repo/envs/{key}", responses=responses(400, 404))
async def remove(key: str, service: ServiceDep, tenant: TenantDep) -> dict[str, object]:
    """Remove one of the tenant's cached environments that no run holds."""
    return {"removed": usecases.remove_repo_env(service, key, tenant), "key": key}
