"""The seccomp deny-list, compiled once to raw BPF that bwrap loads with `--seccomp FD`.

Default allow; deny what the namespaces leave open and no program under test needs: nested user
namespaces, io_uring, the keyring, ptrace, the mount family, bpf, perf, module and clock syscalls
(research/isolation.md §4).
"""

from __future__ import annotations

import errno
import os
import tempfile

from sandlot.errors import JailUnavailable

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount", "fsconfig", "fspick",
    "open_tree", "move_mount", "mount_setattr",
    "unshare", "setns",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "open_by_handle_at", "name_to_handle_at", "fanotify_init", "lookup_dcookie",
    "sethostname", "setdomainname",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "vhangup", "pkey_alloc",
    "mbind", "set_mempolicy", "migrate_pages", "move_pages",
)  # fmt: skip

UNKNOWN_SYSCALL = -1  # libseccomp's __NR_SCMP_ERROR

# clone() flags that would make a new namespace from inside the box (mount, cgroup, uts, ipc,
# user, pid, net).
CLONE_NEW_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)


def compile_filter(denied: tuple[str, ...] = DENIED) -> bytes:
    """The filter as raw BPF bytes, ready to be handed to bwrap.

    Every rule must compile: a syscall name libseccomp does not know may be one this kernel
    has, and a deny-list with a silent gap is no deny-list (JailUnavailable names it).
    """
    try:
        import pyseccomp as sc
    except ImportError as exc:  # pragma: no cover - a missing dependency is an install fault
        raise JailUnavailable(f"seccomp unavailable: cannot import pyseccomp ({exc})") from exc
    try:
        flt = sc.SyscallFilter(sc.ALLOW)
        arch = sc.system_arch()
        for name in denied:
            # Syscalls the architecture lacks resolve to pseudo-numbers (<= -10000) that compile
            # to nothing, rightly: they cannot be called. -1 is a name libseccomp never heard of.
            if sc.resolve_syscall(arch, name) == UNKNOWN_SYSCALL:
                raise JailUnavailable(
                    f"seccomp: libseccomp does not know the syscall {name!r} on this "
                    "architecture, so it cannot be denied; upgrade libseccomp"
                )
            flt.add_rule(sc.ERRNO(errno.EPERM), name)
        for flag in CLONE_NEW_FLAGS:
            flt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        # clone3 passes its flags in a struct the filter cannot read: make it look absent so that
        # libc falls back to clone(), which the rule above can judge.
        flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        with tempfile.TemporaryFile() as out:
            flt.export_bpf(out)
            out.seek(0)
            return out.read()
    except JailUnavailable:
        raise
    except Exception as exc:
        raise JailUnavailable(f"cannot build the seccomp filter: {exc}") from exc


def filter_fd(bpf: bytes) -> int:
    """A fresh readable fd holding the filter; bwrap reads it to the end and closes it."""
    r, w = os.pipe()
    os.write(w, bpf)  # a few hundred bytes: far below a pipe's buffer
    os.close(w)
    return r
