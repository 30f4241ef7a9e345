"""An IPython kernel (ipykernel) on the box's own loopback, and the few Jupyter messages the
agent needs, spoken over pyzmq directly (jupyter_client would cost its import, a fifth of a
second of CPU, in every box).

Messages follow the Jupyter wire protocol 5.3: a delimiter, an HMAC-SHA256 signature, then
header, parent header, metadata and content as JSON. The kernel is the box's own code: its
messages are checked only so that a malformed one is skipped, never trusted to stop the agent.
"""

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime

import zmq
from frames import PRIVATE

DELIM = b"<IDS|MSG>"
START_TIMEOUT = 60.0
CHANNELS = ("shell", "iopub", "stdin", "control", "hb")
# Run in the kernel before any cell, so that output cannot fill the kernel's memory and comes
# out in the order it was written:
# - IPython 9 keeps a copy of everything a cell prints (`_tee`, for `%history -o`), even with
#   the history off: a session's memory would grow with all it ever printed;
# - ipykernel buffers output and publishes it every 0.2 s, so a print loop can write gigabytes
#   between two flushes: flush (and wait for it) at every 64 KiB instead, so that a flood meets
#   the output limit, not the memory limit;
# - stdout and stderr have a buffer each, published by timers of their own: `print(1)` then a
#   warning could come out warning first. A write to one stream first publishes what the other
#   holds.
# And cloudpickle is imported (into sys.modules only): a snapshot's save, and the load of a
# fork's state, then do not pay its import (about 20 ms of CPU) in the kernel they wait for,
# which a pooled kernel has paid ahead.
KERNEL_STARTUP = """
def _sandlot_bound_output(limit=1 << 16):
    import contextlib, sys
    from IPython.core.interactiveshell import InteractiveShell
    from ipykernel.iostream import OutStream
    InteractiveShell._tee = lambda self, channel: contextlib.nullcontext()
    schedule = OutStream._schedule_flush  # what write() calls: not shadowed per instance
    def held(stream):
        return sum(b.tell() for b in list(stream._buffers.values()))
    def schedule_in_order(self):
        for other in (sys.stdout, sys.stderr):
            if other is not self and isinstance(other, OutStream) and held(other):
                other.flush()
        if held(self) > limit:
            self.flush()
        else:
            schedule(self)
    OutStream._schedule_flush = schedule_in_order
_sandlot_bound_output()
del _sandlot_bound_output
__import__("cloudpickle")
"""


def free_ports(count):
    """Ports free on the box's loopback now. Nothing else runs in the box yet (or only the
    box's own code, which can at worst take one and make this kernel fail to start)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class KernelProcess:
    """One ipykernel process and the sockets to it. `restart` replaces both."""

    def __init__(self, env):
        self.env = env
        self.ctx = zmq.Context()
        self.session = uuid.uuid4().hex
        self.proc = None
        self.pidfd = -1
        self.shell = self.iopub = self.control = None
        os.makedirs(PRIVATE, mode=0o700, exist_ok=True)

    # -- life cycle ----------------------------------------------------------------------------

    def start(self):
        self.key = secrets.token_hex(32).encode()
        ports = dict(zip(CHANNELS, free_ports(len(CHANNELS)), strict=True))
        conn = {f"{name}_port": port for name, port in ports.items()}
        conn.update(ip="127.0.0.1", transport="tcp", key=self.key.decode(),
                    signature_scheme="hmac-sha256", kernel_name="python3")  # fmt: skip
        path = os.path.join(PRIVATE, "kernel.json")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(conn, f)
        config = os.path.join(PRIVATE, "kernel_config.py")
        with open(config, "w") as f:
            f.write(f"c.IPKernelApp.exec_lines = [{KERNEL_STARTUP!r}]\n")
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", path, "--quiet",
                "--HistoryManager.enabled=False", f"--config={config}"]  # fmt: skip
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=os.getcwd(), env=self.env, start_new_session=True,
        )  # fmt: skip
        self.pidfd = os.pidfd_open(self.proc.pid)
        url = "tcp://127.0.0.1:{}".format
        self.shell = self._socket(zmq.DEALER, url(ports["shell"]))
        self.control = self._socket(zmq.DEALER, url(ports["control"]))
        self.iopub = self._socket(zmq.SUB, url(ports["iopub"]))
        self.iopub.setsockopt(zmq.SUBSCRIBE, b"")
        self._wait_ready()

    def _socket(self, kind, url):
        sock = self.ctx.socket(kind)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(url)
        return sock

    def _wait_ready(self):
        """Until the kernel answers on shell and iopub has carried a message (a SUB socket
        misses what was published before it joined), asking for kernel_info meanwhile."""
        deadline = time.monotonic() + START_TIMEOUT
        poller = zmq.Poller()
        poller.register(self.shell, zmq.POLLIN)
        poller.register(self.iopub, zmq.POLLIN)
        replied = heard = False
        asked = 0.0
        while not (replied and heard):
            now = time.monotonic()
            if now > deadline or self.proc.poll() is not None:
                raise RuntimeError("the kernel did not start")
            if now - asked > 0.2:
                self.send(self.shell, "kernel_info_request", {})
                asked = now
            for sock, _ in poller.poll(50):
                msg = self.recv(sock)
                if msg is None:
                    continue
                if sock is self.shell and msg["header"].get("msg_type") == "kernel_info_reply":
                    replied = True
                elif sock is self.iopub:
                    heard = True

    def signal(self, signum):
        """Signal the kernel's process group (what it started goes with it)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signum)

    def stop(self):
        if self.proc is not None:
            self.signal(signal.SIGKILL)
            self.proc.wait()
            self.proc = None
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        for sock in (self.shell, self.control, self.iopub):
            if sock is not None:
                sock.close(0)
        self.shell = self.iopub = self.control = None

    def restart(self):
        self.stop()
        self.start()

    def exit_status(self):
        return None if self.proc is None else self.proc.poll()

    # -- messages ------------------------------------------------------------------------------

    def _sign(self, parts):
        mac = hmac.new(self.key, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(part)
        return mac.hexdigest().encode()

    def send(self, sock, msg_type, content):
        header = {
            "msg_id": uuid.uuid4().hex, "session": self.session, "username": "sandlot",
            "date": datetime.now(UTC).isoformat(), "msg_type": msg_type,
            "version": "5.3",
        }  # fmt: skip
        parts = [json.dumps(p).encode() for p in (header, {}, {}, content)]
        sock.send_multipart([DELIM, self._sign(parts), *parts])
        return header["msg_id"]

    def recv(self, sock):
        """One message as a dict, or None if it is malformed or its signature is wrong."""
        frames = sock.recv_multipart(zmq.NOBLOCK)
        try:
            at = frames.index(DELIM)
            sig, parts = frames[at + 1], frames[at + 2 : at + 6]
            if len(parts) != 4 or not hmac.compare_digest(sig, self._sign(parts)):
                return None
            header, parent, _, content = (json.loads(p) for p in parts)
        except (ValueError, IndexError, RecursionError):
            return None
        if not all(isinstance(x, dict) for x in (header, parent, content)):
            return None
        return {"header": header, "parent": parent, "content": content}
