"""Latency of session snapshots, forks, restores and resumes through sandlot's HTTP API, as
ratios against the baselines they replace, measured in the same run on the same server.

    .venv/bin/python bench/forks.py [--setup target|files|work|imports|light] [--count 8] [--idle N]

Every timed row ends when the new session(s) have answered a first execution (`probe`), so a
fork's figure includes its box, its kernel and the state read back, not only the HTTP reply.

- create: `POST /sessions` + probe, from a full pool of prestarted kernels.
- create + setup: the same, then the setup cell: what a client pays without forks.
- snapshot: `POST /sessions/{id}/snapshot` of the set-up session.
- fork xN: `POST /sessions/{id}/fork` with `count` N, then a probe in each fork.
- restore: `POST /sessions` with `snapshot`, then a probe.
- resume: the first execution in a session that was paused (its box freed), next to an
  execution in a live session.

The setups: "target" is issue 44's: 200 MB of files in the work dir (200 files of 1 MiB) and
about 50 MB of Python objects (130,000 small dicts, as tracemalloc counts them); "files" the
same files alone; "work" computes (a sort of a million numbers, a dict of 200,000 digests) and
writes 20 MB in 500 files, with the standard library alone; "imports" imports numpy, pandas,
scipy and sympy, builds arrays and writes a work dir of 200 files; "light" sets a few names and
writes one file. Ratios (printed, not asserted): fork / create is what a fork costs over a
fresh session; fork / (create + setup) is what it saves over setting up again.

Per row it prints what a session's state cost: the mean wall time the server waited for a
box to save (a snapshot's pickling) or load (a new session's unpickling) it, and the CPU time
that box used meanwhile (from /metrics' sandlot_session_state_seconds): the CPU does not grow
with the load of the machine, the wall time does. With `--setup target` it then measures the
floor under those rows: the same objects pickled, and read back by fresh processes of the
sandbox's Python (one, and `count` at once), without sandlot (bench/state_bare.py), and prints
the rows as ratios of it.

It also prints what a parent, one snapshot of it and a fork of `count` sessions hold in all (the
used bytes of every layer tmpfs, and the snapshot store on disk) against that one snapshot's
`bytes`; and with `--idle N`, the memory N idle Python sessions hold live (their cgroups')
against paused (nothing in memory; their snapshots on disk), per session.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import state_bare
from engine import start_server, stop_server, wait_ping

SETUPS = {
    "target": """
import os
os.makedirs("site", exist_ok=True)
for i in range(200):
    open(f"site/pkg{i}.bin", "wb").write(os.urandom(1 << 20))
objects = [{"id": i, "name": f"item-{i}", "tags": ["a", "b"], "score": i * 0.5}
           for i in range(130_000)]
""",
    "files": """
import os
os.makedirs("site", exist_ok=True)
for i in range(200):
    open(f"site/pkg{i}.bin", "wb").write(os.urandom(1 << 20))
""",
    "work": """
import os, random, hashlib
random.seed(0)
ranked = sorted(random.random() for _ in range(1_000_000))
index = {hashlib.sha256(str(i).encode()).hexdigest(): i for i in range(200_000)}
os.makedirs("build", exist_ok=True)
for i in range(500):
    open(f"build/part{i}.bin", "wb").write(random.randbytes(40_000))
""",
    "imports": """
import os
import numpy as np, pandas as pd, scipy.optimize as opt, sympy as sp
rng = np.random.default_rng(0)
x = rng.normal(size=(20000, 8)); y = x @ rng.normal(size=8)
frame = pd.DataFrame(x, columns=list("abcdefgh"))
sym = sp.symbols("a:h")
os.makedirs("repo/src", exist_ok=True)
for i in range(200):
    open(f"repo/src/m{i}.py", "w").write(f"def f{i}(v):\\n    return v + {i}\\n" * 50)
""",
    "light": """
import os
table = {i: str(i) for i in range(1000)}
def score(v): return len(table) + v
open("data.txt", "w").write("x" * 10000)
""",
}
PROBE = "print(len(os.listdir('.')))"
# its own uids and state dir, apart from the other benches (and a server they may run beside)
ENV = {
    "SANDLOT_UID_BASE": "65400",
    "SANDLOT_SESSION_UID_BASE": "67000",
    "SANDLOT_STATE_DIR": "/run/sandlot-bench-forks",
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def layer_bytes() -> int:
    """The used bytes of every layer tmpfs of the bench's server, sealed and writable."""
    total = 0
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        mount, fstype = fields[4], fields[fields.index("-") + 1]
        if (
            fstype == "tmpfs"
            and mount.startswith(ENV["SANDLOT_STATE_DIR"] + "/")
            and ("/layers/" in mount)
        ):
            st = os.statvfs(mount)
            total += (st.f_blocks - st.f_bfree) * st.f_frsize
    return total


