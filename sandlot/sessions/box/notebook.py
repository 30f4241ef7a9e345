"""Executions in an IPython kernel: a cell's outputs forwarded as events as they come, its end
when the kernel has both replied and gone idle."""

import os
import platform
import signal
import time

import zmq
from kernel import KernelProcess

# Run in the kernel for a snapshot (agent.py's `keep`): its functions, then the call.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "namespace.py")) as _f:
    NAMESPACE = _f.read()

# A SIGINT sent as the kernel announces a cell can land in ipykernel's own code before the cell
# runs, where it is lost with the execution's reply: an interrupt waits this long after the
# announcement.
SETTLE = 0.2


class Notebook:
    def __init__(self, link):
        self.link = link
        self.kernel = KernelProcess(dict(os.environ))
        self.current = None
        self.msg_id = None
        self.reply = None
        self.idle = self.running = False
        self.running_since = 0.0

    def describe(self):
        return {"kernel": "python3", "language_version": platform.python_version()}

    def start(self):
        self.kernel.start()

    def stop(self):
        self.kernel.stop()

    # -- executions ----------------------------------------------------------------------------

    def execute(self, execution, quiet=False):
        """Run the execution's code; `quiet`: in no history and counted as no execution (the
        kernel then announces nothing: it counts as running from now on, for interrupts)."""
        self.current, self.reply, self.idle, self.running = execution, None, False, quiet
        self.running_since = time.monotonic()
        content = {"code": execution.code, "silent": quiet, "store_history": not quiet,
                   "user_expressions": {}, "allow_stdin": False,
                   "stop_on_error": False}  # fmt: skip
        self.msg_id = self.kernel.send(self.kernel.shell, "execute_request", content)

    def state_code(self, kind, op, report):
        """The code that does a snapshot's op in the kernel (namespace.py), in a namespace of
        its own: the user's gains no name."""
        path = op["path"]
        args = (op.get("cwd") or "/sandbox", path) if kind == "rebase" else (path,)
        source = f"{NAMESPACE}\nreported({kind}, {report!r}, *{args!r})\n"
        return (f"__import__('builtins').exec(__import__('builtins').compile({source!r}, "
                f"'<sandlot snapshot>', 'exec'), {{'__name__': 'sandlot_snapshot'}})")  # fmt: skip

    def interrupt(self):
        if self.current is not None:
            self.current.ask_interrupt()
            self._sigint()

    def _sigint(self):
        """SIGINT once the kernel has run the cell for SETTLE: before, it would be lost (the
        kernel ignores it while idle, and drops the execution if it lands in its own code)."""
        current = self.current
        if not self.running or current.interrupted_at is not None:
            return
        now = time.monotonic()
        if now < self.running_since + SETTLE:
            current.sigint_at = self.running_since + SETTLE  # the clock sends it then
            return
        current.interrupted_at = now
        self.kernel.signal(signal.SIGINT)

    def restart(self):
        current = self.current
        if current is not None and current.timed_out and not current.errors:
            current.emit(current.timeout_error())
        self._end("error", restarted=True)
        self.kernel.restart()

    def tick(self, now):
        due = self.current.due(now)
        if due == "interrupt":
            self._sigint()
        elif due == "restart":
            self.restart()

    def _end(self, status, **extra):
        if self.current is not None:
            count = (self.reply or {}).get("execution_count")
            self.current.end(status, execution_count=count, **extra)
            self.current = self.msg_id = None

    # -- kernel messages ------------------------------------------------------------------------

    def poll(self, fds, timeout):
        k = self.kernel
        poller = zmq.Poller()
        for item in (k.shell, k.iopub, k.pidfd, *fds):
            poller.register(item, zmq.POLLIN)
        ms = None if timeout is None else int(timeout * 1000) + 1
        ready = []
        for item, _ in poller.poll(ms):
            if item is k.shell or item is k.iopub:
                self._drain(item)
            elif item == k.pidfd:
                self._died()
                return ready
            else:
                ready.append(item)
        return ready

    def _drain(self, sock):
        while True:
            try:
                msg = self.kernel.recv(sock)
            except zmq.Again:
                return
            if msg is None or msg["parent"].get("msg_id") != self.msg_id or not self.current:
                continue
            if sock is self.kernel.shell:
                if msg["header"].get("msg_type") == "execute_reply":
                    self.reply = msg["content"]
            else:
                self._output(msg["header"].get("msg_type"), msg["content"])
            if self.reply is not None and self.idle:
                self._end(str(self.reply.get("status", "error")))

    def _output(self, kind, content):
        emit = self.current.emit
        if kind == "stream" and content.get("name") in ("stdout", "stderr"):
            emit({"type": content["name"], "text": str(content.get("text", ""))})
        elif kind in ("display_data", "update_display_data", "execute_result"):
            event = {
                "type": "execute_result" if kind == "execute_result" else "display_data",
                "data": content.get("data", {}),
                "metadata": content.get("metadata", {}),
            }
            if kind == "execute_result":
                event["execution_count"] = content.get("execution_count")
            emit(event)
        elif kind == "error":
            traceback = [str(line) for line in content.get("traceback", [])]
            if self.current.timed_out and content.get("ename") == "KeyboardInterrupt":
                emit(self.current.timeout_error(traceback))  # the interrupt was the limit's
            else:
                emit(
                    {
                        "type": "error",
                        "ename": str(content.get("ename", "")),
                        "evalue": str(content.get("evalue", "")),
                        "traceback": traceback,
                    }
                )
        elif kind == "status" and content.get("execution_state") == "idle":
            self.idle = True
        elif kind == "execute_input":  # the kernel runs the cell now
            self.running, self.running_since = True, time.monotonic()
            if self.current.asked_at is not None:
                self._sigint()

    def _died(self):
        """The kernel ended by itself (killed for memory, os._exit, a crash): say so, start a
        new one."""
        code = self.kernel.exit_status()
        running = self.current is not None
        self._end("error", died=True, restarted=True, kernel_exit=code)
        self.kernel.restart()
        if not running:
            self.link.send({"type": "restarted", "died": True})
