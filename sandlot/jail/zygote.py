"""A root helper that keeps the next box of its slot built, and starts runs in it.

Started by a slot's spawner as `INTERPRETER -I -S -c BOOT SOURCE FD INIT` (BOOT compiles this
file, read from descriptor SOURCE, under a name that is no path: zygotes.py), as root, in the
slot's cgroups. It imports only the standard library (it runs on the sandbox runtime's
interpreter, which does not have sandlot) and never runs user code itself. A box's first
process is its init (INIT, built from box_init.c), which the zygote starts with posix_spawn as
pid 1 of a new pid namespace (the zygote unshares it for that child only). The init

- enters the run's own cgroup if it has one (v2), unshares mount, net, ipc, uts and cgroup
  namespaces, makes its tree a copy of the template's (the read-only part of the spawner's
  mount plan, the same plan bubblewrap is given, built once and pivoted into), mounts what is
  the box's own (/proc, /tmp, /dev/shm, devpts) and brings loopback up;
- confines itself: drops every capability and the bounding set, takes the slot uid, sets
  no_new_privs and the seccomp filter; says it is ready and waits for its run;
- sets the run's rlimits, cwd and environment, and starts the program with posix_spawn (in a
  session of its own, on the run's stdio); then reaps until that process ends. When the init
  exits the kernel kills whatever is left in the namespace.

A Python script is run by a fork of this warm interpreter instead, made when its run comes: it
joins the box's namespaces and cgroup, confines itself the same way and runs the script, while
the init only reaps; once the script has ended the zygote kills the init, and with it the box.

Building a box costs most of a short run (research/isolation.md §5), so the zygote builds the
next one as soon as the spawner has swept the last run away (`prepare`), and a run whose mount
plan matches only hands the box's init its stdio. A box is used once: a run never sees another
run's box.
Differences a script run in-process can notice: the hash seed is shared by the runs of a slot,
`sys.flags` shows -I -S (site is imported after the privileges are dropped), and a stack the
script walks (traceback.print_stack, a warning's stacklevel) goes on below it into frames of
`<sandlot zygote>`. A script's end is the interpreter's (see `finish`), whatever names the
script rebound. SIGTERM and SIGXCPU have a handler that flushes stdout and stderr before the
signal ends the script as it would have (the jail's time limit sends SIGTERM before its kill: a
script's buffered output, lost to a kill, is kept).

Protocol over FD (a SOCK_SEQPACKET socket): first message the seccomp filter (raw BPF), then a
JSON list of preludes (texts many scripts begin with, compiled here once: see Preludes); then
{"prepare": box} to build a box ahead, or {"box": box, "run": run} with four fds attached (stdin,
stdout, stderr, setup-error pipe). A box with "reuse_net" set may be built in the network
namespace of the box before it, once that box's run is over and only if the run left it as it
was made (see Networks): only one box at a time may use it, as a slot's runs do. For a run
the zygote answers {"pid": pid} with a pidfd of the run's top process (the box's init, or the
script's process) at once; while the run goes on, {"attach": PATH} with one detached mount puts
that mount at PATH in the box in place of what was there (a live box's work dir moved onto new
layers: layers.py), answered {"attached": true} or {"error": why}; then {"status": wait-status}
when it has ended (the zygote reaps it, and then the box), and {"released": true} once the
box's mount namespace is gone (see
Box.release), with the memory of its /tmp and /dev/shm.
"""

