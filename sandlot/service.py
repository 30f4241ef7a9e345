"""The application object: config, jail, languages, executor, judge and coder jobs, built and torn
down in one place.

The HTTP API, the CLI and the tests all drive this object; none of them builds the parts itself.
The judge, sessions and coder jobs are imported when first used: `sandlot run` needs none of
them, and importing them costs more than its run.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sandlot.config import Config
from sandlot.errors import JailUnavailable, SandlotError
from sandlot.executor import PY_PRELUDES, Executor
from sandlot.jail import Jail, JailConfig, allowed_cpus, describe_cpu_sets, resolve_cpu_sets
from sandlot.languages import LANGUAGES, Registry

if TYPE_CHECKING:
    from sandlot.coder import CoderJobs
    from sandlot.judge import Judge
    from sandlot.repos import Repos
    from sandlot.sessions import SessionManager


@dataclass(slots=True)
class Health:
    ready: bool
    problem: str | None
    slots: int
    busy: int
    queued: int
    cgroup_version: int
    draining: bool
    worker: int
    workers: int
    pid: int
    cgroup: dict[str, object]  # version, controllers, swap, memory peak, delegation
    slot_cpus: str  # the CPUs each slot is kept to (placement.describe_cpu_sets), or "none"


class Service:
    def __init__(self, config: Config | None = None, worker: int = 0, workers: int = 1) -> None:
        """`worker` of `workers`: which server process this is (its config holds its share of
        the slots, see `sandlot.api.server`)."""
        self.config = config or Config.load()
        self.worker, self.workers = worker, workers
        self.draining = False  # SIGTERM came: finish what runs, take nothing new
        self.registry = Registry(LANGUAGES, self.config.runtime_dir)
        self.jail: Jail | None = None
        self.executor: Executor | None = None
        self.sessions: SessionManager | None = None
        self.problem: str | None = None
        self.sessions_problem: str | None = None
        self._coder: CoderJobs | None = None
        self._judge: Judge | None = None
        self._repos: Repos | None = None

    @property
    def started(self) -> bool:
        """Whether `start` has run: the jail is up, or why it is not is known."""
        return self.jail is not None or self.problem is not None

    @property
    def coder(self) -> CoderJobs:
        """The AI-coding route's jobs, built once, on first use."""
        if self._coder is None:
            from sandlot.coder import CoderJobs

            self._coder = CoderJobs(self.config, self.require_executor, lambda: self.repos)
        return self._coder

    @property
    def repos(self) -> Repos:
        """Repository tasks (setup, environments, grading), built once, on first use."""
        if self._repos is None:
            from sandlot.repos import Repos

            self._repos = Repos(self.config, self.require_executor, self.registry)
        return self._repos

    @property
    def judge(self) -> Judge:
        """The online judge, built once, on first use (the registry is probed at start-up)."""
        if self._judge is None:
            from sandlot.judge import Datasets, Judge

            datasets = Datasets(self.registry, self.config.dataset_dir or None)
            self._judge = Judge(datasets, self.require_executor)
        return self._judge

    def start(self) -> Service:
        """Set the jail up; on failure remember why and refuse runs (never run with less)."""
        cfg = self.config
        self.registry.probe()
        jail = Jail(
            JailConfig(
                slots=cfg.slots,
                uid_base=cfg.uid_base,
                bwrap=cfg.bwrap,
                boxes=cfg.boxes,
                reuse_netns=cfg.reuse_netns,
                cpu_sets=resolve_cpu_sets(cfg.slot_cpus, cfg.slots, allowed_cpus()),
                zygote_python=self._zygote_python(),
                warm_preludes=PY_PRELUDES,
                etc_entries=self.registry.etc_entries(),
                state_dir=cfg.state_dir,
                disk=cfg.disk_bytes,
                tmp_size=cfg.tmp_bytes,
                shm_size=cfg.tmp_bytes,
            )
        )
        try:
            jail.start()
        except JailUnavailable as exc:
            self.problem = str(exc)
            return self
        self.jail = jail
        self.executor = Executor(cfg, jail, self.registry)
        return self

    def _zygote_python(self) -> str:
        """The sandbox runtime's interpreter, so that warm Python runs in the zygote itself; the
        server's own when that runtime is missing (the zygote then only builds boxes)."""
        for row in LANGUAGES:
            if row.warm:
                path = row.argv(row.run, self.config.runtime_dir, 0)[0]
                if os.access(path, os.X_OK):
                    return path
        return sys.executable

    async def open_sessions(self) -> None:
        """Sessions and notebooks (they need the event loop: the pool fills in the background);
        without them every other route still works, and their routes say why not."""
        if self.jail is None:
            self.sessions_problem = self.problem
            return
        from sandlot.sessions import SessionManager

        try:
            self.sessions = await SessionManager(
                self.config, self.jail, self.registry, self.worker, self.workers
            ).start()
        except JailUnavailable as exc:
            self.sessions_problem = str(exc)

    async def close_sessions(self) -> None:
        if self.sessions is not None:
            await self.sessions.close()
            self.sessions = None

    def session_status(self) -> dict[str, object]:
        """Live sessions, kernels ready in the pool, and why sessions are off if they are: of
        this process, which with several workers holds its share (`scope`)."""
        m = self.sessions
        return {
            "scope": "worker" if self.workers > 1 else "server",
            "available": m is not None,
            "problem": self.sessions_problem if m is None else m.pool.problem,
            "live": len(m.sessions) if m else 0,
            "max": self.config.session_max,
            "paused": len(m.paused) if m else 0,
            "paused_max": self.config.session_paused_max,
            "pool_ready": m.pool.ready if m else 0,
            "pool_size": self.config.session_pool,
            "snapshots": {
                "available": m is not None and m.forks is not None,
                "problem": m.snapshots_problem if m else self.sessions_problem,
                "pause_after": self.config.session_pause_after,
            },
        }

    def repos_status(self) -> dict[str, object]:
        """Whether repository tasks can run here, and why not: the jail, and the egress proxy
        their setups reach the registries through."""
        try:
            repos = self.repos
        except SandlotError as exc:  # a setting they need is wrong (egress_allow)
            return {"available": False, "problem": str(exc)}
        problem = self.problem or repos.egress.problem()
        return {
            "available": problem is None, "problem": problem, "store": str(repos.store.root),
            "egress": f"squid on 127.0.0.1:{repos.egress.port}" if repos.egress.port else "idle",
            "allow": list(repos.allow),
        }  # fmt: skip

    def require_sessions(self) -> SessionManager:
        if self.sessions is None:
            raise JailUnavailable(f"sessions are not available: {self.sessions_problem}")
        return self.sessions

    def close(self) -> None:
        if self._repos is not None:
            self._repos.close()  # its egress proxy
        self.executor = None
        if self.jail is not None:
            self.jail.close()
            self.jail = None

    def require_executor(self) -> Executor:
        if self.executor is None:
            raise JailUnavailable(
                f"isolation is not available, so this server runs no code: {self.problem}"
            )
        return self.executor

    def health(self) -> Health:
        adm = self.executor.admission if self.executor else None
        slot_problem = self.jail.problem if self.jail else None
        return Health(
            ready=self.executor is not None and slot_problem is None,
            problem=self.problem or slot_problem,
            slots=self.config.slots,
            busy=adm.busy if adm else 0,
            queued=adm.waiting if adm else 0,
            cgroup_version=self.jail.cgroup_version if self.jail else 0,
            draining=self.draining,
            worker=self.worker,
            workers=self.workers,
            pid=os.getpid(),
            cgroup=self.jail.cgroup_info if self.jail else {},
            slot_cpus=describe_cpu_sets(self.jail.config.cpu_sets) if self.jail else "none",
        )

    def languages(self) -> list[dict[str, Any]]:
        out = []
        for row in self.registry.rows.values():
            status = self.registry.available(row.name)
            out.append(
                {
                    "name": row.name,
                    "aliases": list(row.aliases),
                    "available": status.available,
                    "version": status.version,
                    "reason": status.reason,
                    "compiled": row.compile is not None,
                    "test_cases": ["stdin", "expression"] if row.harness else ["stdin"],
                    "summary": row.summary,
                    # Package sets fetched from a language registry at set-up, and whether
                    # Debian's packages stand in for them (an unreachable registry).
                    "packages": self.registry.packages(row.name),
                }
            )
        return out
