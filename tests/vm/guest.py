"""A fresh Debian 12 guest (systemd, cgroup v2) under qemu, reached over ssh.

Its disk is the base root filesystem of scripts/vm/build-image.sh (debootstrap, once per machine)
with this repository in /root/sandlot and its `make setup` run natively in a chroot
(scripts/vm/setup-image.sh), so that the guest, under software emulation, only has to serve.
That disk is cached beside the base, keyed by the files the set-up depends on (SETUP_FILES):
a session with the same set-up code boots it and gets the current repository copied in. With
SANDLOT_VM_BARE=1 the guest boots the bare root filesystem and `make serve` sets everything up
under emulation (much slower; docs/development.md, "The VM test"). /dev/kvm on our machines
cannot run a stock kernel (research/cgroup-v2-vm.md).

The base and the set-up disk are made by a `Preparation` that tests/vm/conftest.py starts in a
thread as soon as a VM test is collected: on a machine without the cache (CI's), their build
overlaps the rest of the suite, which runs before tests/vm/.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts" / "vm"
BOOT_TIMEOUT = 900.0
BARE = os.environ.get("SANDLOT_VM_BARE") == "1"
SRC = "/root/sandlot"  # where the guest has the repository
# What `make setup` depends on: a change to any of them means a set-up from scratch.
SETUP_FILES = ("Makefile", "pyproject.toml", "scripts/vm/setup-image.sh", "sandlot/install",
               "sandlot/languages")  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def repository_tar() -> bytes:
    """This repository as git has it: the working tree's tracked files, changes included."""
    git = ["git", "-C", str(REPO)]
    stash = subprocess.run([*git, "stash", "create"], capture_output=True, text=True, check=True)
    ref = stash.stdout.strip() or "HEAD"
    return subprocess.run(
        [*git, "archive", "--format=tar", ref], capture_output=True, check=True
    ).stdout


def setup_key() -> str:
    digest = hashlib.sha256()
    for name in SETUP_FILES:
        path = REPO / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(f"{file.relative_to(REPO)}\0".encode() + file.read_bytes())
    return digest.hexdigest()[:16]


class Preparation:
    """The guest's kernel, key and disk (the base, and unless BARE the repository set up in it),
    made in a thread of their own; `wait` gives them, `close` stops what is still running."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="sandlot-vm-", dir="/var/tmp"))
        self.tar = self.workdir / "repo.tar"
        self.tar.write_bytes(repository_tar())  # once: the guest gets the tree as it was now
        self._proc: subprocess.Popen[str] | None = None
        self._closed = False
        self._result: tuple[Path, Path] | BaseException | None = None
        self._thread = threading.Thread(target=self._prepare, name="vm-preparation", daemon=True)
        self._thread.start()

    def wait(self) -> tuple[Path, Path]:
        """The base directory and the disk to boot (a backing file, not to be written)."""
        self._thread.join()
        if isinstance(self._result, BaseException):
            raise RuntimeError(f"the VM's image could not be made: {self._result}")
        assert self._result is not None
        return self._result

    def close(self) -> None:
        self._closed = True
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGKILL)  # its chroot and debootstrap with it
        self._thread.join()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _prepare(self) -> None:
        try:
            t = time.monotonic()
            base = Path(self._script("build-image.sh", *(["--bare"] if BARE else [])))
            t = stamp("base image (debootstrap unless cached)", t)
            if BARE:
                self._result = base, base / "bare.raw"
                return
            disk = base / f"setup-{setup_key()}.raw"
            if not disk.exists():
                new = self.workdir / "setup.raw"
                self._script("setup-image.sh", str(base), str(self.tar), str(new))
                for old in base.glob("setup-*.raw"):
                    old.unlink()  # an older set-up's (a running guest keeps its open file)
                new.rename(disk)
            stamp("the repository's `make setup`, natively in a chroot (unless cached)", t)
            self._result = base, disk
        except BaseException as exc:  # given to the test that waits for it
            self._result = exc

    def _script(self, *argv: str) -> str:
        """Run one of scripts/vm/ in a process group of its own; its last line of output."""
        if self._closed:
            raise RuntimeError("closed")
        with subprocess.Popen(
            [str(SCRIPTS / argv[0]), *argv[1:]], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        ) as self._proc:  # fmt: skip
            out, err = self._proc.communicate()
        if self._proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} exited {self._proc.returncode}:\n{err[-5000:]}")
        return out.strip().splitlines()[-1] if out.strip() else ""


_preparation: Preparation | None = None


def preparation() -> Preparation:
    """The session's one Preparation, started at the first call."""
    global _preparation
    if _preparation is None:
        _preparation = Preparation()
    return _preparation


def close_preparation() -> None:
    global _preparation
    if _preparation is not None:
        _preparation.close()
        _preparation = None


