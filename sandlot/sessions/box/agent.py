"""A session's agent: pid 2 of its box, between the server (frames on stdin and stdout, see
frames.py) and the program that holds the session's state: an IPython kernel (`python`) or a
bash process (`bash`). Run as `python agent.py python|bash`.

One execution at a time. The agent enforces its time limit (interrupt, then a fresh kernel or
shell if the interrupt does not end it) and its output cap, and says how it ended in one `end`
event. The server checks all of it again: the box's code can kill, stop or impersonate this
agent, and can only ever harm its own session by doing so.

Between executions it also keeps a snapshot's state (ops `save`, `load`, `rebase`, each answered
by one event): the runner writes what the file system does not hold (a kernel's names, a shell's
working directory and environment) to a file in the work dir, which a snapshot's layer then
holds, and reads it back in a new session's box; `rebase` follows the session onto new layers.
"""

import contextlib
import json
import math
import os
import sys
import time

import frames

REPORT = os.path.join(frames.PRIVATE, "state.json")  # what a snapshot's code says it did

INTERRUPT_GRACE = 2.0  # seconds an interrupted execution may take to end before a restart
START_GRACE = 10.0  # seconds an execution may take to start running, once it is to be interrupted


class Link:
    """Frames from the server on fd 0, events to it on fd 1 (blocking: the server's reading
    pace is this agent's)."""

    def __init__(self):
        self.buf = bytearray()
        self.closed = False

    def send(self, event):
        self.write(frames.encode(event))

    def write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]

    def read(self):
        """The ops that arrived (call when fd 0 is readable)."""
        chunk = os.read(0, 1 << 16)
        if not chunk:
            self.closed = True
        self.buf += chunk
        ops = []
        while len(self.buf) >= frames.HEADER.size:
            (size,) = frames.HEADER.unpack_from(self.buf)
            if size > frames.MAX_OP:
                raise SystemExit("frame too large")
            end = frames.HEADER.size + size
            if len(self.buf) < end:
                break
            ops.append(frames.json.loads(bytes(self.buf[frames.HEADER.size : end])))
            del self.buf[:end]
        return ops


class Execution:
    """The execution under way: its clock, its output budget, and the end it reports."""

    def __init__(self, link, op):
        self.link = link
        self.code = op["code"]
        self.timeout = float(op["timeout"])
        self.deadline = time.monotonic() + self.timeout
        self.budget = int(op["max_output"])
        self.asked_at = None  # an interrupt was wanted
        self.interrupted_at = None  # and sent
        self.sigint_at = None  # when to send it, once the program is known to run
        self.timed_out = False
        self.truncated = False
        self.errors = 0

    def emit(self, event):
        """Forward an output event unless the output cap was reached (which interrupts). An
        event that cannot be sent as JSON (NaN in a JSON display, a deep nest) is left out."""
        if self.truncated:
            return
        try:
            data = frames.encode(event)
        except (ValueError, TypeError, RecursionError):
            return
        if len(data) > min(self.budget, frames.MAX_FRAME):
            self.truncated = True
            return
        self.budget -= len(data)
        self.errors += event["type"] == "error"
        self.link.write(data)

    def timeout_error(self, traceback=()):
        """The error a time limit makes (in place of the KeyboardInterrupt that stopped it)."""
        evalue = f"the execution exceeded its time limit of {self.timeout:g} s"
        return {"type": "error", "ename": "TimeoutError", "evalue": evalue,
                "traceback": list(traceback)}  # fmt: skip

    def due(self, now):
        """What the clock asks for now: None, "interrupt" or "restart"."""
        if self.asked_at is None and (now >= self.deadline or self.truncated):
            self.timed_out = not self.truncated
            self.asked_at = now
            return "interrupt"
        if self.interrupted_at is None and self.sigint_at is not None and now >= self.sigint_at:
            return "interrupt"
        if now >= self.wake():
            return "restart"
        return None

    def ask_interrupt(self):
        """An interrupt is wanted (an op, the clock): the runner sends it when it can."""
        if self.asked_at is None:
            self.asked_at = time.monotonic()

    def wake(self):
        """When the clock next asks for something: the deadline; once an interrupt is wanted,
        the end of its grace (counted from when it was sent, or from when it was asked for
        if the program never got to run it)."""
        if self.asked_at is None:
            return self.deadline
        if self.interrupted_at is None:
            return min(self.asked_at + START_GRACE, self.sigint_at or math.inf)
        return self.interrupted_at + INTERRUPT_GRACE

    def end(self, status, **extra):
        self.link.send({"type": "end", "status": status, "timed_out": self.timed_out,
                        "truncated": self.truncated, **extra})  # fmt: skip


