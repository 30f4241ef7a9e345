"""What a box is made of (the mount plan), and the bubblewrap command line that builds it.

The plan is plain data so that the warm-interpreter path (`zygote.py`) builds exactly the same
box with mount syscalls: one description of what a run can see, two ways to make it.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import msgspec

from sandlot.jail.spec import RunSpec

# What the box sees of the host's /etc (copied into the box's own /etc at start-up, along with
# the /etc entries runs ask for); everything else of the host is /usr and a run's extra binds.
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

BOX_WORKDIR = "/sandbox"
HOSTNAME = "sandlot"
DEFAULT_ENV = {
    # Debian's programs: the host's /usr/local (a hand-installed node, go, rustc) is not what
    # the rows were set up with, nor what a fresh machine or the image has.
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "USER": "sandbox",
}

# A plan step is (kind, *args):
#   ("ro-bind", src, dst) ("bind", src, dst) ("symlink", target, dst) ("tmpfs", dst, size)
#   ("proc", dst) ("dev", dst) ("remount-ro", dst) ("run-bind", src, dst): writable, this box's
#   alone (RunSpec.binds), never part of a template
Step = tuple[str, ...]


class BoxLayout(msgspec.Struct, frozen=True):
    """Host-side facts the plan needs, fixed for the life of a slot."""

    bwrap: str
    workdir: str  # host path of the slot's work dir tmpfs
    root_dir: str  # host dir, empty, where the warm path mounts a box's root before pivoting
    etc_dir: str  # host dir that is the box's /etc (see make_etc)
    ro_binds: tuple[str, ...]  # binds every run gets (toolchain roots)
    tmp_size: int
    shm_size: int


def make_etc(target: Path, uids: list[int], extra: tuple[str, ...]) -> None:
    """The box's /etc: curated host entries copied, plus a passwd, group, hosts of its own.

    One read-only bind of this directory replaces a dozen binds of single files, a millisecond
    of every run's CPU. Copies are refreshed at every start, so host updates reach new boxes.
    Only what any user of the host may read is copied (never /etc/ssl/private, a 0600 key):
    the box must not see more of /etc than an unprivileged host user does.
    """
    target.mkdir(mode=0o755, exist_ok=True)
    target.chmod(0o755)
    for path in dict.fromkeys((*HOST_ETC, *extra)):
        src = Path(path)
        if src.is_symlink() or src.is_file() or src.is_dir():
            rel = src.relative_to("/etc")
            for parent in reversed(rel.parents[:-1]):  # /etc/a/b alone: a is the box's own
                if not (target / parent).exists():
                    (target / parent).mkdir()
                    (target / parent).chmod(0o755)
            _copy_public(src, target / rel)
    for name, text in synthetic_etc(uids).items():
        (target / name).write_text(text)
        (target / name).chmod(0o644)


def _public(st: os.stat_result) -> bool:
    if stat.S_ISLNK(st.st_mode):
        return True  # a link shows nothing itself; its target is judged when the box opens it
    if stat.S_ISDIR(st.st_mode):
        return st.st_mode & 0o005 == 0o005
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & 0o004)


def _copy_public(src: Path, dst: Path) -> None:
    """Copy src to dst, leaving out whatever (and whatever below it) others may not read."""
    st = src.lstat()
    if not _public(st):
        return
    if stat.S_ISDIR(st.st_mode):
        dst.mkdir(exist_ok=True)
        dst.chmod(0o755)
        for child in sorted(src.iterdir()):
            _copy_public(child, dst / child.name)
    elif stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src), dst)
    else:  # contents and a mode the box's users may read, nothing else of the host's file
        shutil.copyfile(src, dst)
        dst.chmod(0o644)


def synthetic_etc(uids: list[int]) -> dict[str, str]:
    users = "".join(f"sandbox{i}:x:{u}:{u}:sandbox:/tmp:/bin/sh\n" for i, u in enumerate(uids))
    groups = "".join(f"sandbox{i}:x:{u}:\n" for i, u in enumerate(uids))
    return {
        "passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        + users
        + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": "root:x:0:\n" + groups + "nogroup:x:65534:\n",
        "hosts": f"127.0.0.1 localhost {HOSTNAME}\n::1 localhost ip6-localhost ip6-loopback\n",
        "hostname": f"{HOSTNAME}\n",
        "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
    }


# Where plan() mounts something of the box's own over the host's tree (/dev/shm is under
# /dev): a host path below one of them, bound into a box, is hidden there.
BOX_OWN = ("/proc", "/dev", "/tmp", BOX_WORKDIR)


def hidden_in_a_box(path: str) -> str | None:
    """The place of a box's own that would hide `path` bound into the box, if one would."""
    return next((own for own in BOX_OWN if path == own or path.startswith(own + "/")), None)


def box_path(path: str) -> str:
    """`path` as a place a run's own bind may go: absolute, normal, and not where the box has
    something of its own (or ValueError saying why)."""
    parts = path.split("/")
    if not path.startswith("/") or any(p in ("", ".", "..") for p in parts[1:]) or "\0" in path:
        raise ValueError(f"a run's bind needs an absolute, normal path below /, not {path!r}")
    top = "/" + parts[1]
    if (own := hidden_in_a_box(path)) or top in ("/etc", "/usr", *(link for _, link in USR_LINKS)):
        raise ValueError(f"a run's bind cannot go to {path!r}: the box has {own or top} itself")
    return path


def plan(layout: BoxLayout, spec: RunSpec) -> list[Step]:
    steps: list[Step] = [("ro-bind", "/usr", "/usr")]
    steps += [("symlink", target, link) for target, link in USR_LINKS]
    steps.append(("ro-bind", layout.etc_dir, "/etc"))
    steps += [("proc", "/proc"), ("dev", "/dev")]
    steps += [("tmpfs", "/tmp", str(layout.tmp_size)), ("tmpfs", "/dev/shm", str(layout.shm_size))]
    seen = set()
    for path in (*layout.ro_binds, *spec.ro_binds):
        if path.startswith("/etc/"):
            continue  # copied into the box's /etc at start-up (JailConfig.etc_entries)
        if path not in seen and os.path.exists(path):
            seen.add(path)
            steps.append(("ro-bind", path, path))
    steps.append(("bind", layout.workdir, BOX_WORKDIR))
    steps += [("run-bind", src, box_path(dst)) for src, dst in spec.binds]
    # The root and /dev are tmpfs the box could fill: read-only once everything is mounted.
    steps += [("remount-ro", "/dev"), ("remount-ro", "/")]
    return steps


def environment(spec: RunSpec) -> dict[str, str]:
    return {**DEFAULT_ENV, **spec.env, "PWD": BOX_WORKDIR}


def command(layout: BoxLayout, spec: RunSpec, seccomp_fd: int) -> list[str]:
    argv = [
        layout.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--hostname", HOSTNAME,
    ]  # fmt: skip
    for kind, *args in plan(layout, spec):
        if kind == "tmpfs":
            argv += ["--size", args[1], "--tmpfs", args[0]]
        elif kind == "run-bind":
            argv += ["--bind", *args]
        else:
            argv += [f"--{kind}", *args]
    argv += ["--chdir", BOX_WORKDIR]
    for key, value in environment(spec).items():
        argv += ["--setenv", key, value]
    argv += ["--seccomp", str(seccomp_fd), "--", *spec.argv]
    return argv
