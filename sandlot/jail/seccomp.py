"""The seccomp deny-list, compiled once to raw BPF that bwrap loads with `--seccomp FD`.

Default allow; deny what the namespaces leave open and no program under test needs: nested user
namespaces, io_uring, the keyring, ptrace, the mount family, bpf, perf, module and clock syscalls
(research/isolation.md §4), sockets of families and protocols beyond the common ones, and what
would have the kernel load a module.
"""

from __future__ import annotations

import errno
import os
import tempfile
from typing import Any

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

# The socket families a program may open: local (unix), IPv4, IPv6, and netlink for routing
# (getifaddrs, getaddrinfo's AI_ADDRCONFIG, if_nameindex). A socket of any other family, of an
# IP protocol built as a module (DCCP, L2TP, SCTP, SMC), or of another netlink protocol (socket
# diagnostics load a module per family asked about) would have the host's kernel load that
# module on demand: code no run should reach, and state of its own in the box's network
# namespace, which a slot hands on from one box to the next when a run left it as it was made
# (zygote.py's Networks).
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)
MODULE_IP_PROTOCOLS = (33, 115, 132, 256)
NETLINK_PROTOCOLS = (0,)  # NETLINK_ROUTE
# Joining a multicast group (IPv4 and IPv6, any-source or source-specific) or an anycast one.
# A box has only loopback, which no multicast program needs; and a join on it has the kernel
# send reports a little later, after the run is over, which nothing left in the namespace
# shows. The program is told there is no such device, as where no route to the group exists.
IPPROTO_IP, IPPROTO_IPV6 = 0, 41
GROUP_JOINS = {IPPROTO_IP: (35, 39, 42, 46), IPPROTO_IPV6: (20, 27, 42, 46)}
# Setting a terminal's line discipline (a box has ptys): the kernel loads the discipline's
# module on demand (n_hdlc, n_gsm, ..., with a history of holes); no program here needs one.
TIOCSETD = 0x5423
# The kernel reads these arguments as a C int: only their low 32 bits count.
INT = 0xFFFFFFFF

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
        _socket_rules(sc, flt)
        flt.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, INT, TIOCSETD))
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


def _socket_rules(sc: Any, flt: Any) -> None:
    """socket() only for SOCKET_FAMILIES, no module's IP protocol, and netlink only for
    NETLINK_PROTOCOLS; socketpair() only for unix sockets; no group joined (GROUP_JOINS)."""
    no_family, no_protocol = sc.ERRNO(errno.EAFNOSUPPORT), sc.ERRNO(errno.EPROTONOSUPPORT)
    top = max(SOCKET_FAMILIES)
    # At or above the top family the whole 64-bit value is compared: a value with high bits
    # set is refused, whatever its low 32 bits say.
    flt.add_rule(no_family, "socket", sc.Arg(0, sc.GT, top))
    for family in range(top):
        if family not in SOCKET_FAMILIES:
            flt.add_rule(no_family, "socket", sc.Arg(0, sc.MASKED_EQ, INT, family))
    for family in (AF_INET, AF_INET6):
        for protocol in MODULE_IP_PROTOCOLS:
            flt.add_rule(no_protocol, "socket", sc.Arg(0, sc.MASKED_EQ, INT, family),
                         sc.Arg(2, sc.MASKED_EQ, INT, protocol))  # fmt: skip
    netlink = sc.Arg(0, sc.MASKED_EQ, INT, AF_NETLINK)
    flt.add_rule(no_protocol, "socket", netlink, sc.Arg(2, sc.GT, max(NETLINK_PROTOCOLS)))
    for protocol in range(max(NETLINK_PROTOCOLS)):
        if protocol not in NETLINK_PROTOCOLS:
            flt.add_rule(no_protocol, "socket", netlink, sc.Arg(2, sc.MASKED_EQ, INT, protocol))
    flt.add_rule(no_family, "socketpair", sc.Arg(0, sc.NE, AF_UNIX))
    for level, joins in GROUP_JOINS.items():
        for join in joins:
            flt.add_rule(sc.ERRNO(errno.ENODEV), "setsockopt", sc.Arg(1, sc.MASKED_EQ, INT, level),
                         sc.Arg(2, sc.MASKED_EQ, INT, join))  # fmt: skip


def filter_fd(bpf: bytes) -> int:
    """A fresh readable fd holding the filter; bwrap reads it to the end and closes it."""
    r, w = os.pipe()
    os.write(w, bpf)  # a few hundred bytes: far below a pipe's buffer
    os.close(w)
    return r