class Quiet(Execution):
    """An execution of the agent's own (a snapshot's save or load): its errors kept here, its
    end noted, nothing sent to the server."""

    def __init__(self, code, timeout):
        super().__init__(None, {"code": code, "timeout": timeout, "max_output": 1 << 16})
        self.status = None
        self.said = []

    def emit(self, event):
        if event["type"] == "error":
            self.said.append(f"{event['ename']}: {event['evalue']}")
        elif event["type"] == "stderr":
            self.said.append(event["text"])

    def end(self, status, **extra):
        self.status = status
        self.died = bool(extra.get("died"))


def call(runner, code, timeout):
    """Run `code` quietly to its end (the runner has no execution under way): None, or what
    went wrong and whether the kernel (or shell) died of it."""
    quiet = Quiet(code, timeout)
    runner.execute(quiet, quiet=True)
    while quiet.status is None:
        runner.poll([], max(0.0, quiet.wake() - time.monotonic()))
        if runner.current is not None:
            runner.tick(time.monotonic())
    if quiet.status == "ok":
        return None
    if quiet.died:
        return "the kernel died (a new one was started: variables are lost)", True
    if quiet.timed_out:
        return f"it took more than {timeout:g} s", False
    return "".join(quiet.said)[-500:] or f"it ended with status {quiet.status}", False


STATE_EVENTS = {"save": "saved", "load": "loaded", "rebase": "rebased"}
STATE_TIMEOUT = 300.0  # seconds a save or load may take (pickling a large namespace)


def keep(runner, op):
    """A snapshot's op (`save`, `load`, `rebase`) as the event that answers it: what the runner's
    code reported (the box's word), or the error that stopped it."""
    kind = op["op"]
    event = {"type": STATE_EVENTS[kind]}
    if runner.current is not None:
        return {**event, "error": "an execution is under way"}
    try:
        os.chdir("/sandbox")  # the agent's own working directory: into the work dir it has now
        with contextlib.suppress(FileNotFoundError):
            os.unlink(REPORT)
        failed = call(runner, runner.state_code(kind, op, REPORT), STATE_TIMEOUT)
        if failed is not None:
            return {**event, "error": failed[0], "died": failed[1]}
        with open(REPORT) as f:
            report = json.load(f)
    except Exception as exc:  # the box's code may have broken anything of its own
        return {**event, "error": f"{type(exc).__name__}: {exc}"}
    if not isinstance(report, dict):
        return {**event, "error": "the report is not an object"}
    if "error" in report:
        return {**event, "error": str(report["error"])}
    return {**event, "report": report}


def serve(link, runner):
    """Run ops until the server closes fd 0."""
    runner.start()
    link.send({"type": "ready", **runner.describe()})
    waiting = []
    while not link.closed:
        if runner.current is None and waiting:
            op = waiting.pop(0)
            runner.execute(Execution(link, op))
            if op.get("interrupted"):
                runner.interrupt()
            continue
        wake = runner.current.wake() if runner.current else None
        timeout = None if wake is None else max(0.0, wake - time.monotonic())
        for ready in runner.poll([0], timeout):
            if ready == 0:
                for op in link.read():
                    kind = op.get("op")
                    if kind == "execute":
                        waiting.append(op)
                    elif kind == "interrupt" and runner.current is None and waiting:
                        waiting[0]["interrupted"] = True  # read with its execution: not started
                    elif kind == "interrupt":
                        runner.interrupt()
                    elif kind == "restart":
                        runner.restart()
                        link.send({"type": "restarted"})
                    elif kind in ("save", "load", "rebase"):
                        link.send(keep(runner, op))
        if runner.current is not None:
            runner.tick(time.monotonic())


def main():
    mode = sys.argv[1]
    if mode == "python":
        from notebook import Notebook as Runner
    else:
        from shell import Shell as Runner
    link = Link()
    runner = Runner(link)
    try:
        serve(link, runner)
    finally:
        runner.stop()


if __name__ == "__main__":
    main()
