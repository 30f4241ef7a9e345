"""The container image for the image tests: built with podman, cached, run as docs/deployment.md
says.

Nothing here is assumed installed: podman, runc and debootstrap come from Debian when missing
(CI runs on fresh machines too). No container registry is reachable from these machines, so the
base image is made by deploy/base-image.sh from Debian's own packages. An image is tagged with a
hash of everything it is built from, so a rerun on the same machine reuses it; podman's layer
cache rebuilds only the server's layer when only the server changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.conftest import free_port, unclaimed_processes

ROOT = Path(__file__).resolve().parents[1]
# What the CI image is built with: one language of each family, and bash for the attacks. The
# Containerfile's default builds every language; that takes longer than CI's budget allows.
CI_LANGUAGES = ("python", "bash", "cpp", "java", "nodejs", "go", "rust")
BASE = "localhost/sandlot-base:bookworm"
REPO = "localhost/sandlot-ci"
INPUTS = (
    "Containerfile",
    ".containerignore",
    "Makefile",
    "pyproject.toml",
    "README.md",
    "sandlot",
    "deploy/entrypoint.sh",
)
# catatonit: the pause process of the pods `podman kube play` makes (no registry to pull one).
DEBIAN_TOOLS = {"podman": "podman", "runc": "runc", "debootstrap": "debootstrap",
                "catatonit": "catatonit"}  # fmt: skip
# This machine's engine settings, not the image's needs: crun refuses this host's cgroup layout,
# and podman's default limits of open files and processes are above this host's hard limits.
ENGINE = ("--runtime", "runc", "--ulimit", "nofile=16384:16384", "--ulimit", "nproc=16384:16384")
# A TLS-intercepting proxy's CA, where the machine has one: the build's downloads must trust it.
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
BUILD_TIMEOUT = 3600
SANDBOX_UIDS = range(61000, 61000 + 64)  # the image's default uid_base, and its slots


def podman(*args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, check=check
    )


def engine_conf(where: Path) -> Path:
    """A containers.conf with ENGINE's settings, for what runs podman itself (podman-compose,
    `podman kube play`): point CONTAINERS_CONF at it."""
    ulimits = ", ".join(f'"{ENGINE[i + 1]}"' for i, a in enumerate(ENGINE) if a == "--ulimit")
    runtime = ENGINE[ENGINE.index("--runtime") + 1]
    conf = where / "containers.conf"
    conf.write_text(
        f'[containers]\ndefault_ulimits = [{ulimits}]\n[engine]\nruntime = "{runtime}"\n'
    )
    return conf


def for_podman_kube_play(manifest: str, image: str, port: int) -> str:
    """deploy/kubernetes.yaml with the edits `podman kube play` on this one host needs: the
    image set (as the file says to), one replica (podman makes each a pod of this host, each
    publishing the same host port) and the container's port published on 127.0.0.1:`port`
    (no Service proxy here: podman publishes a pod's container ports on the host)."""
    edits = [
        ("image: sandlot:latest", f"image: {image}"),
        ("replicas: 2", "replicas: 1"),
        ("- {name: http, containerPort: 8080}",
         f"- {{name: http, containerPort: 8080, hostPort: {port}, hostIP: 127.0.0.1}}"),
    ]  # fmt: skip
    for old, new in edits:
        assert manifest.count(old) == 1, f"deploy/kubernetes.yaml no longer has {old!r}"
        manifest = manifest.replace(old, new)
    return manifest


def ensure_tools() -> None:
    missing = [pkg for tool, pkg in DEBIAN_TOOLS.items() if shutil.which(tool) is None]
    if missing:
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        subprocess.run(["apt-get", "update"], check=True, capture_output=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *missing],
                       check=True, capture_output=True, env=env)  # fmt: skip


def inputs_hash(*extra: str) -> str:
    digest = hashlib.sha256()
    for name in INPUTS:
        path = ROOT / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if "__pycache__" in file.parts:
                continue
            digest.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes())
    for item in extra:
        digest.update(item.encode() + b"\0")
    return digest.hexdigest()[:16]


def exists(image: str) -> bool:
    return podman("image", "exists", image, check=False).returncode == 0


def base_image() -> str:
    """The Debian base, made once per version of the script that makes it."""
    script = ROOT / "deploy" / "base-image.sh"
    tag = f"{BASE}-{hashlib.sha256(script.read_bytes()).hexdigest()[:12]}"
    if not exists(tag):
        subprocess.run([str(script), tag], check=True, capture_output=True, timeout=BUILD_TIMEOUT)
    return tag


