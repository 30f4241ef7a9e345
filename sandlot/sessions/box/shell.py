"""Executions in one bash process that keeps its variables, functions and working directory.

bash runs interactive (`-i`, no line editing, no prompts, no history expansion) because only an
interactive shell answers SIGINT by abandoning the command line under way and reading the next
one, as Ctrl-C does in a terminal; a script shell would exit and lose its state. A cell is
sourced from a file (its stdin /dev/null, so it cannot read the agent's commands), and its exit
status comes back on a descriptor of its own, tagged with the execution's number: a status line
for an older execution, or a second one, is ignored. The same descriptor says when bash starts the
cell's command line: a SIGINT that lands while bash is still reading the line would drop part of
it and run the rest as a command, so an interrupt waits for that word.
"""

import codecs
import contextlib
import os
import select
import shlex
import signal
import subprocess
import time

from frames import PRIVATE

START_TIMEOUT = 30.0
RUNNING = "run"  # the status word for a command line bash has started
SETTLED = "settled"  # the status word for bash reading lines again after an interrupt
RESEND = 0.05  # seconds between SIGINTs to what an interrupt's first one missed


class Shell:
    def __init__(self, link):
        self.link = link
        self.proc = None
        self.pidfd = -1
        self.current = None
        self.running = False  # bash has started the current execution's command line
        self.code = None  # and reported its exit status
        self.seq = 0
        self.quiet = 0  # executions of the agent's own among them
        self.status_buf = b""
        os.makedirs(PRIVATE, mode=0o700, exist_ok=True)
        self.cell = os.path.join(PRIVATE, "cell.sh")

    def describe(self):
        return {"kernel": "bash"}

    def start(self):
        status_r, status_w = os.pipe()
        env = {**os.environ, "PS1": "", "PS2": "", "PS4": "+ "}
        self.proc = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc", "--noediting", "-i"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=[status_w], env=env, start_new_session=True,
        )  # fmt: skip
        os.close(status_w)
        self.status_fd = status_w
        self.status_r = status_r
        self.pidfd = os.pidfd_open(self.proc.pid)
        self.decoders = {
            self.proc.stdout.fileno(): ("stdout", codecs.getincrementaldecoder("utf-8")("replace")),
            self.proc.stderr.fileno(): ("stderr", codecs.getincrementaldecoder("utf-8")("replace")),
        }
        for fd in (*self.decoders, status_r):
            os.set_blocking(fd, False)
        self._send("set +H; unset HISTFILE PROMPT_COMMAND")
        self._send(f"printf '0 0\\n' >&{self.status_fd}")
        deadline = time.monotonic() + START_TIMEOUT
        while not self.status_buf.endswith(b"\n"):  # its start-up complaints (no tty) dropped
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("bash did not start")
            for fd in poll_fds([*self.decoders, status_r], 0.1):
                data = self._read(fd)
                if fd == status_r:
                    self.status_buf += data
        self.status_buf = b""

    def stop(self):
        if self.proc is not None:
            self._signal(signal.SIGKILL)
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                f.close()
            os.close(self.status_r)
            os.close(self.pidfd)
            self.proc = None

    def restart(self):
        self._end("error", restarted=True)
        self.stop()
        self.start()

    def _signal(self, signum):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signum)

    def _send(self, line):
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # bash is gone; its pidfd says so next

    # -- executions ----------------------------------------------------------------------------

    def execute(self, execution, quiet=False):
        """Run the execution's code; `quiet`: counted as no execution."""
        self.current, self.running, self.code = execution, False, None
        self.seq += 1
        self.quiet += quiet
        fd = os.open(self.cell, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(execution.code)
        self._send(f"{self._report(RUNNING)}; . {self.cell} </dev/null; {self._report('%d')} $?")

    def _report(self, word):
        """The command that tells the agent `word` about the current execution."""
        return f"printf '{self.seq} {word}\\n' >&{self.status_fd}"

    def interrupt(self):
        if self.current is not None:
            self.current.ask_interrupt()
            self._sigint()

    def _sigint(self):
        """SIGINT once bash runs the command line (until then the clock's start grace runs)."""
        current = self.current
        if not self.running or current.interrupted_at is not None:
            return
        current.interrupted_at = time.monotonic()
        self._signal(signal.SIGINT)
        # The interrupted command line is abandoned with its status report: report instead.
        self._send(self._report("130"))

    def _sigint_stragglers(self):
        """A command bash was forking as the SIGINT came missed it (not yet in the group, or
        still bash's code, which notes it and goes on to exec), and bash waits for it: the rest
        of the group gets SIGINT again until the interrupted execution has settled. (Background
        jobs ignore SIGINT: bash runs them so when it has no job control.)"""
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and int(entry.name) != self.proc.pid:
                with contextlib.suppress(OSError):
                    if os.getpgid(int(entry.name)) == self.proc.pid:
                        os.kill(int(entry.name), signal.SIGINT)

    def _settle(self):
        """An interrupted execution has its exit status, but bash may have read that report
        before reaping a straggler, and a straggler's death by SIGINT makes bash drop the line
        it is reading: the execution ends once bash answers a line read after all that (asked
        again each RESEND, in case the first was the line dropped)."""
        self._sigint_stragglers()
        self._send(self._report(SETTLED))

    def tick(self, now):
        due = self.current.due(now)
        if due == "interrupt":
            self.interrupt()
        elif due == "restart":
            self.restart()
        elif self.current.interrupted_at is not None:
            if self.code is None:
                self._sigint_stragglers()
            else:
                self._settle()

    def _end(self, status, **extra):
        if self.current is not None:
            self.current.end(status, execution_count=self.seq - self.quiet, **extra)
            self.current = None

    def state_code(self, kind, op, report):
        """The command line that does a snapshot's op in bash: the exported variables, the
        functions and the working directory, written as a script that sets them again."""
        path = shlex.quote(op["path"])
        if kind == "save":
            return (f'{{ declare -px; declare -f; printf "cd -- %q\\n" "$PWD"; }} > {path} '
                    f"&& printf '{{}}' > {shlex.quote(report)}")  # fmt: skip
        done = f"printf '{{}}' > {shlex.quote(report)}"
        if kind == "load":
            return f". {path}; rm -f {path}; {done}"
        return f'cd -- "$PWD" 2>/dev/null || cd /sandbox; rm -f {path}; {done}'

    # -- output ----------------------------------------------------------------------------

    def poll(self, fds, timeout):
        if self.current is not None and self.current.interrupted_at is not None:
            timeout = RESEND if timeout is None else min(timeout, RESEND)
        ready = []
        for fd in poll_fds([*self.decoders, self.status_r, self.pidfd, *fds], timeout):
            if fd == self.pidfd:
                self._died()
                return ready
            if fd in self.decoders:
                self._output(fd, self._read(fd))
            elif fd == self.status_r:
                self._status(self._read(fd))
            else:
                ready.append(fd)
        return ready

    def _read(self, fd):
        try:
            return os.read(fd, 1 << 16)
        except BlockingIOError:
            return b""

    def _output(self, fd, data):
        name, decoder = self.decoders[fd]
        text = decoder.decode(data)
        if text and self.current is not None:
            self.current.emit({"type": name, "text": text})

    def _status(self, data):
        self.status_buf += data
        *lines, self.status_buf = self.status_buf.split(b"\n")
        for line in lines:
            seq, _, code = line.decode(errors="replace").partition(" ")
            if self.current is None or seq != str(self.seq):
                continue
            if code == RUNNING:
                self.running = True
                if self.current.asked_at is not None:
                    self._sigint()
            elif code.isdigit() and self.code is None:
                self.code = int(code)
                if self.current.interrupted_at is None:
                    self._finish()
                else:
                    self._settle()
            elif code == SETTLED and self.code is not None:
                self._finish()

    def _finish(self):
        for fd in self.decoders:  # what the cell wrote before its status came
            while data := self._read(fd):
                self._output(fd, data)
        self._end("ok" if self.code == 0 else "error", exit_code=self.code)

    def _died(self):
        code = self.proc.poll()
        self._end("error", died=True, restarted=True, exit_code=code)
        self.stop()
        self.start()


def poll_fds(fds, timeout):
    """The descriptors readable within timeout seconds (None: wait)."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    ms = None if timeout is None else int(timeout * 1000) + 1
    return [fd for fd, _ in poller.poll(ms)]
