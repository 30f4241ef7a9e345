"""`sandlot setup`'s flow: which languages, progress on long commands, apt's real error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sandlot.install import SetupError, apt, process
from tests.conftest import ROOT

# What apt printed when ca-certificates-java failed to configure on a fresh Debian 12 (its JVM
# crashed under emulation), shortened; the real error is in the middle, the noise at the end.
APT_OUTPUT = """\
Setting up libpcsclite1:amd64 (1.9.9-2) ...
Setting up ca-certificates-java (20230710~deb12u1) ...
# A fatal error has been detected by the Java Runtime Environment:
#  SIGSEGV (0xb) at pc=0x00007f, pid=4242, tid=4243
# Problematic frame:
# J 123 c2 java.lang.String.hashCode()I
dpkg: error processing package ca-certificates-java (--configure):
 installed ca-certificates-java package post-installation script subprocess returned error exit \
status 134
Setting up openjdk-17-jre-headless:amd64 (17.0.17+10-1~deb12u1) ...
update-alternatives: using /usr/lib/jvm/java-17-openjdk-amd64/bin/java to provide /usr/bin/java
update-alternatives: using /usr/lib/jvm/java-17-openjdk-amd64/bin/jjs to provide /usr/bin/jjs
update-alternatives: using /usr/lib/jvm/java-17-openjdk-amd64/bin/keytool to provide keytool
update-alternatives: using /usr/lib/jvm/java-17-openjdk-amd64/bin/rmid to provide /usr/bin/rmid
Processing triggers for libc-bin (2.36-9+deb12u13) ...
Errors were encountered while processing:
 ca-certificates-java
E: Sub-process /usr/bin/dpkg returned an error code (1)
"""


def test_apt_failure_shows_the_failing_package_and_not_the_noise_after_it():
    shown = apt.apt_errors(APT_OUTPUT.splitlines())
    assert "# A fatal error has been detected by the Java Runtime Environment:" in shown
    assert "dpkg: error processing package ca-certificates-java (--configure):" in shown
    assert shown[-1] == "E: Sub-process /usr/bin/dpkg returned an error code (1)"
    assert not any("update-alternatives" in line for line in shown)
    assert apt.APT_DPKG_FAILED.search("\n".join(shown))  # what triggers the one retry


def test_a_failed_command_says_why_in_its_own_words():
    script = "echo noise; echo 'E: Unable to locate package nosuch' >&2; echo more noise; exit 100"
    with pytest.raises(SetupError) as err:
        process.run(["sh", "-c", script], excerpt=apt.apt_errors)
    assert str(err.value).endswith("exited with 100:\nE: Unable to locate package nosuch")
    assert apt.APT_STALE.search(str(err.value))  # what triggers apt-get update and a retry


def test_a_long_command_reports_progress(monkeypatch):
    monkeypatch.setattr(process, "HEARTBEAT", 0.2)
    seen: list[str] = []
    token = process.PROGRESS.set(seen.append)
    try:
        out = process.run(["sh", "-c", "echo first; echo working >&2; sleep 1; echo last"])
    finally:
        process.PROGRESS.reset(token)
    assert out == "first\nlast\n"  # stdout alone, whole
    assert seen and all(line.startswith("`sh -c echo first;") for line in seen)
    assert any(line.endswith(": working") for line in seen)


def test_progress_names_the_command_under_its_wrapper(monkeypatch):
    """The Rust crates are built as nobody (`setpriv ... cargo build`): the progress line says
    cargo, not setpriv and its options."""
    monkeypatch.setattr(process, "HEARTBEAT", 0.2)
    seen: list[str] = []
    token = process.PROGRESS.set(seen.append)
    try:
        process.run(process.as_nobody(["sh", "-c", "echo building; sleep 1"]))
    finally:
        process.PROGRESS.reset(token)
    assert seen and all(line.startswith("`sh -c echo building;") for line in seen), seen


def test_a_quick_command_is_quiet():
    seen: list[str] = []
    token = process.PROGRESS.set(seen.append)
    try:
        assert process.run(["echo", "hi"]) == "hi\n"
    finally:
        process.PROGRESS.reset(token)
    assert seen == []


def test_apt_rounds_put_the_certificate_stores_first():
    rounds = apt.apt_rounds(["openjdk-17-jdk-headless", "g++"])
    flat = [pkg for batch in rounds for pkg in batch]
    assert flat[-2:] == ["openjdk-17-jdk-headless", "g++"] and len(rounds[-1]) == 2
    if "ca-certificates-java" in flat:
        assert rounds.index(["ca-certificates-java"]) < len(rounds) - 1
    assert apt.apt_rounds(["bubblewrap"])[-1] == ["bubblewrap"]


def test_setup_languages_from_the_environment():
    """SANDLOT_LANGUAGES chooses the languages of `sandlot setup` (and so of `make serve`)."""
    env = {**os.environ, "SANDLOT_LANGUAGES": "c, bash"}
    done = subprocess.run(
        [sys.executable, "-m", "sandlot", "setup"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "apt packages: ok (already present)" in done.stdout
    assert "sandbox python: skipped" in done.stdout
    assert "julia" not in done.stdout  # rows left out are not mentioned


DECOYS = ("rustc", "cargo", "go", "java", "javac", "g++", "gcc", "node", "npm", "mvn", "python3")


def test_installer_commands_ignore_the_operators_toolchains(tmp_path):
    """A PATH with other toolchains first (rustup's, /usr/local/go, a JDK, nodesource's...) and
    variables pointing at them: set-up must use, and stamp, Debian's and its own."""
    marks = tmp_path / "marks"
    marks.mkdir()
    decoys = tmp_path / "bin"
    decoys.mkdir()
    for name in DECOYS:
        decoy = decoys / name
        decoy.write_text(f"#!/bin/sh\ntouch {marks}/{name}\nexit 97\n")
        decoy.chmod(0o755)
    env = {**os.environ, "PATH": f"{decoys}:{os.environ['PATH']}", "GOROOT": str(decoys),
           "JAVA_HOME": str(tmp_path), "CARGO_HOME": str(tmp_path), "RUSTC": str(decoys / "rustc"),
           "SANDLOT_LANGUAGES": "c,catch2,go,java,rust"}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "sandlot", "setup"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in marks.iterdir()) == []
    # Control: the decoys do leave their mark when run.
    subprocess.run(["rustc", "--version"], env=env, check=False)
    assert (marks / "rustc").exists()