import ctypes
import errno
import json
import os
import platform
import resource
import select
import signal
import socket
import stat
import sys

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV = 1, 2, 4
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_CAPBSET_DROP = 1, 4, 15, 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, SECCOMP_MODE_FILTER = 22, 38, 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}[platform.machine()]
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
SETUP_FAILED = 126

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
OWN_PID_NS = os.open("/proc/self/ns/pid", os.O_RDONLY)
OWN_NET_NS = os.open("/proc/self/ns/net", os.O_RDONLY)
OWN_MNT_NS = os.open("/proc/self/ns/mnt", os.O_RDONLY)
# move_mount(2) and its flag (Linux 5.2; the same number on every architecture)
SYS_MOVE_MOUNT, MOVE_MOUNT_F_EMPTY_PATH, AT_FDCWD = 429, 4, -100
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p]  # fmt: skip


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def prctl(option, arg=0):
    check(libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def set_comm(comm):
    """What ps and top call this process (until an exec renames it)."""
    libc.prctl(PR_SET_NAME, comm, 0, 0, 0)


def mount(source, target, fstype, flags, data=None):
    enc = [None if v is None else v.encode() for v in (source, target, fstype, data)]
    check(libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


# -- the box's template: its read-only tree, built once per plan -------------------------------


def make_target(path, like):
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    if os.path.isdir(like):
        os.makedirs(path, mode=0o755, exist_ok=True)
    elif not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def bind(src, dst, read_only, device=False):
    make_target(dst, src)
    mount(src, dst, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (0 if device else MS_NODEV)
    mount(None, dst, None, flags | (MS_RDONLY if read_only else 0))


def dev(dst):
    """The box's /dev, all but its devpts (a new instance per box, see devpts)."""
    os.makedirs(dst, mode=0o755, exist_ok=True)
    mount("tmpfs", dst, "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for name in DEVICES:
        bind(f"/dev/{name}", os.path.join(dst, name), read_only=False, device=True)
    for link, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"),
                         ("ptmx", "pts/ptmx")):  # fmt: skip
        os.symlink(target, os.path.join(dst, link))
    os.makedirs(os.path.join(dst, "pts"))


# Steps whose mounts belong to one box only: a fresh /proc for its pid namespace, fresh tmpfs
# for /tmp and /dev/shm, and a run's own binds. Every other step is read-only or wiped between
# runs (the work dir), so it is built once, in a template, and copied into each box.
PER_BOX = ("proc", "tmpfs", "run-bind")


def build_template(root, steps):
    """In a new mount namespace: the box's read-only tree mounted at root, pivoted into.

    Mount points of the per-box steps are made here, as the tree turns read-only at the end.
    """
    check(libc.unshare(CLONE_NEWNS), "unshare")
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing of what follows reaches the host
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for kind, *args in steps:
        if kind in ("ro-bind", "bind"):
            bind(args[0], root + args[1], read_only=kind == "ro-bind")
        elif kind == "symlink":
            os.symlink(args[0], root + args[1])
        elif kind in PER_BOX:
            os.makedirs(root + args[-1 if kind == "run-bind" else 0], mode=0o755, exist_ok=True)
        elif kind == "dev":
            dev(root + args[0])
        elif kind == "remount-ro":
            mount(None, root + args[0] if args[0] != "/" else root, None,
                  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)  # fmt: skip
        else:
            raise ValueError(f"unknown plan step {kind}")
    os.chdir(root)
    check(libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def held_namespaces(what, setup, names):
    """Run `setup` in a child that then waits, and keep the namespaces `names` it is in, by
    descriptor, once it is gone. If setup fails, an OSError naming `what` and why."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            setup()
            os.close(w)  # set up: EOF
            signal.pause()  # until we hold its namespaces and kill it
        except BaseException as exc:
            os.write(w, f"{type(exc).__name__}: {exc}".encode())
        os._exit(SETUP_FAILED)
    os.close(w)
    failure = read_all(r)
    try:
        if failure:
            raise OSError(f"{what}: {failure.decode(errors='replace')}")
        return [os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC) for name in names]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


class Template:
    """A mount namespace holding a box's read-only tree, built once per plan and kept by a
    descriptor; every box of that plan starts as a copy of it (a handful of mounts) instead of
    a copy of the host's whole tree with two dozen mounts of its own on top."""

    def __init__(self, box):
        def setup():
            build_template(box["root"], box["plan"])

        (self.fd,) = held_namespaces("the box's template", setup, ("mnt",))

    def close(self):
        os.close(self.fd)


def read_all(fd):
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


class Templates:
    """The templates of the plans a slot's runs ask for, the least recently used dropped."""

    KEEP = 8

    def __init__(self):
        self.by_key = {}

    def get(self, box):
        key = json.dumps([box["root"], template_steps(box["plan"])])
        template = self.by_key.pop(key, None) or Template(box)
        self.by_key[key] = template  # now the most recent
        while len(self.by_key) > self.KEEP:
            self.by_key.pop(next(iter(self.by_key))).close()
        return template.fd

    def clear(self):
        """Drop every template (and the mounts they hold: a live box's old work dir)."""
        while self.by_key:
            self.by_key.popitem()[1].close()


def template_steps(plan):
    """What of a plan its template holds: a run's own bind only as the place it goes."""
    return [step if step[0] != "run-bind" else ["run-bind", step[-1]] for step in plan]


# open_tree(2) and its flags (the same numbers on every architecture: a syscall added in 5.2).
SYS_OPEN_TREE, OPEN_TREE_CLONE = 428, 1
libc.syscall.restype = ctypes.c_long


def clone_tree(path):
    """A detached copy of the mount at `path` (not of the mounts below it), as a descriptor the
    box's init attaches in its own mount namespace: opened here, where host paths are seen."""
    fd = libc.syscall(SYS_OPEN_TREE, -100, os.fsencode(path), OPEN_TREE_CLONE | os.O_CLOEXEC)
    check(-1 if fd < 0 else 0, f"open_tree {path}")
    return fd


def drop_to(uid):
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a uid change clears it


def last_cap():
    with open("/proc/sys/kernel/cap_last_cap") as f:
        return int(f.read())


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]  # fmt: skip


# -- the network namespace a box hands on to the next -------------------------------------------

# What the kernel shows of a network namespace, from inside it: the loopback's counters, the
# IP, ICMP, TCP, UDP and IPv6 statistics, how many sockets are alive (sockstat's first line:
# the rest of it counts for every namespace at once), IPv6 flow labels (which outlive their
# sockets) and multicast memberships. The tables of TCP sockets and of tracked connections are
# not read: they walk hashes shared by every namespace (2 ms each, measured), and neither ever
# holds an entry without a socket alive or a packet counted.
NET_STATE = ("dev", "snmp", "snmp6", "netstat", "sockstat", "ip6_flowlabel", "igmp", "igmp6",
             "mcfilter", "mcfilter6")  # fmt: skip


def net_state(fd, new=None):
    """NET_STATE of the network namespace `fd`, read from inside it (None for a file this
    kernel does not have: IPv6's, where it is turned off); given its state `new`, only up to
    the first file that differs (a run that used the network shows in the first, the
    loopback's counters, and the rest need not be read)."""
    check(libc.setns(fd, CLONE_NEWNET), "setns")
    try:
        net = os.open("/proc/thread-self/net", os.O_RDONLY | os.O_DIRECTORY)
        state = []
        try:
            for name in NET_STATE:
                state.append(net_file(name, net))
                if new is not None and state[-1] != new[len(state) - 1]:
                    break
        finally:
            os.close(net)
        return state
    finally:
        if libc.setns(OWN_NET_NS, CLONE_NEWNET):
            os._exit(SETUP_FAILED)  # never go on from inside a box's namespace


def net_file(name, net):
    try:
        text = read_all(os.open(name, os.O_RDONLY, dir_fd=net))
    except FileNotFoundError:
        return None
    return text.split(b"\n", 1)[0] if name == "sockstat" else text


class Networks:
    """The network namespace a slot's boxes hand on, one box after another.

    A new network namespace costs a box more than anything else it builds (made, then torn
    down by a kernel thread: bench/kernel.py), and most runs never touch the network. So once
    a box's run is over, its namespace is kept, and the next box is built in it only if the
    kernel shows it exactly as it was when new (NET_STATE, read again then): a run that sent a
    packet, left a socket (in any state), a flow label or a membership, or moved a counter
    leaves a namespace that is dropped, and the next box makes a new one. No run can tell a
    namespace handed on from a new one but by its identity (its inode number)."""

    def __init__(self):
        self.kept = None  # (fd, its state when new)

    def take(self):
        """A namespace for the next box and its state when new, or None: make one."""
        kept, self.kept = self.kept, None
        if kept is None:
            return None
        fd, new = kept
        try:
            if net_state(fd, new) == new:
                return kept
        except OSError:
            pass  # a namespace that cannot be read is not handed on
        os.close(fd)
        return None

    def give(self, fd, new):
        """Keep the namespace of a box that is gone, with every process it had."""
        if self.kept is not None:
            os.close(self.kept[0])
        self.kept = (fd, new)


# -- a script's process: a fork of this warm interpreter that joins a box ---------------------


class Confinement:
    """Leave a script's process what a run may have, as the box's init has (box_init.c): the slot
    uid, no capability (nor any to regain), no_new_privs and the seccomp filter.

    Everything but the system calls is made once here, before any fork: a script's process
    copies each page of the zygote it writes to, and every object it made or imported for
    itself would cost it such pages (measured: confining itself took 0.9 ms, most of it that)."""

    def __init__(self, bpf):
        self.bpf = bpf  # what the box's init is sent, to confine itself with
        self.caps = range(last_cap() + 1)
        self.header = CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two data structs
        self.empty, self.held = (CapData * 2)(), (CapData * 2)()
        self.filter = ctypes.create_string_buffer(bpf, len(bpf))
        self.prog = SockFprog(len(bpf) // 8, ctypes.cast(self.filter, ctypes.c_void_p))

    def apply(self, uid):
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:  # the box, never the zygote or spawner sharing its cgroup, is the victim
            os.write(fd, b"1000")
        finally:
            os.close(fd)
        for cap in self.caps:  # each drop that succeeds proves that one gone from the set
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0):
                check(-1, f"dropping capability {cap}")
        drop_to(uid)
        # The uid change emptied every set but the inheritable one: empty them all, then prove
        # it, since a run must never start with a capability left (the ambient set is never
        # more than permitted and inheritable both: empty with them).
        header = ctypes.byref(self.header)
        check(libc.capset(header, self.empty), "capset")
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
        check(libc.capget(header, self.held), "capget")
        if bytes(self.held) != bytes(self.empty):
            raise OSError(f"capabilities remain: {bytes(self.held).hex()}")
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        prog = ctypes.byref(self.prog)
        check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0), "seccomp")


def fork_script(box, namespaces, run, fds, confinement):
    """Fork the process that runs a Python script in this warm interpreter, in the box whose
    namespaces (box_init.c's order: mnt, ipc, net, uts, cgroup, pid) are given: those, its pid
    namespace and cgroup, confined as the box's init is."""
    *joined, pid_ns = namespaces
    check(libc.setns(pid_ns, CLONE_NEWPID), "setns")  # for our next child only
    try:
        pid = os.fork()
    except BaseException:
        check(libc.setns(OWN_PID_NS, CLONE_NEWPID), "setns")
        raise
    if pid:
        check(libc.setns(OWN_PID_NS, CLONE_NEWPID), "setns")
        return pid
    stdio, errpipe = fds[:3], fds[3]
    try:
        close_all_but({0, 1, 2, *joined, *fds})
        set_comm(b"sandlot-run")
        if box["cgroup"]:
            with open(box["cgroup"], "w") as f:
                f.write("0")
        for fd in reversed(joined):  # the mount namespace last: its root becomes ours, and cwd
            check(libc.setns(fd, 0), "setns")
            os.close(fd)
        confinement.apply(box["uid"])
        # Changing uid made the process undumpable (its /proc files root's); as a program
        # started by exec would be, it is dumpable again. Its init is not.
        prctl(PR_SET_DUMPABLE, 1)
        for name, (soft, hard) in run["rlimits"].items():
            resource.setrlimit(getattr(resource, name), (soft, hard))
        if run["cpus"]:
            os.sched_setaffinity(0, run["cpus"])
        os.chdir(run["cwd"])
        os.environ.clear()
        os.environ.update(run["env"])
        os.setsid()
        for fd, target in zip(stdio, (0, 1, 2), strict=True):
            os.dup2(fd, target)
            os.close(fd)
    except BaseException as exc:
        fail_setup(errpipe, exc)
    os.close(errpipe)  # the run is set up
    try:
        run_script(run["argv"])
    finally:
        _exit(1)  # whatever happened to the script's end: never back into the zygote's loop


def flush_then_die(signum, frame):
    """The time is up (the jail's SIGTERM, or SIGXCPU at the CPU limit): what the script wrote
    goes out, then the signal ends it as it would have ended `python`."""
    for name in ("stdout", "stderr"):
        stream = _getattr(sys, name, None)
        try:
            stream.flush()  # type: ignore[union-attr]  # None fails as any non-stream does
        except _BaseException:  # closed by the script, its reader gone, or not a stream
            continue
    _set_handler(signum, signal.SIG_DFL)
    _kill(_getpid(), signum)


def run_script(argv):
    """Run `argv[0]` as __main__ the way `python SCRIPT ARGS` would, then exit."""
    import site
    import types

    for sig in (signal.SIGTERM, signal.SIGXCPU):
        signal.signal(sig, flush_then_die)

    sys.dont_write_bytecode = True
    if not WARM["site"]:
        site.main()  # the runtime's site-packages, processed as the sandbox user
    script = os.path.abspath(argv[0])
    sys.argv = list(argv)
    sys.orig_argv = [sys.executable, *argv]  # not the zygote's command line
    sys.path[0:0] = [os.path.dirname(script)]
    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    ended = None
    try:
        with open(script, "rb") as f:
            source = f.read()
        if b"\0" in source:
            # How CPython reads a file holding a NUL byte (by rules of its own, which change
            # from one version to the next) is not compile()'s: the interpreter itself runs it.
            os.execv(sys.executable, [sys.executable, *argv])
        for part in PRELUDES.compiled(source, script):
            _exec(part, main.__dict__)
    except _BaseException as exc:
        ended = exc  # handled below, outside this block: no exception is being handled there
    if ended is None:
        status = 0
    elif _issubclass(_type(ended), _SystemExit):
        status = exit_status(ended)
    else:
        status = report(ended)
    finish(status)


# -- a warm script's end ------------------------------------------------------------------------
# From here on the script has run: what its process does to end must not depend on any name the
# script could have rebound (SandboxFusion's and human-eval's guards set `exit`, `os._exit` and
# `sys.exit` to None; a script may replace any built-in). So it uses only what this module took
# before any script ran, under its own names, and looks up at run time only what the interpreter
# itself would (sys.excepthook, sys.stdout and sys.stderr, the threading module). What it
# reports comes from the script's frames, never this module's.

_exit, _write, _exec, _getattr, _type, _issubclass, _repr, _str = (
    os._exit, os.write, exec, getattr, type, issubclass, repr, str
)  # fmt: skip
_BaseException, _SystemExit, _int, _as_int = BaseException, SystemExit, int, int.__index__
_set_handler, _kill, _getpid = signal.signal, os.kill, os.getpid  # flush_then_die's
_traceback_of = vars(BaseException)["__traceback__"].__get__  # whatever the exception's class says
_with_traceback = BaseException.with_traceback
_display = sys.__excepthook__  # the interpreter's own report of an exception
_modules = sys.modules  # the interpreter's table, whatever `sys.modules` is made to name
_OWN = globals()
_MISSING = object()
C_LONG = 1 << 63
FLUSH_FAILED = 120  # the interpreter's status when it cannot flush stdout or stderr at exit


def _run_exitfuncs_of_atexit():
    """atexit's runner of the exit functions (the interpreter's, whichever `atexit` module
    registered them); imported here, it leaves sys.modules again: a script sees what it imports."""
    imported = "atexit" in _modules
    import atexit

    if not imported:
        del _modules["atexit"]
    return atexit._run_exitfuncs


_run_exitfuncs = _run_exitfuncs_of_atexit()


def exit_status(exc):
    """The status a SystemExit asks for, as the interpreter takes it: its `code`, None is 0,
    an int itself (-1 past a C long), anything else printed on stderr, and 1."""
    try:
        code = _getattr(exc, "code")
    except _BaseException:
        code = exc
    if code is None:
        return 0
    if _issubclass(_type(code), _int):
        n = _as_int(code)
        return n if -C_LONG <= n < C_LONG else -1
    say(code)
    say("\n")
    return 1


def report(exc):
    """An uncaught exception, reported as the interpreter does (sys.excepthook, and what it
    says when the hook is missing or fails), from the script's frames; the status to end with."""
    kind, tb = _type(exc), scripts(exc)
    sys.last_type, sys.last_value, sys.last_traceback = kind, exc, tb
    hook = _getattr(sys, "excepthook", _MISSING)
    if hook is _MISSING:
        say("sys.excepthook is missing\n")
        display(kind, exc, tb)
        return 1
    try:
        hook(kind, exc, tb)  # type: ignore[operator]  # whatever the script set, as Python does
    except _SystemExit as stop:
        return exit_status(stop)
    except _BaseException as failed:
        say("Error in sys.excepthook:\n")
        display(_type(failed), failed, scripts(failed))
        say("\nOriginal exception was:\n")
        display(kind, exc, tb)
    return 1


def scripts(exc):
    """The exception's traceback from its first frame that is not this module's, made its own
    (the interpreter's report shows the exception's)."""
    tb = _traceback_of(exc)
    while tb is not None and tb.tb_frame.f_globals is _OWN:
        tb = tb.tb_next
    _with_traceback(exc, tb)
    return tb


def display(kind, exc, tb):
    # Not contextlib.suppress: the script may have replaced it.
    try:  # noqa: SIM105
        _display(kind, exc, tb)
    except _BaseException:
        pass  # stderr is gone or broken: as for the interpreter, nothing more to say


def say(what):
    """Text (or an object's str) on sys.stderr, as the interpreter writes its own messages:
    fd 2 if there is no sys.stderr; nothing if that fails."""
    try:
        stream = _getattr(sys, "stderr", None)
        if stream is None:
            _write(2, _str(what).encode(errors="backslashreplace"))
        else:
            stream.write(_str(what))
    except _BaseException:
        pass


def ignored(exc, where):
    """An exception nothing can catch, reported as the interpreter reports one."""
    try:
        shown = _repr(where)
    except _BaseException:
        shown = "<object repr() failed>"
    say(f"Exception ignored in: {shown}\n")
    display(_type(exc), exc, scripts(exc))


def finish(status):
    """End the process as the interpreter's exit does: wait for the threads if threading was
    imported, run the exit functions, flush stdout and stderr (120 if that fails), exit."""
    threading = _modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except _BaseException as exc:
            ignored(exc, threading)
    try:
        _run_exitfuncs()
    except _BaseException as exc:  # an exit function's own error is reported by atexit
        ignored(exc, _run_exitfuncs)
    for name in ("stdout", "stderr"):
        stream = _getattr(sys, name, None)
        if stream is None or is_closed(stream):
            continue
        try:
            stream.flush()
        except _BaseException as exc:
            if name == "stdout":
                ignored(exc, stream)
            status = FLUSH_FAILED
    _exit(status & 0xFF)


def is_closed(stream):
    """As the interpreter asks at exit: a stream whose `closed` fails is open."""
    try:
        if stream.closed:
            return True
    except _BaseException:
        pass
    return False


# -- the zygote loop ----------------------------------------------------------------------------


def fail_setup(errpipe, exc):
    try:
        os.write(errpipe, f"{type(exc).__name__}: {exc}".encode())
    finally:
        os._exit(SETUP_FAILED)


# Signals Python ignores, which a program starts with at their default, as from a shell.
DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
NAMESPACES = 6  # descriptors a ready box's init sends
MNT, NET = 0, 2  # which of them are its mount and network namespaces


class Box:
    """A box being built or built, waiting for its run: its init's pid and our end of the
    channel to it."""

    def __init__(self, box, template, networks, confinement, init):
        self.box, self.confinement, self.networks = box, confinement, networks
        self.namespaces = []  # the box's, once it is ready
        self.mounts = None  # its mount namespace, held from its run's start (see release)
        self.key = json.dumps(box, sort_keys=True)
        # Its network namespace: one it is told to join (never handed on), or one to hand on
        # once it is gone (with its state when new).
        joined = box.get("net") or ""
        self.net = networks.take() if box["reuse_net"] and not joined else None
        # a run's own binds: detached copies of their mounts, attached by the init
        trees: list[int] = []
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            net = os.open(joined, os.O_RDONLY | os.O_CLOEXEC) if joined else -1
            steps = per_box_steps(box["plan"], trees)
        except BaseException:
            for fd in trees:
                os.close(fd)
            ours.close()
            theirs.close()
            self.hand_on()
            raise
        passed = (theirs.fileno(), template, self.net[0] if self.net else net, *trees)
        argv = [init, *map(str, passed[:2]), str(box["uid"]), box["cgroup"], box["hostname"],
                str(passed[2]), *steps]  # fmt: skip
        try:
            # For our next child only (our own pid namespace stays): it is pid 1 of a new one.
            check(libc.unshare(CLONE_NEWPID), "unshare")
            # The init keeps these at their numbers (a dup2 onto itself clears close-on-exec)
            # and closes every other descriptor it inherits.
            self.pid = os.posix_spawn(
                init, argv, {}, setsigdef=DEFAULT_SIGNALS,
                file_actions=[(os.POSIX_SPAWN_DUP2, fd, fd) for fd in passed if fd >= 0],
            )  # fmt: skip
        except BaseException:
            ours.close()
            self.hand_on()  # no box was started in it
            raise
        finally:
            theirs.close()
            for fd in (*trees, *([net] if net >= 0 else [])):
                os.close(fd)
            check(libc.setns(OWN_PID_NS, CLONE_NEWPID), "setns")
        self.chan = ours
        self.chan.send(confinement.bpf)

    def ready(self):
        """Wait until the box is built: b"ready" (its namespaces kept), a reason it failed, or b""
        if it was killed."""
        said, self.namespaces, _, _ = socket.recv_fds(self.chan, 4096, NAMESPACES)
        for fd in self.namespaces:
            os.set_inheritable(fd, False)  # recv_fds drops MSG_CMSG_CLOEXEC (Python 3.11)
        if self.box["reuse_net"] and self.net is None and len(self.namespaces) == NAMESPACES:
            fd = os.dup(self.namespaces[NET])  # a new namespace: what it shows now is "new"
            try:
                self.net = (fd, net_state(fd))
            except OSError:
                os.close(fd)  # not handed on
        return said

    def start(self, run, fds, ready):
        """Hand the run to the box's init (a script: tell it only to reap, and fork the script's
        process into the box); for a box that failed, the reason to the spawner. The pid of the
        run's top process."""
        pid = self.pid
        try:
            if not ready.startswith(b"ready") or len(self.namespaces) != NAMESPACES:
                os.write(fds[3], ready or b"the box ended before it was ready")
            elif run["script"]:
                pid = fork_script(self.box, self.namespaces, run, fds, self.confinement)
                self.chan.send(b"script")
            else:
                socket.send_fds(self.chan, [exec_request(run)], fds)
        except (OSError, ValueError) as exc:
            os.write(fds[3], f"{type(exc).__name__}: {exc}".encode())  # the init's channel ends
        if len(self.namespaces) == NAMESPACES:
            self.mounts = self.namespaces.pop(MNT)
        self.close()
        return pid

    def release(self):
        """Drop the box's mount namespace, once its run's status is sent. The last reference's
        teardown waits for an RCU grace period (namespace_unlock): held here, the box's init
        dies without that wait, and the run is answered before it, not after."""
        if self.mounts is not None:
            os.close(self.mounts)
            self.mounts = None

    def close(self):
        self.chan.close()
        for fd in self.namespaces:
            os.close(fd)
        self.namespaces = []

    def discard(self):
        os.kill(self.pid, signal.SIGKILL)  # the init's death takes the namespace down
        os.waitpid(self.pid, 0)
        self.close()
        self.hand_on()

    def hand_on(self):
        """Once no process of the box is left: its network namespace, for the next box."""
        if self.net is not None:
            self.networks.give(*self.net)
            self.net = None


# What a box's init mounts for itself: every other step is in its template.
PER_BOX_INIT = ("tmpfs", "proc", "dev", "run-bind")
RLIM_MASK = (1 << 64) - 1


def per_box_steps(plan, trees):
    """The init's STEP arguments; a run's own bind becomes "bind FD PATH", FD a copy of the
    mount to attach (appended to `trees`)."""
    out = []
    for kind, *args in plan:
        if kind == "run-bind":
            trees.append(clone_tree(args[0]))
            out += ["bind", str(trees[-1]), args[1]]
        elif kind in PER_BOX_INIT:
            out += [kind, *map(str, args)]
    return out


def exec_request(run):
    """A run as the init reads it (box_init.c): fields ending in NUL, none holding one."""
    limits = [(getattr(resource, name), *values) for name, values in run["rlimits"].items()]
    env = [f"{key}={value}" for key, value in run["env"].items()]
    fields = ["exec", run["cwd"], ",".join(map(str, run["cpus"])), str(len(limits)),
              *(str(v & RLIM_MASK) for limit in limits for v in limit),
              str(len(env)), *env, *run["argv"]]  # fmt: skip
    out = b"".join(os.fsencode(field) + b"\0" for field in fields)
    if out.count(b"\0") != len(fields):
        raise ValueError("a NUL in the run's argv, environment or cwd")
    return out


def close_all_but(keep):
    low = 0
    for fd in sorted(keep):
        if fd > low:  # an empty range is not a no-op: closerange(0, 0) closes every fd
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


class Boxes:
    """What the zygote keeps for the boxes it builds: their templates and the network
    namespace they hand on."""

    def __init__(self, bpf, init):
        self.confinement, self.init = Confinement(bpf), init
        self.templates = Templates()
        self.networks = Networks()

    def new(self, box):
        """A box being built for `box`; OSError if what it is made from cannot be (a template
        whose mounts the system refuses, say), which the run that asked for it reports."""
        return Box(box, self.templates.get(box), self.networks, self.confinement, self.init)


def serve(sock, bpf, init):
    boxes = Boxes(bpf, init)
    ahead = None
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 4)
        except ConnectionResetError:  # the spawner went without reading all it was sent
            return
        if not msg:
            return
        req = json.loads(msg)
        if "attach" in req:  # for a run that has ended meanwhile: there is no box to change
            for fd in fds:
                os.close(fd)
            sock.send(b'{"error": "the run has ended"}')
            continue
        box = req.get("prepare") or req["box"]
        if ahead is not None and ahead.key != json.dumps(box, sort_keys=True):
            ahead.discard()
            ahead = None
        try:
            this = ahead or boxes.new(box)
            ahead = None
            if "prepare" in req:
                ahead = this
                continue
            ready = this.ready()
            if not ready:  # killed while it waited (never by a run: it had none yet): once more
                this.discard()
                this = boxes.new(box)
                ready = this.ready()
        except OSError as exc:
            if "prepare" not in req:  # the run is refused, saying why; the zygote serves on
                for fd in fds:
                    os.close(fd)
                sock.send(json.dumps({"error": f"cannot build the box: {exc}"}).encode())
            continue
        top = this.start(req["run"], fds, ready)
        for fd in fds:
            os.close(fd)
        # A pidfd, opened while the process is our unreaped child, is the spawner's handle on
        # the run: it can wait for the exit and kill without ever racing a reused pid.
        pidfd = os.pidfd_open(top)
        cost = json.loads(ready[5:]) if ready.startswith(b"ready") else {}
        try:
            socket.send_fds(sock, [json.dumps({"pid": top, "cpu": cost}).encode()], [pidfd])
            status = wait_run(sock, top, pidfd, this, boxes.templates)
        finally:
            os.close(pidfd)
        if top != this.pid:  # the script's box: what the script left goes with its init
            os.kill(this.pid, signal.SIGKILL)
            os.waitpid(this.pid, 0)
        # The init reaped, every process of its pid namespace is gone too (the kernel ends them
        # all when it dies, and waits for them before the init can be reaped).
        this.hand_on()
        sock.send(json.dumps({"status": status}).encode())
        this.release()
        sock.send(b'{"released": true}')  # the box's mounts and their memory are gone


