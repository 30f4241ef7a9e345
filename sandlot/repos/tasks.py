"""The use cases of repository tasks, for the HTTP API, the CLI, the coder and MCP alike:
open a repository at its base, set its environment up (cached), run a command over it with a
patch, and grade a candidate patch. Faces only convert; every rule is here or below.

Blocking work (git, mounts, copying a layer) runs in threads; boxes go through the executor's
admission like any run, so repository work queues with everything else and answers 504 alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from sandlot.config import Config
from sandlot.errors import InvalidRequest, JailError, NotFound
from sandlot.executor import Executor
from sandlot.jail import Limits, Outcome, RunSpec
from sandlot.languages import Registry
from sandlot.repos import ecosystems, envs, grade, layers, source
from sandlot.repos.boxes import repo_spec
from sandlot.repos.ecosystems import REPORT_DIR, Ecosystem
from sandlot.repos.egress import Egress, allow_list
from sandlot.repos.owner import Owner, confined
from sandlot.repos.records import AUTO, GradeResult, GradeTask, Repository, RunResult
from sandlot.repos.reports import parse_all
from sandlot.repos.store import Store
from sandlot.tenancy import LOCAL

UNPACK_TIMEOUT = 300.0
APPLY_TIMEOUT = 120.0
T = TypeVar("T")


class Repos:
    def __init__(
        self, config: Config, executor: Callable[[], Executor], registry: Registry
    ) -> None:
        self.config = config
        self._executor = executor
        self.registry = registry
        self.store = Store(config.repo_dir, config.repo_env_quota)
        self.allow = allow_list(config.egress_allow)
        self.egress = Egress(Path(config.state_dir) / f"egress-{os.getpid()}", self.allow)
        self._ready = False

    def _prepare(self) -> None:
        if not self._ready:
            self.store.setup()
            layers.clean_runs(self.store.root / "runs")
            self.runs.mkdir(mode=0o700, exist_ok=True)
            self._ready = True

    def close(self) -> None:
        self.egress.close()

    @property
    def runs(self) -> Path:
        """This process's runs (`clean_runs` leaves a live process's alone)."""
        return self.store.root / "runs" / str(os.getpid())

    def served(self, path: str | None, tarball: bytes | None) -> Repository:
        """A repository a server's client names, under the server's policy: a path only under
        `coder_roots`, read by git as its owner (never root); an upload as it is."""
        if path is None:
            return Repository(tarball=tarball)
        real = confined(self.config, path, "grading")
        return Repository(path=str(real), owner=Owner.of(real))

    # -- the repository at its base -----------------------------------------------------------

    @contextlib.asynccontextmanager
    async def opened(self, repo: Repository, base: str) -> AsyncIterator[source.Source]:
        """The repository at `base`: its checkout, made once and held while the block runs."""
        await asyncio.to_thread(self._prepare)
        source.check_rev(base)
        if repo.tarball is not None:
            async with self._unpacked(repo.tarball, base) as (bundle, sha):
                await asyncio.to_thread(self._make_checkout, bundle, sha)
            identity = None
        elif repo.path is not None:
            root = Path(repo.path)
            if not (root / ".git").exists() and not (root / "HEAD").is_file():
                raise InvalidRequest(f"{repo.path} is not a git repository")
            sha = await asyncio.to_thread(self._checkout_from_path, root, base, repo.owner)
            identity = f"path:{os.path.realpath(root)}"
        else:
            raise InvalidRequest("give the repository: a path on the server, or a tarball")
        async with _held(self.store.use("checkouts", sha)) as entry:
            if entry is None:
                raise JailError(f"the checkout of {sha} went before it could be used")
            tree = self.store.path("checkouts", sha) / "tree"
            if identity is None:
                roots = await asyncio.to_thread(source.root_commits, tree)
                identity = "roots:" + ",".join(roots)
            yield source.Source(identity, sha, tree)

    def _checkout_from_path(self, root: Path, base: str, owner: Owner | None) -> str:
        known = source.resolve(root, base, owner)
        if known is not None and self.store.get("checkouts", known) is not None:
            return known  # made before: a commit's hash names its whole history
        # Outside the store, which only root may reach: git makes the bundle as the owner.
        with tempfile.TemporaryDirectory(prefix="sandlot-bundle-") as tmp:
            bundle, sha = source.bundle_from_path(root, base, Path(tmp), owner)
            self._make_checkout(bundle, sha)
        return sha

    def _make_checkout(self, bundle: Path, sha: str) -> None:
        if self.store.get("checkouts", sha) is not None:
            return
        with self.store.making("checkouts", sha) as made:
            if made is None:
                return
            tree = made / "tree"
            source.checkout(bundle, sha, tree)
            layers.open_up(tree)
            size = layers.disk_usage(tree)
            self.store.commit("checkouts", sha, made, size, {"base": sha})

    @contextlib.asynccontextmanager
    async def _unpacked(self, tarball: bytes, base: str) -> AsyncIterator[tuple[Path, str]]:
        """An upload opened in a box (no network): its base as a bundle, and the base's hash."""
        if len(tarball) > self.config.max_files_bytes:
            raise InvalidRequest(
                f"the tarball is larger than the {self.config.max_files_bytes >> 20} MiB "
                "the server takes (max_files_bytes)"
            )
        size = self.config.repo_env_bytes
        with layers.run_dir(self.runs, size) as rd:
            rd.scratch.chmod(0o777)
            spec = repo_spec(
                self.config, self.registry, (), source.UNPACK, str(rd.scratch),
                self._limits(UNPACK_TIMEOUT, self.config.memory_mb << 20, size),
                files={"upload": tarball}, env={"BASE": base},
            )  # fmt: skip
            out = await self._box(spec, "unpack")
            sha = out.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
            if out.exit_code != 0 or not source.SHA.match(sha[0]):
                why = envs.tail(out.stderr, 2000).strip() or f"exit status {out.exit_code}"
                raise InvalidRequest(f"cannot open the uploaded repository at {base!r}: {why}")
            yield rd.scratch / "base.bundle", sha[0]

    # -- the environment ------------------------------------------------------------------------

    def _ecosystems(self, src: source.Source) -> tuple[Ecosystem, ...]:
        return ecosystems.detect(src.root_names())

    def _runtimes(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for name in envs.RUNTIMES:
            if name in self.registry.rows:
                out[name] = self.registry.available(name).version
        return out

    def setup_command(self, src: source.Source, setup: str | None) -> str:
        if setup == AUTO:
            found = self._ecosystems(src)
            return ecosystems.default_setup(found) if found else ""
        return (setup or "").strip()

    @contextlib.asynccontextmanager
    async def environment(
        self, src: source.Source, setup: str | None, owner: str = str(LOCAL)
    ) -> AsyncIterator[tuple[envs.SetupResult, Path | None]]:
        """The cached environment for `setup` (made now if it is not), held while the block runs:
        the setup's result and the layer's path (None without a setup, or when it failed)."""
        command = self.setup_command(src, setup)
        if not command:
            yield envs.SetupResult("", True, True, ""), None
            return
        found = self._ecosystems(src)
        files = await asyncio.to_thread(envs.manifests, src, found)
        key = envs.env_key(owner, src, files, command, self._runtimes(), self.allow)
        result = envs.SetupResult(key, True, True, command)
        if self.store.get("envs", key) is None:
            async with _held(self.store.making("envs", key)) as made:
                if made is not None:  # else made meanwhile, by whoever held the lock
                    result = await self._setup(src, found, command, key, made, owner)
            if not result.ok:
                yield result, None
                return
        async with _held(self.store.use("envs", key)) as entry:
            if entry is None:
                raise JailError(f"the environment {key} went before it could be used")
            result.size = entry.size
            yield result, self.store.path("envs", key) / "layer"

    async def _setup(self, src: source.Source, found: tuple[Ecosystem, ...], command: str,
                     key: str, made: Path, owner: str) -> envs.SetupResult:  # fmt: skip
        cfg = self.config
        started = time.monotonic()
        result = envs.SetupResult(key, False, False, command)
        memory = (cfg.repo_setup_memory_mb << 20) + cfg.repo_env_bytes
        limits = self._limits(cfg.repo_setup_timeout, memory, cfg.repo_env_bytes)
        await asyncio.to_thread(self.egress.start)
        with layers.overlay(self.runs, [src.checkout], cfg.repo_env_bytes) as rd:
            with self.egress.network() as (net, report):
                spec = repo_spec(cfg, self.registry, found, command, str(rd.tree), limits,
                                 network=net.path)  # fmt: skip
                out = await self._box(spec, "setup")
            result.egress = report.to_dict()
            result.exit_code, result.limit = out.exit_code, _limit(out)
            result.output = envs.tail(out.stdout + b"\n" + out.stderr)
            if out.ok:
                result.size = await asyncio.to_thread(
                    self._keep_layer, rd.upper, made, key, src, owner
                )
                result.ok = True
            else:
                result.error = _setup_failure(out, report.denied)
        result.seconds = time.monotonic() - started
        return result

    def _keep_layer(self, upper: Path, made: Path, key: str, src: source.Source,
                    owner: str) -> int:  # fmt: skip
        layers.normalise(upper, made / "layer")
        size = layers.disk_usage(made / "layer")
        info: dict[str, object] = {"repository": src.identity, "base": src.base, "owner": owner}
        self.store.commit("envs", key, made, size, info)
        return size

    # -- runs over the repository ----------------------------------------------------------------

    def _limits(self, timeout: float, memory: int, disk: int) -> Limits:
        cfg = self.config
        return Limits(
            wall_time=timeout, cpu_time=timeout * max(1, os.cpu_count() or 1), memory=memory,
            pids=max(cfg.pids, 1024), output=cfg.output_bytes, open_files=max(cfg.open_files, 4096),
            file_size=disk,
        )  # fmt: skip

    async def _box(self, spec: RunSpec, step: str) -> Outcome:
        executor = self._executor()
        return await executor.run_box(spec, language="repository", step=step)

    async def run(
        self, src: source.Source, layer: Path | None, command: str, patch: str = "",
        test_patch: str = "", tamper: grade.Tamper | None = None, timeout: float | None = None,
    ) -> tuple[RunResult | None, str | None]:  # fmt: skip
        """`command` over the base with `patch` (then the tamper's restorations and
        `test_patch`) applied, in a fresh box with no network: the result, or None and why the
        patches did not apply."""
        cfg = self.config
        timeout = timeout or cfg.repo_test_timeout
        if not 0 < timeout <= cfg.repo_test_timeout:
            raise InvalidRequest(
                f"timeout {timeout:g}s must be positive and at most {cfg.repo_test_timeout:g}s"
            )
        found = self._ecosystems(src)
        lowers = [src.checkout, *([layer] if layer else [])]
        tamper = tamper or grade.Tamper()
        with layers.overlay(self.runs, lowers, cfg.disk_bytes) as rd:
            memory = cfg.memory_mb << 20
            files = {
                "candidate.patch": patch.encode(),
                "test.patch": test_patch.encode(),
                "restore": grade.nul_list(tamper.restored),
                "remove": grade.nul_list(tamper.removed),
            }
            limits = self._limits(APPLY_TIMEOUT, memory, cfg.disk_bytes)
            apply = repo_spec(cfg, self.registry, found, grade.APPLY, str(rd.tree), limits, files)
            out = await self._box(apply, "apply")
            if out.exit_code != 0:
                why = grade.APPLY_FAILURES.get(out.exit_code or 0, f"exit status {out.exit_code}")
                return None, f"{why}: {envs.tail(out.stderr, 2000).strip()}"
            spec = repo_spec(cfg, self.registry, found, command, str(rd.tree),
                             self._limits(timeout, memory, cfg.disk_bytes),
                             fetch=(REPORT_DIR.removeprefix("/sandbox/"),))  # fmt: skip
            out = await self._box(spec, "test")
        reports = {k: v for k, v in out.files.items()}
        verdicts = parse_all(reports, out.stdout)
        return RunResult(out.exit_code, out.signal, _limit(out), out.wall_time, out.stdout,
                         out.stderr, verdicts, sorted(reports)), None  # fmt: skip

    def test_command(self, src: source.Source, test: str | None) -> str:
        if test and test != AUTO:
            return test
        found = self._ecosystems(src)
        command = ecosystems.default_test(found)
        if command is None:
            raise InvalidRequest(
                "no test command given, and the repository is of no ecosystem sandlot knows "
                f"({', '.join(e.name for e in ecosystems.ECOSYSTEMS)}): pass the test command"
            )
        return command

    # -- grading -----------------------------------------------------------------------------------

    async def grade(self, task: GradeTask) -> GradeResult:
        started = time.monotonic()
        async with self.opened(task.repository, task.base) as src:
            found = self._ecosystems(src)
            command = self.test_command(src, task.test)
            globs = tuple(g for e in found for g in e.test_globs) + tuple(task.test_paths)
            at_base = set(await asyncio.to_thread(source.tracked, src.checkout))
            tamper = grade.tamper(task.patch, globs or ecosystems.PYTHON.test_globs, at_base,
                                  task.allow_test_changes)  # fmt: skip
            result = GradeResult(False, "unresolved", src.base, "", tamper=tamper)
            async with self.environment(src, task.setup, task.owner) as (setup, layer):
                result.setup = setup if setup.command else None
                if not setup.ok:
                    result.status, result.message = "setup_failed", setup.error or "setup failed"
                    result.seconds = time.monotonic() - started
                    return result
                run, failed = await self.run(src, layer, command, task.patch, task.test_patch,
                                             tamper, task.timeout)  # fmt: skip
        result.seconds = time.monotonic() - started
        if run is None:
            result.status, result.message = "patch_failed", failed or "the patch failed"
            return result
        judged = grade.judge(run.verdicts, task.fail_to_pass, task.pass_to_pass, run.exit_code)
        result.run, result.tests = run, dict(run.verdicts.tests)
        result.fail_to_pass, result.pass_to_pass = judged.fail_to_pass, judged.pass_to_pass
        result.resolved = judged.resolved
        result.status = "resolved" if judged.resolved else "unresolved"
        result.message = _message(judged, run, tamper)
        return result

    async def set_up(self, repo: Repository, base: str, setup: str | None,
                     owner: str = str(LOCAL)) -> envs.SetupResult:  # fmt: skip
        """The repository's environment at `base`, made now unless it is cached."""
        async with self.opened(repo, base) as src, self.environment(src, setup, owner) as (r, _):
            return r

    async def test(
        self, repo: Repository, base: str, setup: str | None, test: str | None, patch: str = "",
        timeout: float | None = None, owner: str = str(LOCAL),
    ) -> tuple[envs.SetupResult, RunResult | None, str | None]:  # fmt: skip
        """A test command over the base with `patch` applied, on its environment: the setup's
        result, the run's (None if the setup or the patch failed) and why not."""
        async with self.opened(repo, base) as src:
            command = self.test_command(src, test)
            async with self.environment(src, setup, owner) as (result, layer):
                if not result.ok:
                    return result, None, result.error
                run, failed = await self.run(src, layer, command, patch, timeout=timeout)
                return result, run, failed

    # -- environments ---------------------------------------------------------------------------

    def entries(self, owner: str | None = None) -> list[dict[str, object]]:
        """The cached entries; a tenant's (`owner`) environments alone when given."""
        self._prepare()
        found = self.store.entries("envs" if owner is not None else None)
        return [e.to_dict() for e in found if owner is None or e.info.get("owner") == owner]

    def remove(self, key: str, owner: str | None = None) -> bool:
        """Remove an entry no run holds (False if one does); a tenant's environment alone when
        `owner` is given (another's is not found)."""
        self._prepare()
        kind = "envs" if self.store.path("envs", key).exists() else "checkouts"
        entry = self.store.get(kind, key)
        if owner is not None and (entry is None or entry.info.get("owner") != owner):
            raise NotFound(f"no environment {key} of yours (GET /repo/envs lists them)")
        return self.store.remove(kind, key)


@contextlib.asynccontextmanager
async def _held(cm: contextlib.AbstractContextManager[T]) -> AsyncIterator[T]:
    """A store's lock, waited for in a thread: never on the event loop."""
    value = await asyncio.to_thread(cm.__enter__)
    try:
        yield value
    except BaseException as exc:
        if not cm.__exit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        cm.__exit__(None, None, None)


def _limit(out: Outcome) -> str | None:
    return str(out.limit) if out.limit else None


def _setup_failure(out: Outcome, denied: list) -> str:
    if out.limit:
        why = f"the setup was stopped by its {out.limit} limit"
    elif out.exit_code is not None:
        why = f"the setup exited {out.exit_code}"
    else:
        why = f"the setup was killed by signal {out.signal}"
    if out.signal == signal.SIGXFSZ or b"No space left on device" in out.stderr + out.stdout:
        why += " (its layer is full: it may write repo_env_bytes in all)"
    if denied:
        why += "; the egress proxy refused: " + ", ".join(map(str, denied[:10]))
    return why


def _message(judged: grade.Judgement, run: RunResult, tamper: grade.Tamper) -> str:
    bad = {t: s for t, s in {**judged.fail_to_pass, **judged.pass_to_pass}.items() if s != "passed"}
    parts = ["every FAIL_TO_PASS and PASS_TO_PASS test passed" if judged.resolved else
             f"{len(bad)} named test(s) did not pass: " +
             ", ".join(f"{t} ({s})" for t, s in list(bad.items())[:10])]  # fmt: skip
    if not judged.fail_to_pass and not judged.pass_to_pass:
        parts = [f"no test named; the test command exited {run.exit_code}"]
    if tamper.touched:
        what = "counted as they were" if tamper.counted else "put back as at the base"
        parts.append(f"the patch touched test files ({', '.join(tamper.touched[:10])}): {what}")
    return "; ".join(parts)


async def by_kind(
    repos: Repos, kind: str, repository: Repository, fields: dict[str, Any]
) -> dict[str, Any]:
    """A repository task by name ("grade", "setup", "test") with a request's fields, answered as
    the HTTP API answers it: one shape for every face (CLI, server, the coder's loop)."""
    fields = dict(fields)
    base, setup = fields.pop("base"), fields.pop("setup", AUTO)
    if kind == "grade":
        task = GradeTask(repository, base, setup=setup, **fields)
        return (await repos.grade(task)).to_dict()
    if kind == "setup":
        owner = fields.get("owner", str(LOCAL))
        return (await repos.set_up(repository, base, setup, owner)).to_dict()
    if kind != "test":
        raise InvalidRequest(f"no repository task {kind!r}: grade, setup or test")
    done, run, failed = await repos.test(repository, base, setup, **fields)
    return {
        "passed": bool(run and run.passed), "error": failed, "setup": done.to_dict(),
        "run": run.to_dict() if run else None, "tests": dict(run.verdicts.tests) if run else {},
    }  # fmt: skip
