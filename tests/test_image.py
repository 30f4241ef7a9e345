"""The container image, built and run for real with podman, with the README's privileges.

One container serves the language runs and the attacks; each attack is a probe program of
tests/test_security.py, sent into the container's server, with its containment checked from
inside the container. Then containers that lack one privilege each: they must run no code and
say in /health what they lack.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from sandlot.jail.privileges import CAPABILITIES
from tests import container
from tests.test_security import (
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
    with container.running(image, container.readme_run_flags()) as box:
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
    """The container serves with the README's privileges; /health is ready with cgroups."""
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
    """The README's flags, less one capability."""
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
    """Each capability of the README's command is needed, and its absence is named."""
    flags = without(container.readme_run_flags(), capability)
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
             for f in container.readme_run_flags()]  # fmt: skip
    with container.running(image, flags) as box:
        # The reason reaches the log; /health says only that the zygote failed: since boxes are
        # copies of a template, a template that cannot be built ends the zygote itself.
        assert_refuses(box, "the zygote")
        assert "pivot_root: Function not implemented" in box.logs()


def test_image_read_only_cgroups_run_nothing(image):
    """Started past the entry point that makes the cgroup mounts writable: no code runs."""
    flags = ["--entrypoint=/usr/bin/tini", *container.readme_run_flags()]
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
    with container.running(image, [*ids, *container.readme_run_flags()]) as box:
        assert_refuses(box, "Permission denied")
