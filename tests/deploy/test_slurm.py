"""deploy/slurm/sandlot.sbatch on a one-node SLURM cluster made of this machine.

slurmctld and slurmd run on localhost with munge for their credentials, all from Debian's
packages (installed here when missing), configured and kept in a temporary directory, on ports
of their own, and stopped at the end. The job starts `sandlot serve` from this checkout.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, STATE_ROOT, UID_BASE, free_port

pytestmark = [pytest.mark.slurm, pytest.mark.root, pytest.mark.slow]
SCRIPT = ROOT / "deploy" / "slurm" / "sandlot.sbatch"
PACKAGES = {"slurmctld": "slurm-wlm", "munged": "munge"}
SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def ensure_packages() -> None:
    missing = [pkg for tool, pkg in PACKAGES.items() if shutil.which(tool, path=SBIN_PATH) is None]
    if missing:
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": SBIN_PATH}
        subprocess.run(["apt-get", "update"], check=True, capture_output=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *missing],
                       check=True, capture_output=True, env=env)  # fmt: skip


def slurm_conf(d: Path) -> str:
    return f"""\
ClusterName=sandlot-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge.socket
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
MpiDefault=none
ReturnToService=2
KillWait=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=30 State=UP
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory) -> Iterator[dict[str, str]]:
    """A running one-node cluster; the environment that aims SLURM's commands at it."""
    ensure_packages()
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    (d / "slurm.conf").write_text(slurm_conf(d))
    env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf"), "PATH": f"{SBIN_PATH}"}
    munged = ["munged", "--foreground", "--force", f"--key-file={key}",
              f"--socket={d}/munge.socket", f"--pid-file={d}/munged.pid",
              f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"]  # fmt: skip
    daemons = [subprocess.Popen(munged, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        wait_for(lambda: (d / "munge.socket").exists(), 30, "munged did not start")
        for argv in (["slurmctld", "-D"], ["slurmd", "-D", "-N", "localhost"]):
            daemons.append(subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))  # fmt: skip
        wait_for(
            lambda: node_state(env) == "idle",
            60,
            lambda: f"no idle node:\n{tail(d / 'slurmd.log')}{tail(d / 'slurmctld.log')}",
        )
        yield env
    finally:
        for proc in reversed(daemons):
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def node_state(env: dict[str, str]) -> str:
    done = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True)
    return done.stdout.strip()


def tail(path: Path) -> str:
    return "".join(path.read_text().splitlines(keepends=True)[-15:]) if path.exists() else ""


def wait_for(ready, timeout: float, message) -> None:
    """Poll `ready()` until true; past the timeout fail with `message` (or what it returns)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(0.5)


def test_sbatch_serves_and_lists_each_node(slurm, tmp_path):
    """sbatch starts a server per node, lists its URL once /health says 200, and on scancel
    every server stops and leaves nothing behind (processes, mounts, state, the list)."""
    port = free_port()
    url_file = tmp_path / "sandlot.urls"
    state_dir = f"{STATE_ROOT}/slurm-{port}"
    env = {
        **slurm,
        "SERVE_CMD": f"{sys.executable} -m sandlot serve --slots 1",
        "SERVE_PORT": str(port), "SERVE_BIND": "127.0.0.1", "SERVE_HOST": "127.0.0.1",
        "URL_FILE": str(url_file), "PYTHONPATH": str(ROOT),
        "SANDLOT_STATE_DIR": state_dir, "SANDLOT_UID_BASE": str(UID_BASE + 10),
    }  # fmt: skip
    out = tmp_path / "job.out"
    job = subprocess.run(
        ["sbatch", "--parsable", f"--chdir={tmp_path}", f"--output={out}", "--time=10",
         str(SCRIPT)], env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    try:
        wait_for(url_file.exists, 180, lambda: f"no URL list:\n{tail(out)}")
        urls = url_file.read_text().splitlines()
        assert urls == [f"http://127.0.0.1:{port}"], urls
        health = httpx.get(urls[0] + "/health", timeout=10)
        assert health.status_code == 200, health.text
        r = httpx.post(urls[0] + "/run_code", json={"code": "print(6 * 7)", "language": "python"},
                       timeout=60)  # fmt: skip
        assert r.json()["stdout"] == "42\n", r.text
    finally:
        subprocess.run(["scancel", job], env=env, check=False)
        wait_for(lambda: job not in subprocess.run(["squeue", "-h", "-o", "%i"], env=env,
                                                   capture_output=True, text=True).stdout,
                 90, "the job did not end")  # fmt: skip
    assert not url_file.exists(), "the URL list outlived the job"
    with contextlib.suppress(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/v1/ping", timeout=2)
        raise AssertionError("the server still answers after scancel")
    assert state_dir not in Path("/proc/self/mounts").read_text(), "a work dir stayed mounted"
    left = list(Path(state_dir).iterdir()) if Path(state_dir).exists() else []
    assert left == [], f"the jail left state behind: {left}"