class Guest:
    def __init__(self, base: Path, disk: Path, workdir: Path, memory: str = "4G") -> None:
        self.base = base  # kernel, initrd, ssh key
        self.disk = disk  # a qcow2 disk of this guest's own
        self.workdir = workdir
        self.memory = memory
        self.ssh_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.tunnels: list[subprocess.Popen[bytes]] = []

    # -- life cycle ----------------------------------------------------------------------------

    def boot(self) -> None:
        with open(self.workdir / "qemu.log", "wb") as log:  # qemu keeps its own descriptor
            self.proc = self._qemu(log)
        deadline = time.monotonic() + BOOT_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"qemu exited: {(self.workdir / 'qemu.log').read_text()}")
            if self.ssh("true", timeout=30, check=False).returncode == 0:
                return
            time.sleep(5)
        raise RuntimeError(f"no ssh in {BOOT_TIMEOUT:.0f} s; console:\n{self.console()}")

    def _qemu(self, log: IO[bytes]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["qemu-system-x86_64", "-accel", "tcg,thread=multi,tb-size=1024", "-cpu", "max",
             "-machine", "q35", "-smp", "2", "-m", self.memory,
             "-kernel", str(self.base / "vmlinuz"), "-initrd", str(self.base / "initrd.img"),
             "-append", "root=/dev/vda ro console=ttyS0",
             "-drive", f"file={self.disk},format=qcow2,if=virtio",
             "-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{self.ssh_port}-:22",
             "-device", "virtio-net-pci,netdev=n0,romfile=",
             "-display", "none", "-serial", f"file:{self.workdir / 'console.log'}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )  # fmt: skip

    def console(self) -> str:
        with contextlib.suppress(OSError):
            return (self.workdir / "console.log").read_text(errors="replace")[-3000:]
        return ""

    def stop(self) -> None:
        for tunnel in self.tunnels:
            tunnel.kill()
            tunnel.wait()
        self.tunnels = []
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    # -- talking to it -------------------------------------------------------------------------

    def _ssh_argv(self, *extra: str) -> list[str]:
        return [
            "ssh", "-i", str(self.base / "id_ed25519"), "-p", str(self.ssh_port),
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=30", "-o", "BatchMode=yes",
            "-o", "ServerAliveInterval=15", *extra, "root@127.0.0.1",
        ]  # fmt: skip

    def ssh(
        self, command: str, *, input: bytes | None = None, timeout: float = 300, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a shell command in the guest as root."""
        try:
            done = subprocess.run(
                [*self._ssh_argv(), command], input=input, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            if check:
                raise
            return subprocess.CompletedProcess(command, 255, "", "timed out")
        out = subprocess.CompletedProcess(
            command, done.returncode, done.stdout.decode(errors="replace"),
            done.stderr.decode(errors="replace"),
        )  # fmt: skip
        if check and out.returncode != 0:
            raise RuntimeError(f"`{command}` exited {out.returncode}:\n{out.stdout}{out.stderr}")
        return out

    def copy_repository(self, dest: str, tar: bytes) -> None:
        """This repository, unpacked at dest over what is there, but for its .venv (made from
        the same pyproject.toml, which the disk's key covers)."""
        q = shlex.quote(dest)
        clear = f"find {q} -mindepth 1 -maxdepth 1 ! -name .venv -exec rm -rf {{}} +"
        venv = f"{q}/.venv"
        self.ssh(
            f"mkdir -p {q} && {clear} && tar -x -C {q} && "
            f"if [ -d {venv} ]; then touch {venv}/.created {venv}/.installed; fi",
            input=tar,
        )

    def forward(self, guest_port: int) -> int:
        """A host port on 127.0.0.1 that reaches the guest's 127.0.0.1:guest_port over ssh."""
        port = free_port()
        tunnel = subprocess.Popen(
            [*self._ssh_argv("-N", "-L", f"127.0.0.1:{port}:127.0.0.1:{guest_port}")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.tunnels.append(tunnel)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return port
            time.sleep(0.5)
        raise RuntimeError("the ssh tunnel did not come up")


@contextlib.contextmanager
def booted() -> Iterator[Guest]:
    """A guest with the repository at SRC: set up natively (or bare: not set up)."""
    prep = preparation()
    base, backing = prep.wait()
    t = time.monotonic()
    disk = prep.workdir / "disk.qcow2"
    subprocess.run(
        ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(backing), str(disk)],
        check=True,
    )
    guest = Guest(base, disk, prep.workdir)
    try:
        guest.boot()
        t = stamp("boot until ssh answers", t)
        guest.copy_repository(SRC, prep.tar.read_bytes())
        yield guest
    finally:
        guest.stop()
        disk.unlink(missing_ok=True)


def stamp(label: str, since: float) -> float:
    """Print how long a stage took (shown with pytest -s, and in CI's log on failure)."""
    now = time.monotonic()
    print(f"vm: {label}: {now - since:.0f} s", flush=True)
    return now


def is_root() -> bool:
    return os.geteuid() == 0
