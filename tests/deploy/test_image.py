"""The container image, built and run for real with podman, with the documented privileges.

One container serves the language runs and the attacks; each attack is a probe program of
tests/security/test_security.py, sent into the container's server, with its containment checked from
inside the container. Then containers that lack one privilege each: they must run no code and
say in /health what they lack.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import yaml

from sandlot.jail.privileges import CAPABILITIES
from tests import container
from tests.conftest import free_port
from tests.security.test_security import (
    DESCRIPTORS,
    MEMORY_BOMB,
    NETWORK_PROBE,
    PRIVS,
    PY_FORK_BOMB,
    READ_PROBE,
    USERNS,
    WRITE_PROBE,
    token,
)

pytestmark = [pytest.mark.image, pytest.mark.root, pytest.mark.slow]
MiB = 1 << 20
SERVER_CODE = "/srv/sandlot/sandlot/jail/pool.py"
HELLO = {
    "python": 'print("hi")',
    "bash": "echo hi",
    "cpp": '#include <cstdio>\nint main() { puts("hi"); }',
    "java": "public class Main {\n  public static void main(String[] a) {\n"
    '    System.out.println("hi");\n  }\n}\n',
    "nodejs": 'console.log("hi")',
    "go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }',
    "rust": 'fn main() { println!("hi"); }',
}


@pytest.fixture(scope="module")
def image() -> str:
    tag, took = container.ensure_image()
    if took is not None:
        print(f"\nimage {tag} built in {took:.0f} s")
    return tag


@pytest.fixture(scope="module")
def served(image: str) -> Iterator[container.Container]:
    with container.running(image, container.documented_run_flags()) as box:
        yield box


@pytest.fixture(scope="module")
def client(served: container.Container) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, timeout=120) as c:
        yield c


def run(client: httpx.Client, code: str, language: str, **fields) -> dict:
    r = client.post("/run_code", json={"code": code, "language": language, **fields})
    assert r.status_code == 200, r.text
    return r.json()


def probe(client: httpx.Client, code: str, params: dict, **fields) -> dict:
    """Run one of test_security's Python probes (JSON in on stdin, one JSON line out)."""
    body = run(client, code, "python", stdin=json.dumps(params), **fields)
    rr = body["run_result"]
    assert rr and rr["return_code"] == 0, f"the probe itself failed: {body}"
    return json.loads(rr["stdout"].strip().splitlines()[-1])


def assert_healthy(client: httpx.Client, served: container.Container) -> None:
    assert client.get("/health").status_code == 200, served.logs()
    assert run(client, "echo alive", "bash")["stdout"] == "alive\n"
    assert served.box_processes() == [], "processes of a run outlived it"


def test_image_serves_and_reports_health(served, client):
    """The container serves with the documented privileges; /health is ready with cgroups."""
    print(f"\nserving {served.serving_after:.1f} s after `podman run`")
    h = client.get("/health").json()
    assert h["status"] == "ok", h
    assert h["isolation"]["cgroup_version"] in (1, 2), h
    assert set(container.CI_LANGUAGES) <= set(h["languages"]), h["languages"]


@pytest.mark.parametrize("language", sorted(HELLO))
def test_image_runs_language(client, language):
    body = run(client, HELLO[language], language)
    assert body["status"] == "Success", body
    assert body["run_result"]["stdout"] == "hi\n", body


def test_image_attack_read_files(client, served):
    """/etc/shadow, the server's code and environment: none readable from a box."""
    paths = ["/etc/shadow", "/etc/gshadow", SERVER_CODE, "/proc/1/environ", "/run/sandlot/x"]
    dirs = ["/srv/sandlot", "/run/sandlot", "/root"]
    out = probe(client, READ_PROBE, {"paths": paths, "dirs": dirs})
    leaked = {p: r for p, r in out["reads"].items() if not r.startswith("error")}
    # /proc/1 in a box is the box's own init, whose environment is empty.
    assert set(leaked) <= {"/proc/1/environ"} and leaked.get("/proc/1/environ", "read: ") == (
        "read: "
    ), f"files of the container readable in a box: {leaked}"
    listed = {d: v for d, v in out["listings"].items() if isinstance(v, list)}
    assert listed == {}, f"directories of the container listable in a box: {listed}"
    assert "SANDLOT_" not in out["raw_env"], "the server's environment reached the box"
    assert_healthy(client, served)


