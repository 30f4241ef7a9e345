"""A repository task's request from the wire's shapes: the repository it names and the fields of
a grade."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandlot import usecases
from sandlot.convert.run import decode_base64

if TYPE_CHECKING:
    from sandlot.repos import Repository
    from sandlot.service import Service
    from sandlot.tenancy import Tenant
    from sandlot.wire import GradeRequest, RepoSource


def repository(service: Service, req: RepoSource) -> Repository:
    """The repository a request names: a path under the server's policy, or its tarball."""
    tarball = decode_base64(req.tarball, "tarball") if req.tarball is not None else None
    return usecases.served_repo(service, req.repo, tarball)


def grade_fields(req: GradeRequest, tenant: Tenant) -> dict[str, Any]:
    """What a grade of `req` asks for, for `tenant`."""
    return {
        "base": req.base, "patch": req.patch, "test_patch": req.test_patch,
        "fail_to_pass": req.fail_to_pass, "pass_to_pass": req.pass_to_pass, "setup": req.setup,
        "test": req.test, "allow_test_changes": req.allow_test_changes,
        "test_paths": req.test_paths, "timeout": req.timeout, "owner": str(tenant),
    }  # fmt: skip
