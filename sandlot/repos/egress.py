"""The egress proxy of setup boxes: Debian's squid, run by sandlot with a config of its own.

Why squid (docs/repositories.md says it at length): it is the most used forward proxy, kept in
Debian with security updates, and does all we need as configuration: an allow-list of domains
checked before any name is resolved (`dstdomain -n`: a name not listed is never even looked up),
refusal of every address on the host's loopback or link-local range even for a listed name
(`to_localhost`, `to_linklocal`: DNS rebinding), CONNECT only to 443, and an access log with a
line per request in a format we choose, where a refusal is `TCP_DENIED`. tinyproxy would do
the filtering too, but logs a refusal as free text in a line apart from the connection it
belongs to.

It listens on one port of the host's loopback, which no box can reach: a setup box's network
namespace (netns.py) has only its own loopback, where 127.0.0.1:3128 is relayed to squid from
an address of that box's own; `http_access` allows only those addresses. Denied requests are
in squid's log and, by that address, in the setup's result.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sandlot.errors import JailUnavailable
from sandlot.repos.netns import RelayedNetwork

SQUID = "/usr/sbin/squid"
BOX_PORT = 3128  # where a box finds the proxy: 127.0.0.1 of its own namespace
# The hosts each toolchain's package client fetches from; a setup may reach all of them.
REGISTRIES: dict[str, tuple[str, ...]] = {
    "python": ("pypi.org", "files.pythonhosted.org"),
    "node": ("registry.npmjs.org",),
    "rust": ("crates.io", "index.crates.io", "static.crates.io"),
    "go": ("proxy.golang.org", "sum.golang.org"),
    "java": ("repo.maven.apache.org", "repo1.maven.org"),
}
DOMAIN = re.compile(r"^\.?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9-]{1,63}$")
START_TIMEOUT = 30.0
LOG_SETTLE = 2.0  # seconds to wait for squid to log the requests of connections just closed


def allow_list(extra: str) -> tuple[str, ...]:
    """The registries and the operator's `egress_allow`, sorted, each checked. A wrong name is
    the operator's to fix, not a request's: JailUnavailable (503), and /health says it too."""
    names = {h for hosts in REGISTRIES.values() for h in hosts}
    for raw in extra.replace(",", " ").split():
        name = raw.strip().lower()
        if not DOMAIN.match(name) or name.replace(".", "").isdigit():
            raise JailUnavailable(
                f"egress_allow: {raw!r} is not a host name (an address is never allowed; "
                "'.example.org' allows the domain and every name below it): repository tasks "
                "are off until the server's operator fixes this setting (SANDLOT_EGRESS_ALLOW)"
            )
        names.add(name)
    # squid refuses a list holding both a domain and a name below it: keep the domain.
    keep = {n for n in names if not any(n != d and n.endswith(d) for d in names if d[0] == ".")}
    return tuple(sorted(keep))


def proxy_env() -> dict[str, str]:
    """What a setup box's package clients need to use the proxy (each reads its own names)."""
    url = f"http://127.0.0.1:{BOX_PORT}"
    env = {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    env.update(npm_config_proxy=url, npm_config_https_proxy=url, NO_PROXY="", no_proxy="")
    return env


@dataclass(slots=True)
class Denied:
    method: str
    target: str  # host:port of a CONNECT, or the URL
    status: str  # squid's, e.g. TCP_DENIED/403

    def __str__(self) -> str:
        return f"{self.method} {self.target} ({self.status})"


@dataclass(slots=True)
class EgressReport:
    connections: int = 0
    requests: int = 0
    denied: list[Denied] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)  # hosts of the requests squid let through

    def to_dict(self) -> dict[str, object]:
        return {
            "connections": self.connections, "requests": self.requests,
            "denied": [str(d) for d in self.denied], "reached": self.reached,
        }  # fmt: skip