def test_image_attack_network(client, served):
    """No network out of a box, not even the server's port inside the container."""
    out = probe(client, NETWORK_PROBE, {"port": 8080}, run_timeout=20)
    for name in ("public_ipv4", "public_ipv6", "udp_dns"):
        assert out[name] not in ("connected", "sent"), out
    assert out["server_port"].startswith("ConnectionRefusedError"), out
    assert out["interfaces"] == ["lo"], out
    assert_healthy(client, served)


def test_image_attack_write_outside(client, served):
    name = f"sandlot-pwned-{token()}"
    files = [f"/{name}", f"/usr/{name}", f"/etc/{name}", f"/srv/sandlot/{name}",
             f"/opt/sandlot/{name}", f"/opt/sandlot/python/{name}", f"/dev/{name}"]  # fmt: skip
    out = probe(client, WRITE_PROBE, {"files": files, "dirs": [f"/{name}.d"]})
    succeeded = {p: r for p, r in out.items() if not r.startswith("error")}
    assert succeeded == {}, f"writes outside the work dir succeeded in a box: {succeeded}"
    found = served.exec(f"ls -d /{name}* /usr/{name} /srv/sandlot/{name} 2>/dev/null; true")
    assert found.strip() == "", f"files from a box appeared in the container: {found}"
    assert_healthy(client, served)


def test_image_attack_fork_bomb(client, served):
    """A fork bomb ends with its run; a run beside it in the other slot still works."""
    with ThreadPoolExecutor(1) as pool:
        bomb = pool.submit(run, client, PY_FORK_BOMB, "python", run_timeout=3)
        other = run(client, "echo neighbour", "bash", run_timeout=10)
        body = bomb.result()
    assert other["run_result"]["stdout"] == "neighbour\n", other
    rr = body["run_result"]
    assert rr["status"] != "Finished" or rr["limit"], body
    assert_healthy(client, served)


def test_image_attack_memory_bomb(client, served):
    body = run(client, MEMORY_BOMB, "python", memory_limit_MB=256, run_timeout=30)
    rr = body["run_result"]
    assert "allocated" not in rr["stdout"], body
    assert rr["limit"] == "memory", body
    assert rr["memory_peak_bytes"] <= 300 * MiB, body
    assert_healthy(client, served)


def test_image_attack_inherited_descriptors(client, served):
    rr = run(client, DESCRIPTORS, "python")["run_result"]
    seen = json.loads(rr["stdout"])
    extra = {fd: what for fd, what in seen.items()
             if int(fd) > 2 and what != "gone" and not what.startswith("/proc/")}  # fmt: skip
    assert extra == {}, f"a box in the container inherited descriptors: {extra}"


def test_image_attack_privileges_and_namespaces(client, served):
    """No capability, no_new_privs, seccomp, a non-root uid; no namespace can be made."""
    rr = run(client, PRIVS, "python", stdin=json.dumps({"marker": "sleep"}))["run_result"]
    out = json.loads(rr["stdout"].splitlines()[0])
    assert out["NoNewPrivs"] == "1" and out["Seccomp"] == "2", out
    assert all(int(v, 16) == 0 for k, v in out.items() if k.startswith("Cap")), out
    assert "0" not in out["Uid"].split() and out["setuid0"] != "ok", out
    ns = run(client, USERNS, "bash", run_timeout=20)["run_result"]["stdout"]
    made = [line for line in ns.splitlines() if line.endswith("=0")]
    assert made == [], f"a box in the container made namespaces: {made}"
    assert_healthy(client, served)


def without(flags: list[str], capability: str) -> list[str]:
    """The documented flags, less one capability."""
    out = []
    for flag in flags:
        if flag.startswith("--cap-add"):
            caps = [c for c in flag.split("=", 1)[1].split(",") if c != capability]
            flag = "--cap-add=" + ",".join(caps)
        out.append(flag)
    return out


