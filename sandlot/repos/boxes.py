"""The boxes of a repository task: what each phase's box gets, as RunSpecs for the jail.

Every phase runs `/bin/bash -c` in /repo (the run's overlay) with every usable toolchain bound
read-only (as `sandlot test` has them), the ecosystems' variables and PATH entries, and git
allowed to read a repository owned by another uid (the checkout is root's). Only a setup box
gets a network: the namespace relayed to the egress proxy, and the proxy's variables.
"""

from __future__ import annotations

import shlex

from sandlot.config import Config
from sandlot.executor import shell_spec
from sandlot.jail import Limits, RunSpec
from sandlot.languages import Registry
from sandlot.repos.ecosystems import REPO, REPORT_DIR, TMP, Ecosystem
from sandlot.repos.egress import proxy_env

CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
# Package clients that do not read the system's trust store by default are pointed at it.
CA_ENV = {name: CA_BUNDLE for name in ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE",
          "NODE_EXTRA_CA_CERTS", "CARGO_HTTP_CAINFO", "GIT_SSL_CAINFO")}  # fmt: skip
GIT_ENV = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
# pytest writes junit XML with each test's file (xunit1), and no cache into the repository.
# Every box's script starts in /repo with a TMPDIR in the run's layer (the box's /tmp is a small
# tmpfs; builds need more), removed when the script ends, so no setup keeps it.
PRELUDE = (
    f"mkdir -p {REPORT_DIR} && cd {shlex.quote(REPO)} && export TMPDIR={TMP} && "
    'mkdir -p "$TMPDIR" && trap \'rm -rf "$TMPDIR"\' EXIT &&'
)
PYTEST_ADDOPTS = f"--junitxml={REPORT_DIR}/pytest.xml -o junit_family=xunit1 -p no:cacheprovider"


def repo_spec(
    config: Config, registry: Registry, ecosystems: tuple[Ecosystem, ...], script: str,
    tree: str, limits: Limits, files: dict[str, bytes] | None = None,
    network: str | None = None, fetch: tuple[str, ...] = (), env: dict[str, str] | None = None,
) -> RunSpec:  # fmt: skip
    """`script` run by bash in /repo, the tree `tree` bound there."""
    base = shell_spec(config, registry, "true", {}, min(limits.wall_time, config.max_run_timeout))
    box_env = dict(base.env)
    path = [p for e in ecosystems for p in e.path]
    box_env["PATH"] = ":".join([*path, box_env["PATH"]])
    for e in ecosystems:
        box_env.update(e.env)
    box_env.update(CA_ENV)
    box_env.update(GIT_ENV)
    box_env.update(HOME="/tmp", SANDLOT_REPORT_DIR=REPORT_DIR, PYTEST_ADDOPTS=PYTEST_ADDOPTS)
    if network is not None:
        box_env.update(proxy_env())
    box_env.update(env or {})
    return RunSpec(
        argv=("/bin/bash", "-c", f"{PRELUDE} {script}"),
        files=files or {}, env=box_env, ro_binds=base.ro_binds, limits=limits, any_cpu=True,
        binds=((tree, REPO),), network=network, fetch=fetch,
    )  # fmt: skip
