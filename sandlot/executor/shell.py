"""The box for a shell command over a set of files (a repository's tests): every usable toolchain
bound read-only, the sandbox Python first on PATH, the run limits of the server's defaults."""

from __future__ import annotations

from sandlot.config import Config
from sandlot.errors import InvalidRequest
from sandlot.executor.limits import limits_for
from sandlot.jail import RunSpec
from sandlot.languages import RUST_BIN, Registry
from sandlot.limits import RUN_TIMEOUT


def shell_spec(
    config: Config, registry: Registry, cmd: str, files: dict[str, bytes], timeout: float
) -> RunSpec:
    runtime = config.runtime_dir
    if not 0 < timeout <= config.max_run_timeout:  # also false for NaN
        raise InvalidRequest(
            f"test timeout {timeout:g}s must be positive and at most {config.max_run_timeout:g}s"
        )
    binds: list[str] = []
    env: dict[str, str] = {}
    for row in registry.rows.values():
        if not row.missing(runtime):
            binds += row.resolved_binds(runtime)
    python = registry.rows.get("python")
    if python is not None:
        env.update(python.resolved_env(runtime))
    env.pop("MPLBACKEND", None)
    env.update(MPLBACKEND="Agg", GOTOOLCHAIN="local", GOFLAGS="-buildvcs=false",
               GOCACHE="/tmp/gocache", GOPATH="/tmp/gopath", CI="1")  # fmt: skip
    env["PATH"] = (
        f"{runtime}/python/bin:{runtime}/go/bin:{RUST_BIN.format(runtime=runtime)}:/usr/bin:/bin"
    )
    limits = limits_for(config, {RUN_TIMEOUT.setting: timeout}, pids=max(config.pids, 256))
    return RunSpec(
        argv=("/bin/bash", "-c", cmd), files=files, env=env,
        ro_binds=tuple(dict.fromkeys(binds)), limits=limits, any_cpu=True,  # a test suite
    )  # fmt: skip