def assert_refuses(box: container.Container, reason: str) -> None:
    h = httpx.get(box.url + "/health", timeout=10)
    assert h.status_code == 503, h.text
    problem = h.json()["isolation"]["problem"]
    assert reason in problem, problem
    r = httpx.post(box.url + "/run_code", json={"code": "print(1)", "language": "python"})
    assert r.status_code == 503 and reason in r.json()["detail"], r.text


@pytest.mark.parametrize("capability", [name.removeprefix("CAP_") for name, *_ in CAPABILITIES])
def test_image_without_capability_runs_nothing(image, capability):
    """Each capability of the documented command is needed, and its absence is named."""
    flags = without(container.documented_run_flags(), capability)
    with container.running(image, flags) as box:
        assert_refuses(box, f"CAP_{capability}")


def test_image_seccomp_profile_without_pivot_root_runs_nothing(image, tmp_path):
    """A seccomp profile that denies what the boxes are built with (Docker's default lacks
    pivot_root): the probe run fails, no code runs, and the log names the syscall."""
    profile = json.loads((container.ROOT / "deploy" / "seccomp.json").read_text())
    profile["syscalls"][0]["names"].remove("pivot_root")
    path = tmp_path / "seccomp.json"
    path.write_text(json.dumps(profile))
    flags = [f"--security-opt=seccomp={path}" if f.startswith("--security-opt=seccomp") else f
             for f in container.documented_run_flags()]  # fmt: skip
    with container.running(image, flags) as box:
        # The reason reaches the log; /health says only that the zygote failed: since boxes are
        # copies of a template, a template that cannot be built ends the zygote itself.
        assert_refuses(box, "the zygote")
        assert "pivot_root: Function not implemented" in box.logs()


def test_image_read_only_cgroups_run_nothing(image):
    """Started past the entry point that makes the cgroup mounts writable: no code runs."""
    flags = ["--entrypoint=/usr/bin/tini", *container.documented_run_flags()]
    with container.running(
        image, flags, command=("/srv/sandlot/.venv/bin/sandlot", "serve")
    ) as box:
        assert_refuses(box, "Read-only file system")


def test_image_in_a_user_namespace_runs_nothing_on_cgroup_v1(image):
    """With a user namespace (what --userns=auto makes) on a cgroup v1 host the container's
    cgroups stay the host root's: the jail cannot make its slots' cgroups, and says so."""
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        pytest.skip("a cgroup v2 host: the runtime decides whether the cgroup is handed over")
    ids = ["--uidmap=0:300000:65536", "--gidmap=0:300000:65536"]
    with container.running(image, [*ids, *container.documented_run_flags()]) as box:
        assert_refuses(box, "Permission denied")


# --- The deployment files, run for real: what a user checks after `up` or `kube play`. ---

KEY = "key-7c2e9b41d8a3f6e05b19c4d7a2e8f3b6"


