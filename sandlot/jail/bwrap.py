"""The bubblewrap command line of one run. Pure: no I/O beyond checking which paths exist."""

from __future__ import annotations

import os
from dataclasses import dataclass

from sandlot.jail.spec import RunSpec

# What the box sees of the host besides /usr and the extra binds of a run.
HOST_ETC = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl",
)
# Merged-/usr links, as on the host.
USR_LINKS = (
    ("usr/bin", "/bin"),
    ("usr/lib", "/lib"),
    ("usr/lib64", "/lib64"),
    ("usr/sbin", "/sbin"),
)
SYNTHETIC_ETC = ("passwd", "group", "hosts", "hostname", "nsswitch.conf")

BOX_WORKDIR = "/work"
DEFAULT_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "USER": "sandbox",
}


@dataclass(frozen=True, slots=True)
class BoxLayout:
    """Host-side facts the command line needs, fixed for the life of a slot."""

    bwrap: str
    workdir: str  # host path of the slot's work dir tmpfs
    etc_dir: str  # host dir holding the synthetic passwd, group, hosts, ...
    ro_binds: tuple[str, ...]  # binds every run gets (toolchain roots)
    tmp_size: int
    shm_size: int


def synthetic_etc(uids: list[int]) -> dict[str, str]:
    users = "".join(f"sandbox{i}:x:{u}:{u}:sandbox:/tmp:/bin/sh\n" for i, u in enumerate(uids))
    groups = "".join(f"sandbox{i}:x:{u}:\n" for i, u in enumerate(uids))
    return {
        "passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        + users
        + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": "root:x:0:\n" + groups + "nogroup:x:65534:\n",
        "hosts": "127.0.0.1 localhost sandlot\n::1 localhost ip6-localhost ip6-loopback\n",
        "hostname": "sandlot\n",
        "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
    }


def command(layout: BoxLayout, spec: RunSpec, seccomp_fd: int) -> list[str]:
    argv = [
        layout.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--hostname", "sandlot",
        "--ro-bind", "/usr", "/usr",
    ]  # fmt: skip
    for target, link in USR_LINKS:
        argv += ["--symlink", target, link]
    for path in HOST_ETC:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for name in SYNTHETIC_ETC:
        argv += ["--ro-bind", os.path.join(layout.etc_dir, name), f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(layout.tmp_size), "--tmpfs", "/tmp"]
    argv += ["--size", str(layout.shm_size), "--tmpfs", "/dev/shm"]
    seen = set()
    for path in (*layout.ro_binds, *spec.ro_binds):
        if path not in seen and os.path.exists(path):
            seen.add(path)
            argv += ["--ro-bind", path, path]
    argv += ["--bind", layout.workdir, BOX_WORKDIR]
    # bwrap's root and /dev are tmpfs the box could fill: read-only once everything is mounted.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", BOX_WORKDIR]
    for key, value in {**DEFAULT_ENV, **spec.env}.items():
        argv += ["--setenv", key, value]
    argv += ["--seccomp", str(seccomp_fd), "--", *spec.argv]
    return argv
