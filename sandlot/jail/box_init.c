/* A box's init: pid 1 of the box's pid namespace, started by the slot's zygote (zygote.py).

   A fork of the zygote's Python interpreter costs a box more than anything else it does (page
   tables copied, copy-on-write faults, a whole interpreter torn down: bench/kernel.py); this
   small static program, started with posix_spawn (a vfork), does the same work without them.

   argv: CHANNEL TEMPLATE UID CGROUP HOSTNAME NET STEP...
     CHANNEL   a SOCK_SEQPACKET socket to the zygote;
     TEMPLATE  a mount namespace holding the box's read-only tree (zygote.py's Template);
     UID       the slot uid the box runs as;
     CGROUP    the cgroup.procs to enter before anything else (the run's own cgroup), or "";
     HOSTNAME  the box's hostname;
     NET       a network namespace to join (an earlier box's, which its run left as it was
               made: zygote.py's Networks), or -1 for a new one with loopback up;
     STEP      the per-box mounts: "tmpfs" PATH SIZE | "proc" PATH | "dev" PATH | "bind" FD PATH,
               FD a detached mount (open_tree) the zygote made of a run's own directory.

   On the channel: the zygote sends the seccomp filter (raw BPF); the init builds the box,
   confines itself and answers "ready" with what that cost in CPU and descriptors of its
   namespaces (mnt, ipc, net, uts, cgroup, pid), or the reason it could not (then exits 126). Then comes the run: "exec" with its fields (see read_run) and four
   descriptors (stdin, stdout, stderr, and a pipe that is closed once the run is set up, or says
   why it could not be), or "script": the zygote forks a warm interpreter into this box itself,
   and the init only reaps orphans until it is killed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETUP_FAILED 126
#define RUN_MESSAGE (1 << 20)
#define PATH 4096
#define NAMESPACES 6

extern char **environ;

static int chan = -1;
static int errpipe = -1; /* once a run has come, where a failure to set it up is told */

static void fail(const char *what) {
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "OSError: %s: %s", what, strerror(errno));
    if (errpipe >= 0)
        (void)!write(errpipe, msg, n);
    else
        send(chan, msg, n, 0);
    _exit(SETUP_FAILED);
}

static void check(long result, const char *what) {
    if (result < 0)
        fail(what);
}

static void do_mount(const char *src, const char *dst, const char *type, unsigned long flags,
                     const char *data) {
    char what[PATH + 16];
    snprintf(what, sizeof what, "mount %s", dst);
    check(mount(src, dst, type, flags, data), what);
}

/* dir/name into path, which holds PATH bytes */
static void join(char *path, const char *dir, const char *name) {
    if (snprintf(path, PATH, "%s/%s", dir, name) >= PATH) {
        errno = ENAMETOOLONG;
        fail(dir);
    }
}

/* -- building the box: a copy of the template's tree, and the mounts of this box alone ------ */

static void bind_read_only(const char *path) {
    do_mount(path, path, NULL, MS_BIND | MS_REC, NULL);
    do_mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_RDONLY, NULL);
}

static void mount_proc(const char *dst) {
    static const char *read_only[] = {"sys", "sysrq-trigger", "irq", "bus"};
    char path[PATH];
    do_mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    for (size_t i = 0; i < sizeof read_only / sizeof *read_only; i++) {
        struct stat st;
        join(path, dst, read_only[i]);
        if (stat(path, &st) == 0)
            bind_read_only(path);
        else if (errno != ENOENT)
            fail(path); /* never a box whose /proc/sys is left writable unnoticed */
    }
}

static void mount_tmpfs(const char *dst, const char *size, unsigned uid) {
    char data[256];
    snprintf(data, sizeof data, "size=%s,mode=0755,uid=%u,gid=%u", size, uid, uid);
    do_mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, data);
}

static void mount_devpts(const char *dev) {
    char pts[PATH];
    join(pts, dev, "pts");
    do_mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620");
}