def wait_healthy(url: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return
        time.sleep(1)
    raise AssertionError(f"{url}/health was not ready in {timeout} s")


def assert_serves_with_its_key(url: str) -> None:
    body = {"code": "print(6 * 7)", "language": "python"}
    refused = httpx.post(f"{url}/run_code", json=body, timeout=120)
    assert refused.status_code == 401, refused.text
    done = httpx.post(f"{url}/run_code", json=body, timeout=120,
                      headers={"Authorization": f"Bearer {KEY}"})  # fmt: skip
    assert done.status_code == 200 and done.json()["stdout"] == "42\n", done.text


def test_compose_file_runs_with_podman_compose(image, tmp_path):
    """deploy/compose.yaml, unchanged, by podman-compose from the repository's root, as its
    header says; only its variables are set (the image, a loopback address, 2 CPUs)."""
    port = free_port()
    project = f"sandlot-test-{port}"
    env = {**os.environ, "CONTAINERS_CONF": str(container.engine_conf(tmp_path)),
           "SANDLOT_IMAGE": image, "SANDLOT_PUBLISH": f"127.0.0.1:{port}", "SANDLOT_CPUS": "2",
           "SANDLOT_API_KEYS": KEY}  # fmt: skip
    compose = [str(Path(sys.executable).parent / "podman-compose"), "-p", project,
               "-f", "deploy/compose.yaml"]  # fmt: skip

    def run_compose(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*compose, *args], cwd=container.ROOT, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip

    try:
        up = run_compose("up", "-d", "--no-build")
        assert up.returncode == 0, up.stdout + up.stderr
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url)
        assert_serves_with_its_key(url)
        label = f"label=io.podman.compose.project={project}"
        (cid,) = container.podman("ps", "-q", "--filter", label).stdout.split()
        # The compose healthcheck, as podman runs it (no systemd here to run it on a timer).
        assert container.podman("healthcheck", "run", cid, check=False).returncode == 0
        limits = json.loads(container.podman("inspect", cid).stdout)[0]["HostConfig"]
        assert limits["Memory"] == 8 << 30 and limits["NanoCpus"] == 2 * 10**9, limits
    finally:
        run_compose("down")


def test_kubernetes_file_runs_with_podman_kube_play(image, tmp_path):
    """deploy/kubernetes.yaml by `podman kube play`, with only the edits one host needs
    (container.for_podman_kube_play): the probes pass, its seccomp profile is the one in force,
    and the key comes from the Secret."""
    port = free_port()
    manifest = tmp_path / "kubernetes.yaml"
    manifest.write_text(container.for_podman_kube_play(
        (container.ROOT / "deploy" / "kubernetes.yaml").read_text(), image, port))  # fmt: skip
    profiles = tmp_path / "seccomp"
    profiles.mkdir()
    shutil.copy(container.ROOT / "deploy" / "seccomp.json", profiles / "sandlot.json")
    # The Secret `kubectl create secret generic sandlot-api-keys --from-literal=keys=KEY` makes,
    # as podman keeps one: a JSON map of base64 values.
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"keys": base64.b64encode(KEY.encode()).decode()}))
    env = {**os.environ, "CONTAINERS_CONF": str(container.engine_conf(tmp_path))}

    def podman(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["podman", *args], env=env, capture_output=True, text=True,
                              timeout=600)  # fmt: skip

    podman("kube", "down", str(manifest))  # one left by an interrupted run
    podman("secret", "rm", "sandlot-api-keys")
    assert podman("secret", "create", "sandlot-api-keys", str(secret)).returncode == 0
    try:
        play = podman("kube", "play", "--seccomp-profile-root", str(profiles), str(manifest))
        assert play.returncode == 0, play.stdout + play.stderr
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url)
        pod = yaml.safe_load_all(manifest.read_text())
        spec = next(d for d in pod if d["kind"] == "Deployment")["spec"]["template"]["spec"]
        (box,) = spec["containers"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):  # as a kubelet asks
            get = box[probe]["httpGet"]
            assert get["port"] == 8080, get
            assert httpx.get(f"{url}{get['path']}", timeout=10).status_code == 200, probe
        # The pod's container: <deployment>-pod-0-<container> in podman 4.3, -pod-<container> after.
        names = podman("ps", "--format", "{{.Names}}", "--filter", "name=^sandlot-pod").stdout
        (name,) = [n for n in names.split() if n.endswith(f"-{box['name']}")]
        assert podman("healthcheck", "run", name).returncode == 0  # podman's liveness check
        assert_serves_with_its_key(url)
        # sandlot's profile, not podman's default: it refuses io_uring, which podman's allows.
        probe = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                 "libc.syscall(425, 1, None); print(os.strerror(ctypes.get_errno()))")  # fmt: skip
        said = podman("exec", name, "/srv/sandlot/.venv/bin/python", "-c", probe)
        assert said.stdout.strip() == "Operation not permitted", said.stdout + said.stderr
    finally:
        podman("kube", "down", str(manifest))
        podman("secret", "rm", "sandlot-api-keys")
