"""Where one run's CPU and wall time go, stage by stage, next to the same program run bare.

For warm Python (`print(1)` forked from the zygote's interpreter), cold Python (the interpreter
exec'd in the box) and a C++ hello binary, it runs the program N times:

- bare, as a subprocess of this process: the program's own CPU (child rusage) and this
  process's fork/exec/wait work;
- through the jail alone (one slot, no HTTP): the spawner's and the zygote's own CPU (from
  /proc), the box's init and its run process up to the program (what the zygote reports), the
  rest of the slot's cgroup (the program, its exit, the box's teardown), this process's side of
  the channel, and kernel threads (machine-wide: namespace teardown runs there, charged to no
  process, so this line also holds other load's share);
- through HTTP (`sandlot serve --slots 1`): the server process's CPU per request (HTTP
  parsing, validation, routing, admission, serialisation, its side of the channel) and the
  client's.

Wall time per stage is the median of what the spawner measured for each run. Runs go back to
back: a box built ahead for the next run is then still being built when it comes (the `start`
stage), so the jail-alone wall figures show a box's whole cost.

    .venv/bin/python bench/breakdown.py [--runs N] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import (
    CLEAN_ENV,
    CPP,
    PYTHON,
    SANDBOX_PYTHON,
    compile_cpp,
    jiffies_to_ms,
    start_server,
    stop_server,
    wait_ping,
)
from sandlot.jail import Jail, JailConfig, RunSpec

STATE_DIR = "/run/sandlot-breakdown"
UID_BASE = 65300


def own_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def process_cpu_ms(pid: int) -> float:
    """utime + stime of one process (not its children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return jiffies_to_ms(int(fields[11]) + int(fields[12]))


def kernel_threads_cpu_ms() -> float:
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == "2":  # children of kthreadd
            total += jiffies_to_ms(int(fields[11]) + int(fields[12]))
    return total


def children_of(pid: int, comm: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    text = f.read()
            except OSError:
                continue
            name = text[text.index("(") + 1 : text.rindex(")")]
            if int(text.rsplit(")", 1)[1].split()[1]) == pid and name.startswith(comm):
                found.append(int(entry.name))
    return found


def slot_cgroup_ms(path: Path) -> float:
    if (path / "cpuacct.usage").exists():  # cgroup v1
        return int((path / "cpuacct.usage").read_text()) / 1e6
    stat = dict(line.split() for line in (path / "cpu.stat").read_text().splitlines())
    return int(stat["usage_usec"]) / 1e3


def slot_cgroup(server_pid: int) -> Path:
    """The cgroup holding slot 0's CPU accounting of the server with that pid (v1 or v2)."""
    tree = f"sandlot-{server_pid}-*/slot-0"
    for pattern in (f"cpuacct/**/{tree}", f"**/{tree}"):
        for path in Path("/sys/fs/cgroup").glob(pattern):
            if (path / "cpuacct.usage").exists() or (path / "cpu.stat").exists():
                return path
    sys.exit(f"no slot cgroup found for the server {server_pid}")


class Probe:
    """CPU counters of the processes that serve one slot, read before and after a series."""

    def __init__(self, spawner: int, cgroup: Path) -> None:
        self.spawner, self.cgroup = spawner, cgroup

    def read(self) -> dict[str, float]:
        zygotes = children_of(self.spawner, "sandlot-zygote")
        return {
            "spawner": process_cpu_ms(self.spawner),
            "zygote": sum(process_cpu_ms(z) for z in zygotes),
            "slot": slot_cgroup_ms(self.cgroup),
            "kthreads": kernel_threads_cpu_ms(),
            "here": own_cpu_ms(),
        }


def per_run(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    return {k: (after[k] - before[k]) / n for k in before}


def bare(argv: list[str], cwd: str, n: int) -> dict[str, float]:
    for _ in range(5):
        subprocess.run(argv, cwd=cwd, env=CLEAN_ENV, capture_output=True, check=True)
    child, here, start = children_cpu_ms(), own_cpu_ms(), time.perf_counter()
    walls = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=CLEAN_ENV, capture_output=True, check=True)
        walls.append(time.perf_counter() - t)
    return {
        "program": (children_cpu_ms() - child) / n,
        "launcher": (own_cpu_ms() - here) / n,
        "wall_ms": statistics.median(walls) * 1000,
        "seconds": time.perf_counter() - start,
    }


def jail_series(run: Callable[[], dict[str, float]], probe: Probe, n: int) -> dict:
    for _ in range(10):
        run()
    before, stages = probe.read(), []
    for _ in range(n):
        stages.append(run())
    cpu = per_run(before, probe.read(), n)
    keys = sorted({k for s in stages for k in s})
    medians = {k: statistics.median(s.get(k, 0.0) for s in stages) * 1000 for k in keys}
    return {"cpu": cpu, "stages": medians}


def jail_config() -> JailConfig:
    """One slot, whose zygote runs on the sandbox's Python, as the server's do."""
    return JailConfig(
        slots=1, state_dir=STATE_DIR, uid_base=UID_BASE, zygote_python=SANDBOX_PYTHON,
        ro_binds=(str(Path(SANDBOX_PYTHON).parents[1]),),
    )  # fmt: skip


def breakdown_jail(specs: dict[str, RunSpec], n: int) -> dict[str, dict]:
    out = {}
    with Jail(jail_config()) as jail:
        slot = jail.slots[0]
        assert slot.proc is not None
        probe = Probe(slot.proc.pid, slot_cgroup(os.getpid()))
        for name, spec in specs.items():

            def one(spec: RunSpec = spec) -> dict[str, float]:
                outcome = jail.run(0, spec)
                assert outcome.exit_code == 0, outcome
                return outcome.stages

            out[name] = jail_series(one, probe, n)
    return out


def breakdown_http(programs: dict[str, tuple[str, str]], n: int) -> dict[str, dict]:
    out: dict[str, dict] = {}
    with tempfile.NamedTemporaryFile(prefix="sandlot-breakdown-", suffix=".log") as log:
        proc, url = start_server(1, Path(log.name))
        try:
            wait_ping(url, proc, Path(log.name))
            probe = Probe(children_of(proc.pid, "sandlot-spawner")[0], slot_cgroup(proc.pid))
            with httpx.Client(base_url=url, timeout=60) as client:
                for name, (language, code) in programs.items():
                    body = {"code": code, "language": language}

                    def one(body: dict = body) -> dict[str, float]:
                        r = client.post("/run_code", json=body)
                        assert r.status_code == 200 and r.json()["status"] == "Success", r.text
                        return {}

                    for _ in range(10):
                        one()
                    server_before = process_cpu_ms(proc.pid)
                    series = jail_series(one, probe, n)
                    series["cpu"]["server"] = (process_cpu_ms(proc.pid) - server_before) / n
                    out[name] = series
        finally:
            stop_server(proc)
    return out


ROWS = (
    ("server process (HTTP, validation, admission, serialisation, channel)", "server"),
    ("this process (client, or the jail's side of the channel)", "here"),
    ("spawner (files, limits, pipes, watch, sweep, wipe, accounting)", "spawner"),
    ("zygote (starts the box's init, hands it the run; forks a script's process)", "zygote"),
    ("box init: namespaces, mounts, loopback", "cpu_init"),
    ("confinement: uid, capabilities, no_new_privs, seccomp", "cpu_confine"),
    ("program, its exit and the box's teardown (rest of the slot)", "rest"),
    ("kernel threads, machine-wide (namespace teardown and others' load)", "kthreads"),
)


def table(name: str, bare_cpu: dict[str, float], jail: dict, http: dict | None) -> str:
    def column(series: dict | None) -> dict[str, float]:
        if series is None:
            return {}
        cpu, stages = dict(series["cpu"]), series["stages"]
        cpu["cpu_init"] = stages.get("cpu_init", 0.0)
        cpu["cpu_confine"] = stages.get("cpu_confine", 0.0)
        box = cpu["cpu_init"] + cpu["cpu_confine"]
        cpu["rest"] = cpu["slot"] - cpu["spawner"] - cpu["zygote"] - box
        cpu.setdefault("server", 0.0)
        return cpu

    j, h = column(jail), column(http)
    lines = [f"### {name}", "", "| CPU ms per run | bare | jail alone | HTTP |"]
    lines.append("|---|---|---|---|")
    lines.append(f"| the program (bare: its own CPU) | {bare_cpu['program']:.2f} | | |")
    lines.append(f"| bare launcher (fork, exec, wait, pipes) | {bare_cpu['launcher']:.2f} | | |")
    for label, key in ROWS:
        # Through HTTP the zygote's report does not reach us: the box's parts are in "rest".
        hv = "" if not h else "in rest" if key in ("cpu_init", "cpu_confine") else f"{h[key]:.2f}"
        lines.append(f"| {label} | | {j.get(key, 0.0):.2f} | {hv} |")
    total_j = sum(j.get(k, 0.0) for _, k in ROWS if k != "kthreads")
    total_h = sum(h.get(k, 0.0) for _, k in ROWS if k != "kthreads") if h else 0.0
    bare_total = bare_cpu["program"] + bare_cpu["launcher"]
    lines.append(
        f"| **total** (kernel threads aside) | **{bare_total:.2f}** | **{total_j:.2f}** "
        f"({total_j / bare_total:.2f}x bare) | **{total_h:.2f}** ({total_h / bare_total:.2f}x) |"
        if h
        else f"| **total** | **{bare_total:.2f}** | **{total_j:.2f}** | |"
    )
    lines += ["", "| wall ms per stage (jail alone, median) | |", "|---|---|"]
    for stage, ms in jail["stages"].items():
        if not stage.startswith("cpu_"):
            lines.append(f"| {stage} | {ms:.2f} |")
    lines.append(f"| bare run, whole | {bare_cpu['wall_ms']:.2f} |")
    return "\n".join(lines)


def programs(tmp: Path) -> dict[str, RunSpec]:
    """The three programs as runs, their files also written to `tmp` for the bare runs."""
    binary = compile_cpp(CPP, tmp).rename(tmp / "main")
    (tmp / "main.py").write_text(PYTHON.code)
    script = {"main.py": PYTHON.code.encode()}
    return {
        "warm Python": RunSpec(argv=(SANDBOX_PYTHON, "main.py"), files=script, warm=True),
        "cold Python": RunSpec(argv=(SANDBOX_PYTHON, "main.py"), files=script),
        "C++ hello": RunSpec(argv=("./main",), files={"main": binary.read_bytes()}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="runs per program and path")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("the jail needs root")
    with tempfile.TemporaryDirectory(prefix="sandlot-breakdown-") as tmp:
        specs = programs(Path(tmp))
        bares = {
            "warm Python": bare([SANDBOX_PYTHON, "main.py"], tmp, args.runs),
            "C++ hello": bare([str(Path(tmp) / "main")], tmp, args.runs),
        }
        bares["cold Python"] = bares["warm Python"]
        jail = breakdown_jail(specs, args.runs)
        http = breakdown_http(
            {"warm Python": ("python", PYTHON.code), "C++ hello": ("cpp", CPP.code)}, args.runs
        )
    load = os.getloadavg()
    print(f"# cost breakdown, {args.runs} runs each, load average {load[0]:.1f}\n")
    for name in specs:
        print(table(name, bares[name], jail[name], http.get(name)), end="\n\n")
    if args.out:
        args.out.write_text(json.dumps({"bare": bares, "jail": jail, "http": http}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