def disk_bytes(root: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in root.rglob("*"))


class Bench:
    def __init__(self, c: httpx.Client, pool: int) -> None:
        self.c, self.pool = c, pool
        self.breakdown: dict[str, dict[str, float]] = {}

    def pool_full(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.c.get("/health").json()["sessions"]["pool_ready"] < self.pool:
            if time.monotonic() > deadline:
                sys.exit("the pool did not fill up")
            time.sleep(0.05)

    def ok(self, r: httpx.Response) -> dict:
        if r.status_code != 200:
            sys.exit(f"{r.request.method} {r.request.url.path}: {r.status_code} {r.text[:500]}")
        return r.json()

    def run(self, sid: str, code: str) -> dict:
        out = self.ok(self.c.post(f"/sessions/{sid}/execute", json={"code": code}))
        if out["status"] != "ok":
            sys.exit(f"an execution failed: {out}")
        return out

    def create(self, **fields) -> str:
        sid = self.ok(self.c.post("/sessions", json={"language": "python", **fields}))["id"]
        self.run(sid, "import os")
        return sid

    def drop(self, *sids: str) -> None:
        for sid in sids:
            self.c.delete(f"/sessions/{sid}")

    def timed(self, n: int, call: Callable[[], list[str]]) -> list[float]:
        """`call` n times, each after the pool has refilled and the sessions it made are gone."""
        out = []
        for _ in range(n):
            self.pool_full()
            t = time.perf_counter()
            made = call()
            out.append((time.perf_counter() - t) * 1000)
            self.drop(*made)
        return out

    def state_seconds(self) -> dict[tuple[str, str], tuple[float, float]]:
        """sandlot_session_state_seconds from /metrics: (op, clock) -> (sum, count)."""
        out: dict[tuple[str, str], list[float]] = {}
        for line in self.c.get("/metrics").text.splitlines():
            if not line.startswith("sandlot_session_state_seconds_"):
                continue
            name, value = line.rsplit(" ", 1)
            kind = name.split("{")[0].rsplit("_", 1)[1]
            labels = dict(x.split("=") for x in name.split("{")[1].rstrip("}").split(","))
            key = (labels["op"].strip('"'), labels["clock"].strip('"'))
            if kind in ("sum", "count"):
                out.setdefault(key, [0.0, 0.0])[kind == "count"] += float(value)
        return {k: (v[0], v[1]) for k, v in out.items()}

    @contextlib.contextmanager
    def costs(self, row: str) -> Iterator[None]:
        """What a snapshot's save and a restore's load cost per session in `row`: the mean
        wall time the server waited for each, and the CPU time the box used for it."""
        before = self.state_seconds()
        yield
        after = self.state_seconds()
        for (op, clock), (total, count) in after.items():
            was = before.get((op, clock), (0.0, 0.0))
            if op in ("save", "load") and count > was[1]:
                per = (total - was[0]) / (count - was[1]) * 1000
                self.breakdown.setdefault(row, {})[f"{op} {clock}"] = round(per, 1)

    def ready(self, snap: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.ok(self.c.get(f"/snapshots/{snap}"))["status"] != "ready":
            if time.monotonic() > deadline:
                sys.exit("the snapshot was not written")
            time.sleep(0.05)


def measure(
    url: str, n: int, count: int, pool: int, setup: str, store: Path
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, dict[str, float]]]:
    """The timed rows; the bytes: what a fork of `count` holds against one snapshot; and per
    row, the mean cost of a save and of a load in the box (Bench.costs)."""
    rows: dict[str, list[float]] = {}
    sizes: dict[str, float] = {}
    with httpx.Client(base_url=url, timeout=600) as c:
        b = Bench(c, pool)
        b.pool_full()
        b.drop(b.create())  # a first kernel's imports warm the page cache for the rest
        base = layer_bytes()
        holder = b.create(memory_limit_MB=2048)
        b.run(holder, setup)
        before = disk_bytes(store)
        first = b.ok(c.post(f"/sessions/{holder}/snapshot"))
        b.ready(first["id"])
        sizes["snapshot bytes"] = first["bytes"]
        sizes["snapshot on disk"] = disk_bytes(store) - before
        forked = b.ok(c.post(f"/sessions/{holder}/fork", json={"count": count}))["sessions"]
        for kid in forked:
            b.run(kid["id"], PROBE)
        # in memory (layers not on disk) and on disk (the snapshot's, which the forks stack)
        sizes["parent and forks hold"] = layer_bytes() - base + disk_bytes(store) - before
        sizes["forks on disk"] = disk_bytes(store) - before - sizes["snapshot on disk"]
        b.drop(*(kid["id"] for kid in forked), holder)
        c.delete(f"/snapshots/{first['id']}")

        def fresh() -> list[str]:
            return [b.create()]

        def fresh_setup() -> list[str]:
            sid = b.create(memory_limit_MB=2048)
            b.run(sid, setup)
            b.run(sid, PROBE)
            return [sid]

        rows["create"] = b.timed(n, fresh)
        rows["create + setup"] = b.timed(n, fresh_setup)
        parent = fresh_setup()[0]

        for _ in range(n):  # the reply's latency; each written to disk before the next
            b.pool_full()
            t = time.perf_counter()
            with b.costs("snapshot"):
                snap = b.ok(c.post(f"/sessions/{parent}/snapshot"))["id"]
            rows.setdefault("snapshot", []).append((time.perf_counter() - t) * 1000)
            b.ready(snap)
            c.delete(f"/snapshots/{snap}")

        def fork(k: int) -> Callable[[], list[str]]:
            def call() -> list[str]:
                r = c.post(f"/sessions/{parent}/fork", json={"count": k})
                kids = [s["id"] for s in b.ok(r)["sessions"]]
                for kid in kids:
                    b.run(kid, PROBE)
                return kids

            return call

        with b.costs("fork x1"):
            rows["fork x1"] = b.timed(n, fork(1))
        with b.costs(f"fork x{count}"):
            rows[f"fork x{count}"] = b.timed(n, fork(count))
        snap = b.ok(c.post(f"/sessions/{parent}/snapshot"))["id"]
        b.ready(snap)

        def restore() -> list[str]:
            sid = b.ok(c.post("/sessions", json={"snapshot": snap}))["id"]
            b.run(sid, PROBE)
            return [sid]

        with b.costs("restore"):
            rows["restore"] = b.timed(n, restore)
        rows["execute (live)"] = b.timed(n, lambda: (b.run(parent, PROBE), [])[1])
        sleeper = b.create(pause_after=1)
        b.run(sleeper, setup)

        def resume() -> list[str]:
            deadline = time.monotonic() + 120
            while c.get(f"/sessions/{sleeper}").json()["status"] != "paused":
                if time.monotonic() > deadline:
                    sys.exit("the session was not paused")
                time.sleep(0.05)
            b.pool_full()
            t = time.perf_counter()
            out = b.run(sleeper, PROBE)
            rows.setdefault("resume", []).append((time.perf_counter() - t) * 1000)
            if not out.get("resumed"):
                sys.exit(f"the execution did not resume the session: {out}")
            return []

        with b.costs("resume"):  # its save is the pause's
            for _ in range(max(2, n // 2)):
                resume()
        b.drop(parent, sleeper)
        c.delete(f"/snapshots/{snap}")
    return rows, sizes, b.breakdown


def idle_memory(url: str, n: int, pool: int, store: Path) -> dict[str, float]:
    """Bytes per idle Python session: in memory live (its cgroup's), and paused (in memory,
    and its snapshot on disk)."""
    with httpx.Client(base_url=url, timeout=600) as c:
        b = Bench(c, pool)
        live = [b.create() for _ in range(n)]
        time.sleep(2)
        held = sum(c.get(f"/sessions/{sid}").json()["memory_bytes"] or 0 for sid in live)
        b.drop(*live)
        before = disk_bytes(store)
        sleepers = [b.create(pause_after=1) for _ in range(n)]
        deadline = time.monotonic() + 300
        while any(c.get(f"/sessions/{sid}").json()["status"] != "paused" for sid in sleepers):
            if time.monotonic() > deadline:
                sys.exit("the sessions were not paused")
            time.sleep(0.2)
        paused = sum(c.get(f"/sessions/{sid}").json()["memory_bytes"] or 0 for sid in sleepers)
        on_disk = disk_bytes(store) - before
        b.drop(*sleepers)
    return {"live memory": held / n, "paused memory": paused / n, "paused on disk": on_disk / n}


def report(rows: dict[str, list[float]], count: int) -> dict[str, dict[str, float | None]]:
    p50 = {name: pct(v, 0.5) for name, v in rows.items()}
    bases = {
        "create + setup": ("create", 1),
        "fork x1": ("create", 1),
        f"fork x{count}": ("create", count),
        "restore": ("create", 1),
        "resume": ("execute (live)", 1),
    }
    saves = {"fork x1": 1, f"fork x{count}": count, "restore": 1}
    out: dict[str, dict[str, float | None]] = {}
    for name, values in rows.items():
        base, times = bases.get(name, (None, 1))
        out[name] = {
            "p50_ms": round(p50[name], 1),
            "p90_ms": round(pct(values, 0.9), 1),
            "vs": None if base is None else round(p50[name] / (times * p50[base]), 2),
            "vs_setup": (
                round(p50[name] / (saves[name] * p50["create + setup"]), 2)
                if name in saves
                else None
            ),
        }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=6)
    p.add_argument("--count", type=int, default=8, help="sessions per fork in the fork xN row")
    p.add_argument("--pool", type=int, default=8, help="prestarted kernels (SESSION_POOL)")
    p.add_argument("--idle", type=int, default=0, help="idle sessions to hold, live and paused")
    p.add_argument("--setup", choices=sorted(SETUPS), default="work")
    p.add_argument("--out", help="write the figures as JSON here too")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log, store = Path(tmp) / "server.log", Path(tmp) / "snapshots"
        env = {
            **ENV,
            "SANDLOT_SESSION_POOL": str(args.pool),
            "SANDLOT_SESSION_MAX": str(max(args.count, args.idle) + 4),
            "SANDLOT_SNAPSHOT_DIR": str(store),
            "SANDLOT_SESSION_DISK_BYTES": str(512 << 20),
        }
        proc, url = start_server(1, log, env)
        try:
            wait_ping(url, proc, log)
            setup = SETUPS[args.setup]
            rows, sizes, costs = measure(url, args.requests, args.count, args.pool, setup, store)
            if args.idle:
                sizes |= idle_memory(url, args.idle, args.pool, store)
        except (httpx.HTTPError, SystemExit):
            sys.stderr.write(f"the server's log, last lines:\n{log.read_text()[-4000:]}\n")
            raise
        finally:
            stop_server(proc)
    figures = report(rows, args.count)
    load = os.getloadavg()[0]
    print(f"setup={args.setup} count={args.count} pool={args.pool} requests={args.requests} "
          f"load={load:.1f}")  # fmt: skip
    print(f"{'':16} {'p50 ms':>8} {'p90 ms':>8}  {'ratio':>18}  {'vs create + setup':>18}")
    for name, r in figures.items():
        base = {"resume": "execute (live)"}.get(name, "create")
        scale = args.count if name == f"fork x{args.count}" else 1
        of = f"{base}" if scale == 1 else f"{scale} x {base}"
        vs = "" if r["vs"] is None else f"{r['vs']:.2f} x {of}"
        saves = "" if r["vs_setup"] is None else f"{r['vs_setup']:.2f} x"
        print(f"{name:16} {r['p50_ms']:8.1f} {r['p90_ms']:8.1f}  {vs:>24}  {saves:>12}")
    mb = {name: f"{value / 1e6:.3g} MB" for name, value in sizes.items()}
    print(f"one snapshot: {mb['snapshot bytes']} ({mb['snapshot on disk']} on disk); with it, the "
          f"parent and {args.count} forks hold {mb['parent and forks hold']} in all (memory and "
          f"disk), {sizes['parent and forks hold'] / sizes['snapshot bytes']:.2f} x one snapshot; "
          f"the forks wrote {mb['forks on disk']} to disk")  # fmt: skip
    if args.idle:
        print(f"an idle session holds {mb['live memory']} of memory live, {mb['paused memory']} "
              f"paused ({mb['paused on disk']} on disk); x 1000: "
              f"{sizes['live memory'] * 1000 / 1e9:.1f} GB against "
              f"{sizes['paused memory'] * 1000 / 1e9:.1f} GB")  # fmt: skip
    print("per session, mean ms: wall time the server waited for its box to save or load "
          "its state, and the CPU time the box used for it")  # fmt: skip
    for name, cost in costs.items():
        print(f"  {name:14} " + "  ".join(f"{k} {v:6.1f}" for k, v in sorted(cost.items())))
    bare: dict[str, float] = {}
    if args.setup == "target":  # its objects copied by Python alone, on this machine, now
        bare = state_bare.floor(state_bare.python_of_boxes(), args.count)
        dump, one = bare["cloudpickle.dumps wall"], bare["load x1 wall"]
        many = bare[f"load x{args.count} wall"]
        fork = figures[f"fork x{args.count}"]["p50_ms"] or 0.0
        print(f"the same objects without sandlot (bench/state_bare.py), wall ms: pickled "
              f"{dump:.0f}, read back by a fresh process {one:.0f}, by {args.count} at once "
              f"{many:.0f}; snapshot {(figures['snapshot']['p50_ms'] or 0) / dump:.2f} x the "
              f"pickle, fork x{args.count} {fork / (dump + many):.2f} x the pickle and the "
              f"{args.count} reads, resume {(figures['resume']['p50_ms'] or 0) / one:.2f} x "
              "one read")  # fmt: skip
    if args.out:
        out = {"args": vars(args), "rows": figures, "bytes": sizes, "state_costs": costs,
               "bare": bare}  # fmt: skip
        Path(args.out).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