def wait_run(sock, top, pidfd, box, templates):
    """The wait status of the run's top process once it has ended (reaped here). Meanwhile a
    live box's mount may be replaced: {"attach": PATH} with a detached mount (open_tree) puts
    that mount at PATH in the box, in place of what was there, which goes once nothing in the
    box uses it (the templates, which hold it too, are dropped: a live box's zygote builds no
    other box); answered {"attached": true}, or {"error": why}."""
    while True:
        ready, _, _ = select.select([pidfd, sock], [], [])
        if pidfd in ready:
            return os.waitpid(top, 0)[1]
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 4096, 1)
        except ConnectionResetError:
            msg, fds = b"", []
        if not msg:  # the spawner is gone; nothing more comes
            return os.waitpid(top, 0)[1]
        try:
            path = json.loads(msg)["attach"]
            if len(fds) != 1 or box.mounts is None or not isinstance(path, str):
                raise ValueError("an attach takes a path and one mount, in a box with a run")
            templates.clear()
            attach(box.mounts, path, fds[0])
            answer: dict[str, object] = {"attached": True}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        sock.send(json.dumps(answer).encode())


def attach(mounts, path, tree):
    """In the mount namespace `mounts`: the mount at `path` detached (it goes once nothing uses
    it), and the detached mount `tree` attached there instead."""
    check(libc.setns(mounts, CLONE_NEWNS), "setns")
    try:
        where = path.encode()
        if libc.umount2(where, MNT_DETACH) and ctypes.get_errno() != errno.EINVAL:
            check(-1, f"detach {path}")  # EINVAL: nothing was mounted there
        move = libc.syscall(SYS_MOVE_MOUNT, tree, b"", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH)
        check(-1 if move < 0 else 0, f"attach {path}")
    finally:
        if libc.setns(OWN_MNT_NS, CLONE_NEWNS):
            os._exit(SETUP_FAILED)  # never go on inside a box's mount namespace


