"""Executions in one bash process that keeps its variables, functions and working directory.

bash runs interactive (`-i`, no line editing, no prompts, no history expansion) because only an
interactive shell answers SIGINT by abandoning the command line under way and reading the next
one, as Ctrl-C does in a terminal; a script shell would exit and lose its state. A cell is
sourced from a file (its stdin /dev/null, so it cannot read the agent's commands), and its exit
status comes back on a descriptor of its own, tagged with the execution's number: a status line
for an older execution, or a second one, is ignored.
"""

import codecs
import contextlib
import os
import select
import signal
import subprocess
import time

from frames import PRIVATE

START_TIMEOUT = 30.0


class Shell:
    def __init__(self, link):
        self.link = link
        self.proc = None
        self.pidfd = -1
        self.current = None
        self.seq = 0
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

    def execute(self, execution):
        self.current = execution
        self.seq += 1
        fd = os.open(self.cell, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(execution.code)
        self._send(f". {self.cell} </dev/null; printf '{self.seq} %d\\n' $? >&{self.status_fd}")

    def interrupt(self):
        if self.current is None:
            return
        self.current.ask_interrupt()
        self.current.interrupted_at = time.monotonic()
        self._signal(signal.SIGINT)
        # The interrupted command line is abandoned with its status report: report instead.
        self._send(f"printf '{self.seq} 130\\n' >&{self.status_fd}")

    def tick(self, now):
        due = self.current.due(now)
        if due == "interrupt":
            self.interrupt()
        elif due == "restart":
            self.restart()

    def _end(self, status, **extra):
        if self.current is not None:
            self.current.end(status, execution_count=self.seq, **extra)
            self.current = None

    # -- output ----------------------------------------------------------------------------

    def poll(self, fds, timeout):
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
            if self.current is None or seq != str(self.seq) or not code.isdigit():
                continue
            for fd in self.decoders:  # what the cell wrote before its status came
                while data := self._read(fd):
                    self._output(fd, data)
            self._end("ok" if code == "0" else "error", exit_code=int(code))

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
