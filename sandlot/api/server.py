"""Serving: the listening socket, the server processes on it, and how they stop.

`serve` binds the port once. With one worker (the default below 17 slots) it serves in this
process. With N it becomes a supervisor: it starts N worker processes (`python -m
sandlot.api.server`) that inherit the listening socket and accept from it, each with a disjoint
share of the slots (its own uids `uid_base + k`, spawners, cgroups and state dir) and the same
share of the queue. A worker with every slot of its own busy queues a request (or answers 504)
even while another worker has a free one: the kernel hands connections to whichever worker
accepts first, and a keep-alive connection stays on its worker. Each also holds its share of
`session_max`, `session_pool` and the live-box uids, and a unix socket on which the others
forward it the requests of its sessions (`peers.py`). The supervisor restarts a
worker that dies, and forwards SIGTERM; a worker dies with it (PR_SET_PDEATHSIG).

Stopping (SIGTERM or Ctrl-C), in each worker: `/health` answers 503 at once; the server keeps
answering for `drain_seconds` (a load balancer's time to notice), then stops accepting, lets
runs in flight finish for up to `shutdown_grace` seconds, cancels the rest and tears the jail
down (no process, mount, cgroup or state dir stays). A second signal skips the drain; a third
the grace, and still tears everything down. Signals less than SIGNAL_BURST apart count as one.
A server killed outright leaves stale state that the next start removes (`jail.pool.clean_stale`).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import uvicorn

from sandlot import telemetry
from sandlot.api.peers import Peers
from sandlot.config import Config, check_serving, split, worker_shares
from sandlot.errors import SandlotError
from sandlot.jail import allowed_cpus, describe_cpu_sets, resolve_cpu_sets

log = logging.getLogger("sandlot.server")
PR_SET_PDEATHSIG = 1
RESTART_DELAY = 1.0  # seconds before a dead worker is started again
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # where this sandlot is imported from
STOP_MARGIN = 30.0  # seconds past drain + grace before the supervisor kills a worker
# Signals closer together than this are one stop that reached the server by several paths (a
# job manager signals every process of a job, and the shell that started the server passes it on).
SIGNAL_BURST = 1.0


def serve(cfg: Config) -> None:
    """Serve until stopped; SandlotError (nothing started) for settings it refuses."""
    from sandlot.api import logs

    check_serving(cfg, cfg.keys())
    workers = cfg.worker_count()
    shares = worker_shares(cfg.slots, workers)
    logs.setup(cfg.log_format, cfg.log_level)
    sock = _listen(cfg.host, cfg.port)
    log.info("listening on %s (%d slots, %d worker%s)", url_of(cfg.host, cfg.port), cfg.slots,
             workers, "" if workers == 1 else "s")  # fmt: skip
    if workers == 1:
        _serve_worker(cfg, 0, 1, [sock])
    else:
        _Supervisor(cfg, shares, sock).run()


def url_of(host: str, port: int) -> str:
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    return f"http://{shown}:{port}"


# Why a port cannot be listened on, by errno, in words that say what to do.
_CANNOT_LISTEN = {
    errno.EADDRINUSE: "the port is in use (another server: `ss -ltnp` shows which); choose "
    "another with --port or SANDLOT_PORT",
    errno.EACCES: "permission denied (ports below 1024 need root)",
    errno.EADDRNOTAVAIL: "this machine has no such address",
}


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket; SandlotError naming the address and why when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        why = _CANNOT_LISTEN.get(exc.errno or 0, exc.strerror or str(exc))
        raise SandlotError(f"cannot listen on {host}:{port}: {why}") from exc
    sock.set_inheritable(True)
    return sock


def share_configs(cfg: Config, shares: list[range]) -> list[Config]:
    """Each worker's settings: its slots and their uids, its part of the queue, of the sessions
    and of the pool, and a range of live-box uids of its own (the ranges follow each other from
    `session_uid_base`, so together they are what one process would use)."""
    out, session_uid = [], cfg.session_uid_base
    # `auto` placement spreads all the slots over the CPUs, not each worker's over all of them.
    cpu_sets = resolve_cpu_sets(cfg.slot_cpus, cfg.slots, allowed_cpus())
    sessions, pools = split(cfg.session_max, len(shares)), split(cfg.session_pool, len(shares))
    for share, session_max, pool in zip(shares, sessions, pools, strict=True):
        part = dataclasses.replace(
            cfg,
            slots=len(share),
            uid_base=cfg.uid_base + share.start,
            slot_cpus=describe_cpu_sets(cpu_sets[share.start : share.stop]),
            queue_size=-(-cfg.queue_size * len(share) // cfg.slots),
            session_max=session_max,
            session_pool=pool,
            session_uid_base=session_uid,
        )
        session_uid += part.live_uids()
        out.append(part)
    return out


def _serve_worker(
    cfg: Config, index: int, workers: int, socks: list[socket.socket], peers: Peers | None = None
) -> None:
    from sandlot.api import create_app
    from sandlot.service import Service

    service = Service(cfg, worker=index, workers=workers).start()
    if service.problem:
        log.error("isolation unavailable, no code will run: %s", service.problem)
    server = _Server(
        uvicorn.Config(
            create_app(service, peers), log_config=None, access_log=False, lifespan="on",
            server_header=False,
            # uvicorn waits with asyncio, which takes a fraction of a second too
            timeout_graceful_shutdown=cfg.shutdown_grace,  # type: ignore[arg-type]
            # Forwarded headers only from the proxies the operator names (uvicorn's own
            # default believes any caller on loopback, and $FORWARDED_ALLOW_IPS).
            proxy_headers=bool(cfg.proxies()), forwarded_allow_ips=cfg.proxies(),
        ),
        service, cfg.drain_seconds,
    )  # fmt: skip
    try:
        server.run(sockets=socks)
    finally:
        if server.force_exit and threading.current_thread() is threading.main_thread():
            # A forced stop ends the runs in flight at once: the signal after the one that
            # forced it must not cut the clean-up and the exit short (uvicorn has put the
            # default handlers back by now).
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
        service.close()
        if peers is not None:
            with contextlib.suppress(OSError):
                peers.socket(
                    index
                ).unlink()  # also when uvicorn stops without running the app's shutdown


class _Server(uvicorn.Server):
    """uvicorn's server with a drain before its shutdown (see the module's docstring)."""

    def __init__(self, config: uvicorn.Config, service: object, drain_seconds: float) -> None:
        super().__init__(config)
        self.service = service
        self.drain_seconds = drain_seconds
        self.drain_until: float | None = None
        self.signalled = -SIGNAL_BURST

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if now - self.signalled < SIGNAL_BURST:
            return
        self.signalled = now
        if self.drain_until is None:
            log.info("%s: draining for %gs, then stopping", signal.Signals(sig).name,
                     self.drain_seconds)  # fmt: skip
            self.service.draining = True  # type: ignore[attr-defined]
            self.drain_until = now + self.drain_seconds
        elif self.should_exit:
            self.force_exit = True  # runs in flight are cancelled now
        else:
            self.should_exit = True

    async def on_tick(self, counter: int) -> bool:
        if self.drain_until is not None and time.monotonic() >= self.drain_until:
            self.should_exit = True
        return await super().on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        if self.force_exit:
            # uvicorn then skips the app's shutdown, which is what closes the sessions and their
            # live boxes: cancel the runs still in flight and close them all the same.
            for task in self.server_state.tasks:
                task.cancel()
            await self.lifespan.shutdown()


class _Supervisor:
    def __init__(self, cfg: Config, shares: list[range], sock: socket.socket) -> None:
        self.cfg, self.shares, self.sock = cfg, shares, sock
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * len(shares)
        self.stopping = False
        state = Path(cfg.state_dir)
        state.mkdir(mode=0o711, parents=True, exist_ok=True)
        # Named after this process, so the jail's clean-up of stale state spares it while we run.
        self.metrics_dir = state / f"{os.getpid()}-metrics"
        shutil.rmtree(self.metrics_dir, ignore_errors=True)
        self.metrics_dir.mkdir(mode=0o700)
        # The workers' private sockets (peers.py): root's alone, like the secret they check.
        self.peers_dir = state / f"{os.getpid()}-peers"
        shutil.rmtree(self.peers_dir, ignore_errors=True)
        self.peers_dir.mkdir(mode=0o700)
        self.secret = secrets.token_hex(32)

    def run(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._signalled)
        try:
            for index in range(len(self.shares)):
                self._start(index)
            while not self.stopping:
                self._watch()
                time.sleep(0.2)
            self._stop()
        finally:
            for proc in self.procs:
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.wait()
            shutil.rmtree(self.metrics_dir, ignore_errors=True)
            shutil.rmtree(self.peers_dir, ignore_errors=True)

    def _start(self, index: int) -> None:
        cfg = share_configs(self.cfg, self.shares)[index]
        fd = self.sock.fileno()
        args = (index, len(self.shares), fd, os.getpid())
        # -P and this package's parent first on the path: the workers run this server's code,
        # never a sandlot found in its working directory (which `-m` would put first).
        argv = [sys.executable, "-P", "-m", "sandlot.api.server", *map(str, args)]
        path = os.pathsep.join(filter(None, (PACKAGE_PARENT, os.environ.get("PYTHONPATH"))))
        env = {**os.environ, "PYTHONPATH": path, telemetry.MULTIPROCESS_ENV: str(self.metrics_dir)}
        proc = subprocess.Popen(argv, env=env, pass_fds=[fd], stdin=subprocess.PIPE)
        # The settings go on a pipe, not the command line: any user may read a command line
        # (`ps`), and the settings hold the API keys (and the workers' secret).
        assert proc.stdin is not None
        peers = {"directory": str(self.peers_dir), "secret": self.secret}
        with proc.stdin:
            proc.stdin.write(
                json.dumps({"config": dataclasses.asdict(cfg), "peers": peers}).encode()
            )
        self.procs[index] = proc

    def _watch(self) -> None:
        for index, proc in enumerate(self.procs):
            if proc is not None and proc.poll() is not None and not self.stopping:
                log.error("worker %d (pid %d) exited with %s; starting it again",
                          index, proc.pid, proc.returncode)  # fmt: skip
                telemetry.process_gone(proc.pid)
                time.sleep(RESTART_DELAY)
                self._start(index)

    def _signalled(self, sig: int, frame: FrameType | None) -> None:
        if self.stopping:  # a second signal: pass it on (skips the drain, then the grace)
            self._forward(sig)
            return
        self.stopping = True
        self._forward(signal.SIGTERM)

    def _forward(self, sig: int) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.send_signal(sig)

    def _stop(self) -> None:
        self.sock.close()  # the workers' copies stay open until each has drained
        deadline = time.monotonic() + self.cfg.drain_seconds + self.cfg.shutdown_grace + STOP_MARGIN
        for proc in self.procs:
            if proc is None:
                continue
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.error("worker pid %d did not stop in time; killing it", proc.pid)
                proc.kill()
                proc.wait()
            telemetry.process_gone(proc.pid)


def _worker_main(argv: list[str]) -> None:
    """A worker process of the supervisor: INDEX WORKERS FD SUPERVISOR_PID, the settings as
    JSON on stdin."""
    index, workers, fd, supervisor = argv
    config_json = sys.stdin.read()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the supervisor died: stop cleanly
    if os.getppid() != int(supervisor):
        return  # it died before we could ask
    from sandlot.api import logs

    given = json.loads(config_json)
    cfg = Config(**given["config"])
    logs.setup(cfg.log_format, cfg.log_level, worker=int(index))
    peers = Peers(int(index), int(workers), Path(given["peers"]["directory"]),
                  given["peers"]["secret"])  # fmt: skip
    _serve_worker(cfg, int(index), int(workers), [socket.socket(fileno=int(fd)),
                  _listen_private(peers.socket(int(index)))], peers)  # fmt: skip


def _listen_private(path: Path) -> socket.socket:
    """This worker's socket for the others (peers.py); a dead predecessor's is replaced."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(256)
    return sock


if __name__ == "__main__":
    _worker_main(sys.argv[1:])
