"""Where a box's CPU goes, by process and by the kind of work the kernel does for it.

`breakdown.py` says which process spends a run's CPU; this says why. It runs the same three
programs through the jail alone (one slot, back to back) while `perf record -a` samples every
CPU at a fixed period of CPU time, and sorts each sample by its process (the box's init and run
process, the zygote, the spawner, the program once exec'd, kernel threads) and by the first of
these found on its call stack:

- fork: page tables copied (`copy_page_range`), the rest of `copy_process`;
- copy-on-write faults (`do_wp_page`) and other page faults;
- an address space torn down (`exit_mmap`: at exit, or at exec for the old one);
- the network namespace made (`copy_net_ns`) or torn down (`cleanup_net`, in a kernel thread);
- other namespaces made or freed, mounts and unmounts;
- Python's interpreter loop (user space), other user space, other kernel work.

Sampling costs CPU too (call stacks are walked on every sample), so the totals run above
`breakdown.py`'s; read the shares. Needs root and `perf` (Debian: `apt-get install linux-perf`).

    .venv/bin/python bench/kernel.py [--runs N] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.breakdown import jail_config, programs
from sandlot.jail import Jail

PERIOD_NS = 250_000  # one sample per 0.25 ms of CPU time, on every CPU
# (name, frames that put a sample in it): the first kind with a frame on the stack wins.
KINDS = (
    ("network namespace made", ("copy_net_ns",)),
    ("network namespace torn down", ("cleanup_net",)),
    ("other namespaces, made or freed", ("create_new_namespaces", "put_mnt_ns", "free_nsproxy")),
    ("mounts and unmounts", ("__x64_sys_mount", "__x64_sys_umount", "cleanup_mnt")),
    ("fork: page tables copied", ("copy_page_range",)),
    ("fork: the rest", ("copy_process",)),
    ("address space torn down", ("exit_mmap",)),
    ("copy-on-write faults", ("do_wp_page",)),
    ("other page faults", ("exc_page_fault",)),
    ("Python's interpreter loop", ("_PyEval_EvalFrameDefault",)),
)
KERNEL_ENTRIES = ("entry_SYSCALL_64", "do_syscall_64", "asm_exc_", "asm_sysvec_", "ret_from_fork")
IDLE = ("swapper",)
PROGRAM_COMMS = {"main", "python3"}  # the C++ binary and the interpreter once exec'd


def process_of(comm: str) -> str:
    if comm.startswith("box-init"):  # the init from its exec until it names itself
        return "init"
    if comm.startswith("sandlot-"):
        return comm.removeprefix("sandlot-")
    if comm.startswith(("kworker", "ksoftirqd", "rcu_", "kthreadd")):
        return "kernel threads"
    return "program" if comm in PROGRAM_COMMS else "others"


def kind_of(frames: list[str]) -> str:
    for name, marks in KINDS:
        if any(frame in marks for frame in frames):
            return name
    if any(frame.startswith(KERNEL_ENTRIES) for frame in frames):
        return "other kernel work"
    return "other user space"


def samples(path: Path) -> Counter[tuple[str, str]]:
    """(process, kind) -> CPU ms, from a perf.data file."""
    text = subprocess.run(
        ["perf", "script", "-i", str(path), "-F", "comm,period,ip,sym"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    out: Counter[tuple[str, str]] = Counter()
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        head = lines[0].split()
        comm, period = " ".join(head[:-1]), int(head[-1])
        if comm.startswith(IDLE):
            continue
        frames = [line.split()[1] for line in lines[1:] if len(line.split()) > 1]
        out[(process_of(comm), kind_of(frames))] += period / 1e6
    return out


def profile(jail: Jail, spec, n: int, data: Path) -> Counter[tuple[str, str]]:
    for _ in range(10):
        jail.run(0, spec)
    perf = subprocess.Popen(
        ["perf", "record", "-a", "-g", "-e", "cpu-clock", "-c", str(PERIOD_NS), "-o", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(1)  # perf is sampling before the first run
    try:
        for _ in range(n):
            outcome = jail.run(0, spec)
            assert outcome.exit_code == 0, outcome
        time.sleep(0.2)  # the last box's teardown, done by kernel threads
    finally:
        perf.send_signal(signal.SIGINT)
        perf.wait()
    return Counter({key: ms / n for key, ms in samples(data).items()})


def table(name: str, per_run: Counter[tuple[str, str]]) -> str:
    processes = ["init", "run", "zygote", "spawner", "program", "kernel threads", "others"]
    kinds = [k for k, _ in KINDS] + ["other kernel work", "other user space"]
    rows = [f"### {name}\n", "| CPU ms per run | " + " | ".join(processes) + " | all |"]
    rows.append("|---" * (len(processes) + 2) + "|")
    for kind in kinds:
        cells = [per_run.get((p, kind), 0.0) for p in processes]
        if sum(cells) >= 0.05:
            rows.append(
                f"| {kind} | " + " | ".join(f"{c:.2f}" if c >= 0.05 else "" for c in cells)
                + f" | {sum(cells):.2f} |"
            )  # fmt: skip
    totals = [sum(ms for (p, _), ms in per_run.items() if p == proc) for proc in processes]
    rows.append(
        "| **all** | " + " | ".join(f"**{t:.2f}**" for t in totals) + f" | **{sum(totals):.2f}** |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="runs per program")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("the jail and perf need root")
    if shutil.which("perf") is None:
        sys.exit("perf is not installed (Debian: apt-get install linux-perf)")
    results = {}
    with tempfile.TemporaryDirectory(prefix="sandlot-kernel-") as tmp, Jail(jail_config()) as jail:
        for name, spec in programs(Path(tmp)).items():
            results[name] = profile(jail, spec, args.runs, Path(tmp) / "perf.data")
    load = os.getloadavg()
    print(f"# CPU by process and kind, {args.runs} jail-alone runs each, load {load[0]:.1f}\n")
    for name, per_run in results.items():
        print(table(name, per_run), end="\n\n")
    if args.out:
        flat = {n: {f"{p}/{k}": ms for (p, k), ms in r.items()} for n, r in results.items()}
        args.out.write_text(json.dumps(flat, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