def ensure_image(languages: tuple[str, ...] = CI_LANGUAGES) -> tuple[str, float | None]:
    """The CI image's tag, and the seconds its build took (None when it was already built)."""
    ensure_tools()
    base = base_image()
    tag = f"{REPO}:{inputs_hash(base, *languages)}"
    if exists(tag):
        return tag, None
    volumes = ["-v", f"{LOCAL_CAS}:{LOCAL_CAS}:ro"] if any(LOCAL_CAS.glob("*.crt")) else []
    start = time.monotonic()
    done = subprocess.run(
        ["podman", "build", *ENGINE[:2], *volumes, "--build-arg", f"BASE={base}",
         "--build-arg", f"LANGUAGES={','.join(languages)}", "--build-arg", "SETUP_ARGS=",
         "-t", tag, "-f", "Containerfile", "."],
        cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"podman build failed:\n{(done.stdout + done.stderr)[-6000:]}")
    took = time.monotonic() - start
    for old in podman("images", "--format", "{{.Repository}}:{{.Tag}}", REPO).stdout.split():
        if old != tag:  # earlier builds: their layers go once no image uses them
            podman("rmi", old, check=False)
    podman("image", "prune", "-f", check=False)
    return tag, took


def documented_run_flags() -> list[str]:
    """The privileges of the `podman run` command in docs/deployment.md, which the tests run it
    with."""
    text = (ROOT / "docs" / "deployment.md").read_text()
    match = re.search(r"```sh\n(podman run .*?)\n```", text, re.S)
    assert match, "docs/deployment.md has no `podman run` command"
    argv = shlex.split(match.group(1).replace("\\\n", " "))
    flags, i = [], 2
    while i < len(argv) - 1:  # the last word is the image
        if argv[i] in ("-d", "--detach"):
            i += 1
        elif argv[i] in ("-p", "--publish"):
            i += 2
        else:
            flags.append(argv[i])
            i += 1
    return [f.replace("deploy/", f"{ROOT}/deploy/") for f in flags]


class Container:
    """A detached container of the image; `url` reaches its server from this machine."""

    def __init__(
        self, image: str, flags: list[str], env: dict[str, str] | None = None,
        command: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.name = f"sandlot-test-{self.port}"
        # No API keys: the port is published on this machine's loopback alone.
        base = {"SANDLOT_SLOTS": "2", "SANDLOT_INSECURE": "true"}
        options = [f"--env={k}={v}" for k, v in {**base, **(env or {})}.items()]
        self.serving_after = 0.0
        self.started = time.monotonic()
        done = podman("run", "-d", "--name", self.name, *ENGINE,
                      "-p", f"127.0.0.1:{self.port}:8080", *options, *flags, image, *command,
                      check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"podman run failed: {done.stderr.strip()}")

    def wait_serving(self, timeout: float = 120) -> float:
        """Seconds from `podman run` to the first answer of /v1/ping."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/v1/ping", timeout=2).status_code == 200:
                    self.serving_after = time.monotonic() - self.started
                    return self.serving_after
            if not self.running():
                break
            time.sleep(0.1)
        raise RuntimeError(f"the container did not serve:\n{self.logs()}")

    def running(self) -> bool:
        out = podman("inspect", "-f", "{{.State.Running}}", self.name, check=False).stdout
        return out.strip() == "true"

    def logs(self) -> str:
        done = podman("logs", self.name, check=False)
        return (done.stdout + done.stderr)[-5000:]

    def exec(self, script: str) -> str:
        return podman("exec", self.name, "sh", "-c", script).stdout

    def box_processes(self) -> list[str]:
        """Processes in the container of a sandbox uid, less the boxes built ahead of a run."""
        out = self.exec(
            'for p in /proc/[0-9]*; do s=$(cat "$p/stat" 2>/dev/null) || continue; '
            'echo "$(stat -c %u "$p") ${p#/proc/} $(echo "${s##*) }" | cut -d" " -f2) '
            '$(tr "\\0" " " < "$p/cmdline")"; done; true'
        )
        rows = [line.split(None, 3) for line in out.splitlines() if line.strip()]
        return unclaimed_processes([r for r in rows if len(r) >= 3], SANDBOX_UIDS)

    def remove(self) -> None:
        podman("rm", "-f", "-t", "10", self.name, check=False)


@contextlib.contextmanager
def running(
    image: str, flags: list[str], env: dict[str, str] | None = None,
    command: tuple[str, ...] = (),
) -> Iterator[Container]:  # fmt: skip
    box = Container(image, flags, env, command)
    try:
        box.wait_serving()
        yield box
    finally:
        box.remove()