static void loopback_up(void) {
    struct ifreq ifr = {0};
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    check(s, "socket");
    strcpy(ifr.ifr_name, "lo");
    check(ioctl(s, SIOCGIFFLAGS, &ifr), "loopback flags");
    ifr.ifr_flags |= IFF_UP;
    check(ioctl(s, SIOCSIFFLAGS, &ifr), "loopback up");
    close(s);
}

#ifndef SYS_move_mount
#define SYS_move_mount 429 /* the same on every architecture (Linux 5.2) */
#endif
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004

/* A run's own directory (a detached mount, fd) attached at dst: writable, no devices, no
   set-uid programs. */
static void attach(const char *fd, const char *dst) {
    int tree = atoi(fd);
    char what[PATH + 16];
    snprintf(what, sizeof what, "attach %s", dst);
    check(syscall(SYS_move_mount, tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH), what);
    close(tree);
    do_mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, NULL);
}

static void enter_cgroup(const char *procs) {
    int fd = open(procs, O_WRONLY | O_CLOEXEC);
    check(fd, "cgroup");
    check(write(fd, "0", 1), "cgroup");
    close(fd);
}

static void build_box(int template, const char *hostname, int net, char **steps, unsigned uid) {
    check(setns(template, CLONE_NEWNS), "setns");
    if (net >= 0)
        check(setns(net, CLONE_NEWNET), "setns");
    check(unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
                  (net >= 0 ? 0 : CLONE_NEWNET)),
          "unshare");
    check(sethostname(hostname, strlen(hostname)), "sethostname");
    if (net < 0)
        loopback_up();
    for (char **step = steps; *step;) {
        if (!strcmp(step[0], "tmpfs") && step[1] && step[2]) {
            mount_tmpfs(step[1], step[2], uid);
            step += 3;
        } else if (!strcmp(step[0], "proc") && step[1]) {
            mount_proc(step[1]);
            step += 2;
        } else if (!strcmp(step[0], "dev") && step[1]) {
            mount_devpts(step[1]);
            step += 2;
        } else if (!strcmp(step[0], "bind") && step[1] && step[2]) {
            attach(step[1], step[2]);
            step += 3;
        } else {
            errno = EINVAL;
            fail(step[0]);
        }
    }
    check(chdir("/"), "chdir");
}

/* -- confinement: what a run may have, taken before any run is handed to the init ---------- */

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    check(fd, path);
    check(write(fd, text, strlen(text)), path);
    close(fd);
}

static int last_cap(void) {
    char buf[32] = {0};
    int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
    check(fd, "cap_last_cap");
    check(read(fd, buf, sizeof buf - 1), "cap_last_cap");
    close(fd);
    return atoi(buf);
}

/* Every capability set empty, proven from the kernel's own account: a run must never start
   with a capability left. */
static void clear_capabilities(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{0}};
    char status[8192], *line;
    check(syscall(SYS_capset, &header, data), "capset");
    check(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient capabilities");
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    check(fd, "/proc/self/status");
    ssize_t n = read(fd, status, sizeof status - 1);
    check(n, "/proc/self/status");
    close(fd);
    status[n] = 0;
    for (line = strtok(status, "\n"); line; line = strtok(NULL, "\n")) {
        char *value = strchr(line, '\t');
        if (!strncmp(line, "Cap", 3) && value && strtoull(value + 1, NULL, 16)) {
            errno = EPERM;
            fail(line);
        }
    }
}

static void confine(unsigned uid, const void *bpf, size_t len) {
    /* The box, never the zygote or spawner sharing its cgroup, is the OOM victim. */
    write_file("/proc/self/oom_score_adj", "1000");
    for (int cap = 0, last = last_cap(); cap <= last; cap++)
        check(prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "dropping a capability");
    check(setgroups(0, NULL), "setgroups");
    check(setresgid(uid, uid, uid), "setresgid");
    check(setresuid(uid, uid, uid), "setresuid");
    clear_capabilities();
    check(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable"); /* no run may ptrace its init */
    check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
    struct sock_fprog prog = {(unsigned short)(len / sizeof(struct sock_filter)),
                              (struct sock_filter *)bpf};
    check(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), "seccomp");
    /* Every change of credentials cleared the parent-death signal: armed again last, so that
       the box dies with its zygote. (Had the zygote died before, the channel ends: we exit.) */
    check(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "parent-death signal");
}

