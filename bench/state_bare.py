"""What copying issue 44's 50 MB of Python objects costs without sandlot: the floor under a
snapshot, a fork and a resume of bench/forks.py's `target` session, in the sandbox's Python.

    .venv/bin/python bench/state_bare.py [--python PATH] [--count 8]

The objects are forks.py's (130,000 small dicts, about 50 MB as tracemalloc counts them, in a
list, with a module beside them as a kernel's namespace has). It prints, best of 5, the CPU time
of pickling them (cloudpickle, which a snapshot uses, and plain pickle), of reading them back
(with the cyclic collector on and off: a restore turns it off), of importing cloudpickle, and of
one fresh process that reads the file back (what a fork's kernel does, with its page faults);
then the wall time of `count` such processes at once against one, on this machine's cores: what
a fork of `count` costs at least, in processes that share nothing (as a fork's boxes must not).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sandlot.config import Config

OBJECTS = """
import os
objects = [{"id": i, "name": f"item-{i}", "tags": ["a", "b"], "score": i * 0.5}
           for i in range(130_000)]
names = {"objects": objects, "os": os}
"""
MEASURE = (
    OBJECTS
    + """
import gc, json, pickle, sys, time
c = time.process_time(); import cloudpickle; imported = time.process_time() - c
def best(f, n=5, clock=time.process_time):
    out = []
    for _ in range(n):
        c = clock(); f(); out.append(clock() - c)
    return min(out) * 1000
data = cloudpickle.dumps(names, protocol=5)
open(sys.argv[1], "wb").write(data)
def quiet_loads():
    gc.disable()
    try:
        pickle.loads(data)
    finally:
        gc.enable()
print(json.dumps({
    "bytes": len(data),
    "import cloudpickle": imported * 1000,
    "cloudpickle.dumps": best(lambda: cloudpickle.dumps(names, protocol=5)),
    "cloudpickle.dumps wall": best(lambda: cloudpickle.dumps(names, protocol=5),
                                   clock=time.perf_counter),
    "pickle.dumps": best(lambda: pickle.dumps({"objects": objects}, protocol=5)),
    "pickle.loads, collector on": best(lambda: pickle.loads(data)),
    "pickle.loads, collector off": best(quiet_loads),
}))
"""
)
# A fork's kernel: a fresh process with cloudpickle imported, reading the file back once.
LOAD = """
import gc, pickle, sys, time
import cloudpickle
c = time.process_time()
gc.disable()
with open(sys.argv[1], "rb") as f:
    pickle.load(f)
print((time.process_time() - c) * 1000)
"""


def loads_at_once(python: str, path: str, n: int) -> tuple[float, float]:
    """Wall ms of n fresh processes each reading the file back at once, and their mean CPU ms
    for it (their start and imports are not counted: they wait for a go first)."""
    go = LOAD.replace("c = time.process_time()", "sys.stdin.read(1)\nc = time.process_time()")
    argv = [python, "-c", go, path]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    procs = [subprocess.Popen(argv, **pipes) for _ in range(n)]  # type: ignore[call-overload]
    time.sleep(2.0)  # their imports done
    t = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("x")
        p.stdin.close()
    cpu = [float(p.stdout.read()) for p in procs if p.stdout is not None]
    for proc in procs:
        proc.wait()
    return (time.perf_counter() - t) * 1000, sum(cpu) / n


def floor(python: str, count: int) -> dict[str, float]:
    """The CPU ms of each step (see the module's docstring), and the wall ms of a pickle
    (`dumps wall`), of one fresh process's read (`load x1 wall`) and of `count` at once."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "state")
        out = json.loads(subprocess.run([python, "-c", MEASURE, path], check=True,
                                        capture_output=True, text=True).stdout)  # fmt: skip
        one_wall, one_cpu = loads_at_once(python, path, 1)
        n_wall, n_cpu = loads_at_once(python, path, count)
    return {**out, "a fresh process reads it back": one_cpu, "load x1 wall": one_wall,
            f"load x{count} wall": n_wall, f"load x{count} cpu": n_cpu}  # fmt: skip


def python_of_boxes() -> str:
    return f"{Config().runtime_dir}/python/bin/python3"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", default=python_of_boxes())
    p.add_argument("--count", type=int, default=8)
    args = p.parse_args()
    out = floor(args.python, args.count)
    one_wall, n_wall = out.pop("load x1 wall"), out.pop(f"load x{args.count} wall")
    n_cpu = out.pop(f"load x{args.count} cpu")
    out.pop("cloudpickle.dumps wall")
    print(f"{out.pop('bytes') / 1e6:.1f} MB pickled; CPU ms, best of 5, load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores:")  # fmt: skip
    for name, ms in out.items():
        print(f"  {name:32} {ms:7.1f}")
    print(f"{args.count} fresh processes reading it back at once: {n_wall:.0f} ms of wall time "
          f"({n_cpu:.1f} ms of CPU each), against {one_wall:.0f} ms for one")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