class Preludes:
    """Texts many warm scripts begin with (a judge's driver, given by the spawner), compiled
    here once: compiling its driver in each script's own process cost a run 0.85 ms of its CPU
    (measured), most of it pages of this interpreter that the compiler wrote to.

    A script that begins with one runs as if compiled whole: the rest is compiled first (a
    syntax error in it stops the script before any of it runs), on the lines it has in the
    script and after a statement of its own (its first string is no docstring); the prelude's
    code is the prelude's text compiled, under the script's name."""

    def __init__(self):
        self.known = []  # (text, code), longest first

    def load(self, texts):
        for text in texts:
            source = text.encode()
            # On lines of its own (the rest starts on the next), and none that could declare the
            # script's encoding (the first two lines of a script, which would apply to the rest).
            if text.endswith("\n") and b"coding" not in b"".join(source.split(b"\n")[:2]):
                self.known.append((source, compile(source, "<prelude>", "exec", dont_inherit=True)))
        self.known.sort(key=lambda known: -len(known[0]))

    def compiled(self, source, script):
        """The code objects to run, in order, for the script `source`."""
        for text, code in self.known:
            if source.startswith(text):
                rest = b"pass" + b"\n" * text.count(b"\n") + source[len(text) :]
                then = compile(rest, script, "exec", dont_inherit=True)
                return [named(code, script), then]
        return [compile(source, script, "exec", dont_inherit=True)]


