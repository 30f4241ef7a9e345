"""The records of repository tasks: where a repository comes from, what a grade asks for,
and what a run and a grade give back (JSON-able by `to_dict`, as the HTTP API answers)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sandlot.repos import envs, grade
from sandlot.repos.owner import Owner
from sandlot.repos.reports import Verdicts
from sandlot.tenancy import LOCAL

AUTO = "auto"  # a setup or test command sandlot picks from the repository's ecosystems


@dataclass(slots=True)
class Repository:
    """Where a task's repository comes from: a path on this machine, or an upload."""

    path: str | None = None
    tarball: bytes | None = None
    owner: Owner | None = None  # git on `path` runs as this user (a server's request)


@dataclass(slots=True)
class RunResult:
    """One command over the repository (tests), in a box of its own."""

    exit_code: int | None
    signal: int | None
    limit: str | None
    wall_time: float
    stdout: bytes
    stderr: bytes
    verdicts: Verdicts
    reports: list[str]

    @property
    def passed(self) -> bool:
        return self.limit is None and self.exit_code == 0

    def to_dict(self, tail: int = envs.TAIL) -> dict[str, object]:
        return {
            "exit_code": self.exit_code, "signal": self.signal, "limit": self.limit,
            "wall_time": round(self.wall_time, 3), "stdout_tail": envs.tail(self.stdout, tail),
            "stderr_tail": envs.tail(self.stderr, tail), "reports": self.reports,
            "report_formats": sorted(self.verdicts.formats),
        }  # fmt: skip


@dataclass(slots=True)
class GradeTask:
    repository: Repository
    base: str
    patch: str = ""
    test_patch: str = ""
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    setup: str | None = AUTO  # None or "": no setup
    test: str | None = AUTO
    allow_test_changes: bool = False
    test_paths: list[str] = field(default_factory=list)  # globs beside the ecosystems'
    timeout: float | None = None
    owner: str = str(LOCAL)  # the tenant the environment belongs to


@dataclass(slots=True)
class GradeResult:
    resolved: bool
    status: str  # resolved, unresolved, patch_failed, setup_failed
    base: str
    message: str
    fail_to_pass: dict[str, str] = field(default_factory=dict)
    pass_to_pass: dict[str, str] = field(default_factory=dict)
    tests: dict[str, str] = field(default_factory=dict)
    tamper: grade.Tamper = field(default_factory=grade.Tamper)
    setup: envs.SetupResult | None = None
    run: RunResult | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "resolved": self.resolved, "status": self.status, "base": self.base,
            "message": self.message, "fail_to_pass": self.fail_to_pass,
            "pass_to_pass": self.pass_to_pass, "tests": self.tests,
            "tamper": self.tamper.to_dict(),
            "setup": self.setup.to_dict() if self.setup else None,
            "run": self.run.to_dict() if self.run else None, "seconds": round(self.seconds, 3),
        }  # fmt: skip