class Egress:
    """One squid for this process's setup boxes, started on first use."""

    def __init__(self, work_dir: str | Path, allow: tuple[str, ...], squid: str = SQUID) -> None:
        self.dir = Path(work_dir)
        self.allow = allow
        self.squid = squid
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def log(self) -> Path:
        return self.dir / "access.log"

    def problem(self) -> str | None:
        """Why setups cannot reach the registries here, or None."""
        if not os.access(self.squid, os.X_OK):
            return f"the egress proxy ({self.squid}) is not installed: run `sandlot setup`"
        return None

    def start(self) -> None:
        with self._lock:
            if self.proc is not None and self.proc.poll() is None:
                return
            if problem := self.problem():
                raise JailUnavailable(problem)
            self._start()

    def _start(self) -> None:
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, mode=0o750)
        shutil.chown(self.dir, "proxy", "proxy")
        self.port = _free_port()
        conf = self.dir / "squid.conf"
        conf.write_text(squid_conf(self.dir, self.port, self.allow))
        self.proc = subprocess.Popen(
            [self.squid, "-N", "-f", str(conf)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=open(self.dir / "stderr.log", "wb"),  # noqa: SIM115
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.05)
        reason = self._tail()
        self.close()
        raise JailUnavailable(f"the egress proxy did not start: {reason}")

    def _tail(self) -> str:
        lines: list[str] = []
        for name in ("stderr.log", "cache.log"):
            with contextlib.suppress(OSError):
                lines += (self.dir / name).read_text(errors="replace").splitlines()
        return " | ".join(line for line in lines[-8:] if line.strip()) or "no message"

    @contextlib.contextmanager
    def network(self) -> Iterator[tuple[RelayedNetwork, EgressReport]]:
        """A network namespace whose one way out is this proxy; the report is filled in when
        the block ends (every connection closed, squid's log of them read)."""
        self.start()
        offset = self.log.stat().st_size if self.log.exists() else 0
        report = EgressReport()
        net = RelayedNetwork(("127.0.0.1", self.port), BOX_PORT)
        try:
            yield net, report
        finally:
            net.close()
            report.connections = net.connections
            self._read_log(offset, net.source, report)

    def _read_log(self, offset: int, source: str, report: EgressReport) -> None:
        deadline = time.monotonic() + LOG_SETTLE
        while True:
            lines = self._lines(offset, source)
            # Each relayed connection is logged once it ends: wait (briefly) for them all.
            if len(lines) >= report.connections or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        report.requests = len(lines)
        for parts in lines:
            if parts[2].startswith("TCP_DENIED"):
                report.denied.append(Denied(parts[3], parts[4], parts[2]))
            elif parts[3] != "-":  # a request, not a connection that sent none
                host = _host(parts[4])
                if host not in report.reached:
                    report.reached.append(host)

    def _lines(self, offset: int, source: str) -> list[list[str]]:
        try:
            with self.log.open("rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            parts = line.split(" ", 4)
            if len(parts) == 5 and parts[1] == source:
                out.append(parts)
        return out

    def close(self) -> None:
        """Stop squid, and remove its directory (config, logs)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _host(target: str) -> str:
    """The host of a CONNECT target (host:port) or of a URL."""
    rest = target.split("://", 1)[-1]
    return rest.split("/", 1)[0].rsplit(":", 1)[0].strip("[]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def squid_conf(work: Path, port: int, allow: tuple[str, ...]) -> str:
    """squid's whole config: nothing of /etc/squid is read."""
    domains = " ".join(allow) or "none.invalid"
    return f"""\
http_port 127.0.0.1:{port}
pid_filename none
cache_effective_user proxy
visible_hostname sandlot-egress
workers 1
cache deny all
cache_mem 8 MB
coredump_dir {work}
cache_log stdio:{work}/cache.log
logformat sandlot %ts.%03tu %>a %Ss/%03>Hs %rm %ru
access_log stdio:{work}/access.log logformat=sandlot
buffered_logs off
logfile_rotate 0
shutdown_lifetime 1 seconds
forwarded_for delete
via off
acl boxes src 127.77.0.0/16
acl registries dstdomain -n {domains}
acl tls_port port 443
acl web_ports port 80 443
acl CONNECT method CONNECT
acl to_linklocal dst 169.254.0.0/16 fe80::/10
http_access deny !boxes
http_access deny !registries
http_access deny CONNECT !tls_port
http_access deny !web_ports
http_access deny to_localhost
http_access deny to_linklocal
http_access allow boxes
http_access deny all
icp_port 0
htcp_port 0
snmp_port 0
"""