def named(code, filename):
    """`code` as compiled from `filename`, with the code objects it holds."""
    consts = tuple(named(c, filename) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


PRELUDES = Preludes()

# Modules of the standard library that benchmark and RL programs import most (typing alone
# costs more than a whole `print(1)`): imported once here, every warm run starts with them.
PRELOAD = ("typing", "re", "collections", "math", "itertools", "functools", "heapq", "bisect",
           "string", "random", "copy", "json", "enum", "datetime", "operator", "fractions",
           "decimal", "statistics", "hashlib", "dataclasses", "abc", "io", "array",
           "socket", "ctypes", "traceback")  # fmt: skip
WARM = {"site": False}


def root_only(path):
    """Whether nobody but root can change path or any directory above it."""
    while True:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return True  # nothing there to load
        if st.st_uid != 0 or st.st_mode & 0o022:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


def warm_up(preludes):
    """Do here, once, as root, what every warm run would otherwise do for itself: process the
    runtime's site-packages (only if nobody but root can change them, since their .pth files
    run code), import the modules of PRELOAD and compile the preludes. Each run is a fork: what
    one changes, no other sees; `random` reseeds itself in every fork."""
    import gc
    import importlib
    import site
    import sysconfig

    places = [*site.getsitepackages(), sysconfig.get_paths()["stdlib"]]
    if all(root_only(place) for place in places):
        site.main()
        WARM["site"] = True
        for module in PRELOAD:
            importlib.import_module(module)
    PRELUDES.load(preludes)
    gc.collect()
    gc.freeze()  # what a fork inherits is never scanned again, so its pages stay shared


def as_from_a_shell():
    """Signals as `python` started from a shell has them, whatever the server inherited (nohup
    and a shell's background jobs ignore SIGHUP, SIGINT, SIGQUIT): a warm script forks with
    them, and every box's init starts from them."""
    for sig in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP, *DEFAULT_SIGNALS}:
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def main():
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the spawner is single-threaded: this is reliable
    set_comm(b"sandlot-zygote")
    as_from_a_shell()
    sock = socket.socket(fileno=int(sys.argv[1]))
    os.set_inheritable(sock.fileno(), False)  # no box's init may inherit it
    if not stat.S_ISSOCK(os.fstat(sock.fileno()).st_mode):
        return
    bpf = sock.recv(1 << 16)
    warm_up(json.loads(sock.recv(1 << 17) or b"[]"))  # zygotes.PRELUDES_MAX
    serve(sock, bpf, sys.argv[2])


if __name__ == "__main__":
    main()