def test_host_env_has_debians_path_and_no_toolchain_variables(monkeypatch):
    monkeypatch.setenv("PATH", "/root/.cargo/bin:/usr/local/go/bin:/usr/bin")
    monkeypatch.setenv("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    monkeypatch.setenv("https_proxy", "http://proxy.invalid:3128")
    env = process.host_env(EXTRA="1")
    assert env["PATH"] == "/usr/sbin:/usr/bin:/sbin:/bin"
    assert "JAVA_HOME" not in env
    assert env["https_proxy"] == "http://proxy.invalid:3128"  # the operator's network settings
    assert env["EXTRA"] == "1"
    assert process.run(["sh", "-c", 'echo "$PATH"']).strip() == "/usr/sbin:/usr/bin:/sbin:/bin"


def test_a_package_newer_than_debians_is_reported(monkeypatch):
    """nodesource's nodejs 20 in place of Debian's 18: said, not replaced."""
    policy = """\
nodejs:
  Installed: 20.20.2-1nodesource1+repack1
  Candidate: 20.20.2-1nodesource1+repack1
  Version table:
 *** 20.20.2-1nodesource1+repack1 100
        100 /var/lib/dpkg/status
     18.20.4+dfsg-1~deb12u3 500
        500 http://deb.example/debian-security bookworm-security/main amd64 Packages
bash:
  Installed: 5.2.15-2+b8
  Candidate: 5.2.15-2+b13
  Version table:
     5.2.15-2+b13 500
        500 http://deb.example/debian bookworm/main amd64 Packages
 *** 5.2.15-2+b8 100
        100 /var/lib/dpkg/status
"""
    sources = {"http://deb.example/debian-security bookworm-security/main amd64 Packages",
               "http://deb.example/debian bookworm/main amd64 Packages"}  # fmt: skip
    monkeypatch.setattr(apt, "debian_sources", lambda: sources)
    real_run = subprocess.run

    def fake_run(argv, **kw):
        if argv[:2] == ["apt-cache", "policy"]:
            return subprocess.CompletedProcess(argv, 0, policy, "")
        return real_run(argv, **kw)

    monkeypatch.setattr(apt.subprocess, "run", fake_run)
    # An older Debian build still installed (bash) is not reported: only a newer foreign one.
    assert apt.not_debians(["nodejs", "bash"]) == [
        ("nodejs", "20.20.2-1nodesource1+repack1", "18.20.4+dfsg-1~deb12u3")
    ]