/* -- the run ------------------------------------------------------------------------------ */

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* How bwrap reports a status: the exit code, or 128+N for a signal. */
static int exit_code(int status) {
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void on_child(int sig) {
    (void)sig; /* pid 1 of a namespace ignores a signal left at its default: this wakes it */
}

static void reap_forever(void) {
    sigset_t chld, old;
    struct sigaction sa = {.sa_handler = on_child};
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    sigaction(SIGCHLD, &sa, NULL);
    for (;;) {
        while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
            ;
        sigsuspend(&old);
    }
}

/* The fields of an "exec" run, each NUL-terminated: CWD, CPUS (the program's CPUs, comma
   separated, or empty: the box's), N then N triples RESOURCE SOFT HARD (rlimits), M then M
   environment entries, then the argv to the end. */
static char *next_field(char **at, char *end) {
    char *field = *at;
    char *nul = memchr(field, 0, end - field);
    if (!nul) {
        errno = EINVAL;
        fail("the run's request");
    }
    *at = nul + 1;
    return field;
}

static char **fields(char **at, char *end, size_t count) {
    char **out = calloc(count + 1, sizeof *out);
    if (!out)
        fail("calloc");
    for (size_t i = 0; i < count; i++)
        out[i] = next_field(at, end);
    return out;
}

/* Its own, so no capability is needed: the zygote may have no CAP_SYS_NICE (a container). */
static void set_cpus(const char *list) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const char *p = list; *p;) {
        char *next;
        unsigned long cpu = strtoul(p, &next, 10);
        if (next == p || cpu >= CPU_SETSIZE || (*next && *next != ',')) {
            errno = EINVAL;
            fail("the run's CPUs");
        }
        CPU_SET(cpu, &set);
        p = *next ? next + 1 : next;
    }
    check(sched_setaffinity(0, sizeof set, &set), "sched_setaffinity");
}

static void start_run(char *msg, char *end, const int stdio[3]) {
    char *at = msg;
    if (end[-1] != 0) {
        errno = EINVAL;
        fail("the run's request"); /* every field, the last too, ends in a NUL */
    }
    next_field(&at, end); /* "exec" */
    const char *cwd = next_field(&at, end);
    const char *cpus = next_field(&at, end);
    if (*cpus)
        set_cpus(cpus);
    for (long n = strtol(next_field(&at, end), NULL, 10); n > 0; n--) {
        int resource = atoi(next_field(&at, end));
        struct rlimit lim = {strtoull(next_field(&at, end), NULL, 10),
                             strtoull(next_field(&at, end), NULL, 10)};
        check(setrlimit(resource, &lim), "setrlimit");
    }
    char **env = fields(&at, end, strtoul(next_field(&at, end), NULL, 10));
    size_t argc = 0;
    for (char *p = at; p < end; p = memchr(p, 0, end - p) + 1)
        argc++;
    if (argc == 0) {
        errno = EINVAL;
        fail("an empty argv");
    }
    char **argv = fields(&at, end, argc);
    check(chdir(cwd), "chdir");
    environ = env; /* the PATH a program name is searched on */

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawn_file_actions_init(&actions);
    for (int i = 0; i < 3; i++)
        posix_spawn_file_actions_adddup2(&actions, stdio[i], i);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &actions, &attr, argv, env);
    if (err) {
        dprintf(stdio[2], "sandlot: cannot execute %s: %s\n", argv[0], strerror(err));
        _exit(127);
    }
    for (int i = 0; i < 3; i++)
        close(stdio[i]);
    close(errpipe); /* its last copy: the run is set up */
    for (;;) { /* reap orphans until the program itself ends */
        int status;
        pid_t done = waitpid(-1, &status, __WALL);
        if (done == pid)
            _exit(exit_code(status));
        if (done < 0 && errno != EINTR)
            _exit(SETUP_FAILED);
    }
}

