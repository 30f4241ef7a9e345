"""The deployment files say the same thing as the jail: one set of capabilities everywhere, a
seccomp profile that allows what boxes are built with, scripts that parse."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from sandlot.jail.privileges import CAPABILITIES
from tests.container import ROOT, documented_run_flags

NEEDED = {name.removeprefix("CAP_") for name, _, _ in CAPABILITIES}
# What the zygote and the box's init call to build a box (jail/zygote.py, jail/box_init.c), and
# what every program needs.
BOX_BUILDING = {"mount", "umount2", "pivot_root", "setns", "sethostname", "unshare", "clone",
                "vfork", "capset", "close_range", "prctl", "setresuid", "setgroups"}  # fmt: skip
NEVER = {"kexec_load", "init_module", "finit_module", "bpf", "perf_event_open", "keyctl",
         "io_uring_setup", "ptrace", "open_by_handle_at", "reboot", "userfaultfd"}  # fmt: skip


def caps_in(text: str) -> set[str]:
    match = re.search(r"add: \[([A-Z_,\s]+)\]", text)
    assert match, "no list of added capabilities"
    return {c.strip() for c in match.group(1).split(",")}


def test_documented_command_adds_exactly_the_needed_capabilities():
    flags = documented_run_flags()
    added = {c for f in flags if f.startswith("--cap-add=") for c in f[10:].split(",")}
    assert added == NEEDED
    assert "--cap-drop=ALL" in flags and "--cgroupns=private" in flags, flags
    assert "--privileged" not in flags


@pytest.mark.parametrize("name", ["compose.yaml", "kubernetes.yaml"])
def test_manifests_add_exactly_the_needed_capabilities(name):
    text = (ROOT / "deploy" / name).read_text()
    assert caps_in(text) == NEEDED
    assert "ALL" in re.search(r"(cap_)?drop: \[([A-Z]+)\]", text).group(2)
    assert "privileged: true" not in text


def test_kubernetes_probes_and_resources():
    text = (ROOT / "deploy" / "kubernetes.yaml").read_text()
    assert re.search(r"livenessProbe:\s+httpGet: \{path: /v1/ping", text)
    assert re.search(r"readinessProbe:\s+httpGet: \{path: /health", text)
    assert "requests:" in text and "limits:" in text
    assert "kind: Deployment" in text and "kind: Service" in text


def test_kubernetes_file_says_what_podman_kube_play_reads_too():
    """podman kube play (tests/deploy/test_image.py runs it) reads a probe's named port as port 0
    and the seccomp profile only from the annotation: the file gives numbers, and both forms."""
    text = (ROOT / "deploy" / "kubernetes.yaml").read_text()
    ports = re.findall(r"httpGet: \{path: \S+, port: (\w+)\}", text)
    assert len(ports) == 3 and all(p.isdigit() for p in ports), ports
    field = re.search(r"localhostProfile: (\S+)", text).group(1)
    annotation = re.search(
        r"container\.seccomp\.security\.alpha\.kubernetes\.io/sandlot: (\S+)", text
    )
    assert annotation and annotation.group(1) == f"localhost/{field}"


def test_seccomp_profile_allows_box_building_and_denies_the_kernel_wide():
    profile = json.loads((ROOT / "deploy" / "seccomp.json").read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    allowed, denied = set(), set()
    for rule in profile["syscalls"]:
        (allowed if rule["action"] == "SCMP_ACT_ALLOW" else denied).update(rule["names"])
    assert allowed >= BOX_BUILDING, BOX_BUILDING - allowed
    assert denied >= NEVER and not NEVER & allowed
    # clone and unshare only without CLONE_NEWUSER: no user namespace from the container.
    guarded = next(r for r in profile["syscalls"] if "unshare" in r["names"])
    assert guarded["args"] == [
        {"index": 0, "value": 0x10000000, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}
    ]


@pytest.mark.parametrize("script", ["deploy/slurm/sandlot.sbatch", "deploy/entrypoint.sh",
                                    "deploy/base-image.sh"])  # fmt: skip
def test_scripts_parse(script):
    shell = "bash" if script.endswith(".sbatch") else "sh"
    subprocess.run([shell, "-n", str(ROOT / script)], check=True)