static int ascending(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

/* Nothing of the zygote's but stdio and what argv names: not its socket, nor a run's stdio it
   has just received (a box may be built while another request waits). */
static void close_all_but(int keep[], int count) {
    int low = 0;
    qsort(keep, count, sizeof *keep, ascending);
    for (int i = 0; i < count; i++) {
        if (keep[i] < low)
            continue; /* -1, or a repeat */
        if (keep[i] > low)
            syscall(SYS_close_range, low, keep[i] - 1, 0);
        low = keep[i] + 1;
    }
    syscall(SYS_close_range, low, ~0U, 0);
}

int main(int argc, char **argv) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    prctl(PR_SET_NAME, "sandlot-init", 0, 0, 0);
    if (argc < 7)
        return SETUP_FAILED;
    chan = atoi(argv[1]);
    int template = atoi(argv[2]);
    unsigned uid = strtoul(argv[3], NULL, 10);
    int net = atoi(argv[6]);
    int keep[6 + 64] = {0, 1, 2, chan, template, net}, kept = 6;
    for (int i = 7; i + 2 < argc && kept < 6 + 64; i++) /* a run's own binds' mounts */
        if (!strcmp(argv[i], "bind"))
            keep[kept++] = atoi(argv[i + 1]);
    close_all_but(keep, kept);

    static char bpf[65536];
    ssize_t len = recv(chan, bpf, sizeof bpf, 0);
    if (len <= 0)
        _exit(SETUP_FAILED); /* the zygote went away */
    if (argv[4][0])
        enter_cgroup(argv[4]); /* everything of the box is charged to the run's own cgroup */
    build_box(template, argv[5], net, argv + 7, uid);
    close(template);
    if (net >= 0)
        close(net);
    /* The box's namespaces, for the zygote to fork a script's process into: opened now, as
       root; once confined, the init may be reached by no one without CAP_SYS_PTRACE, which a
       container does not grant. */
    static const char *kinds[NAMESPACES] = {"mnt", "ipc", "net", "uts", "cgroup", "pid"};
    int namespaces[NAMESPACES];
    for (int i = 0; i < NAMESPACES; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
        namespaces[i] = open(path, O_RDONLY | O_CLOEXEC);
        check(namespaces[i], path);
    }
    double built = cpu_seconds();
    confine(uid, bpf, len);
    char ready[128];
    int n = snprintf(ready, sizeof ready, "ready{\"init\": %.6f, \"confine\": %.6f}", built,
                     cpu_seconds() - built);
    char sent[CMSG_SPACE(sizeof namespaces)] = {0};
    struct iovec said = {ready, n};
    struct msghdr out = {.msg_iov = &said, .msg_iovlen = 1, .msg_control = sent,
                         .msg_controllen = sizeof sent};
    struct cmsghdr *rights = CMSG_FIRSTHDR(&out);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof namespaces);
    memcpy(CMSG_DATA(rights), namespaces, sizeof namespaces);
    check(sendmsg(chan, &out, 0), "ready");
    for (int i = 0; i < NAMESPACES; i++)
        close(namespaces[i]);

    static char msg[RUN_MESSAGE];
    int fds[4];
    char control[CMSG_SPACE(sizeof fds)];
    struct iovec iov = {msg, sizeof msg};
    struct msghdr hdr = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    ssize_t got = recvmsg(chan, &hdr, MSG_CMSG_CLOEXEC);
    close(chan);
    if (got >= 6 && !memcmp(msg, "script", 6))
        reap_forever();
    struct cmsghdr *cm = CMSG_FIRSTHDR(&hdr);
    if (got <= 0 || !cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof fds))
        _exit(SETUP_FAILED); /* the zygote went away: nothing to run */
    memcpy(fds, CMSG_DATA(cm), sizeof fds);
    errpipe = fds[3];
    if (hdr.msg_flags & MSG_TRUNC) {
        errno = EMSGSIZE;
        fail("the run's request"); /* never a run read in part */
    }
    start_run(msg, msg + got, fds);
}
