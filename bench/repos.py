"""Repository tasks: setup cold and cached, grading time, what a cached environment adds to a
grade, and disk per environment and per extra parallel grade; beside a per-task container
image (podman, `--podman`), measured in the same run.

    sudo .venv/bin/python bench/repos.py [--project prettytable] [--parallel 4] [--podman]

It fetches a real project (tests/repo_projects.py: a PyPI sdist, an npm package or a Go
module, a bug injected at its base), runs sandlot in this process with a repository cache of
its own, and prints one table. Targets: a cached environment adds <= 50 ms to a grade; N
parallel grades of one repository use <= 1.1x the disk of one.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandlot.config import Config
from sandlot.repos.tasks import GradeTask, Repository
from sandlot.service import Service
from tests.repo_projects import PROJECTS, Task, make_task

BASE_IMAGE = "localhost/sandlot-base"  # Debian 12, what the sandlot image starts from
PODMAN = ("podman",)
RUN = ("--runtime", "runc", "--ulimit", "nofile=16384:16384", "--ulimit", "nproc=16384:16384")
USED = "; df -B1 --output=used /repo | tail -1"  # the run's own layer (the overlay's upper)


def timed(fn, *args, **kw):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - start


def sandlot_side(name: str, task: Task, parallel: int, rounds: int) -> dict[str, float]:
    p = PROJECTS[name]
    cache = Path(tempfile.mkdtemp(prefix="sandlot-bench-repos-", dir="/var/tmp"))
    cfg = Config.load(slots=max(2, parallel), uid_base=65400, state_dir="/run/sandlot-bench-repos",
                      repo_dir=str(cache))  # fmt: skip
    svc = Service(cfg).start()
    repos, loop = svc.repos, asyncio.new_event_loop()
    repo = Repository(path=str(task.repo))

    def grade(patch: str = "", setup: str | None = p.setup, test: str = p.test) -> dict:
        job = repos.grade(GradeTask(repo, task.base, patch=patch, setup=setup, test=test,
                                    fail_to_pass=list(p.fail_to_pass)))  # fmt: skip
        return loop.run_until_complete(job).to_dict()

    out: dict[str, float] = {}
    try:
        first, out["grade, cold (setup included)"] = timed(grade, task.gold)
        out["setup, cold"] = first["setup"]["seconds"]
        assert first["resolved"], first["message"]
        _, out["setup, cached (a grade's lookup)"] = timed(
            loop.run_until_complete, repos.set_up(repo, task.base, p.setup)
        )
        out["grade, cached"] = statistics.median(timed(grade, task.gold)[1] for _ in range(rounds))
        with_env, without = [], []
        for _ in range(2 * rounds):  # in pairs: the machine's load falls on both alike
            with_env.append(timed(grade, "", p.setup, "true")[1])
            without.append(timed(grade, "", None, "true")[1])
        out["grade of `true`, cached env"] = statistics.median(with_env)
        out["grade of `true`, no env"] = statistics.median(without)
        diffs = [a - b for a, b in zip(with_env, without, strict=True)]
        out["env adds to a grade (ms)"] = 1000 * statistics.median(diffs)
        env = next(e for e in repos.store.entries("envs"))
        checkout = next(e for e in repos.store.entries("checkouts"))
        out["disk: environment (MiB)"] = env.size / 2**20
        out["disk: checkout (MiB)"] = checkout.size / 2**20

        async def many(n: int) -> list[dict]:
            tasks = [repos.grade(GradeTask(repo, task.base, patch=task.gold, setup=p.setup,
                                           test=p.test + USED)) for _ in range(n)]  # fmt: skip
            return [r.to_dict() for r in await asyncio.gather(*tasks)]

        runs = loop.run_until_complete(many(parallel))
        layers = [int(r["run"]["stdout_tail"].split()[-1]) for r in runs]
        shared = env.size + checkout.size
        out["per extra parallel grade: its layer (MiB)"] = statistics.mean(layers) / 2**20
        out[f"disk of {parallel} parallel grades / one"] = (shared + sum(layers)) / (
            shared + layers[0])  # fmt: skip
    finally:
        svc.close()
        loop.close()
        subprocess.run(["rm", "-rf", str(cache)])
    return out


CONTAINERFILE = """\
FROM {base}
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3 python3-venv \\
    git ca-certificates > /dev/null
COPY .host-ca.crt /etc/ssl/certs/host-ca.crt
ENV PIP_CERT=/etc/ssl/certs/host-ca.crt SSL_CERT_FILE=/etc/ssl/certs/host-ca.crt
COPY . /repo
WORKDIR /repo
RUN {setup}
"""


def podman(*args: str, check: bool = True) -> str:
    done = subprocess.run([*PODMAN, *args], capture_output=True, text=True, timeout=3600)
    if check and done.returncode:
        raise RuntimeError(f"podman {args[:2]}: {done.stderr[-2000:]}")
    return done.stdout


def podman_side(name: str, task: Task, parallel: int) -> dict[str, float]:
    """A per-task image (SWE-bench's way): Debian, the toolchain, the repository at its base,
    its setup; each grade a container of it with no network."""
    p = PROJECTS[name]
    if not p.setup.startswith("python3"):
        return {}
    found = podman("images", "--filter", f"reference={BASE_IMAGE}", "--format",
                   "{{.Repository}}:{{.Tag}}").split()  # fmt: skip
    if not found:
        print(f"no {BASE_IMAGE} image here (tests/deploy/test_image.py builds it): no podman side")
        return {}
    base = found[0]
    (task.repo / "Containerfile").write_text(CONTAINERFILE.format(base=base, setup=p.setup))
    # The host's trust store, as sandlot's boxes have it (where TLS is intercepted, it holds
    # the interceptor's certificate too).
    shutil.copyfile("/etc/ssl/certs/ca-certificates.crt", task.repo / ".host-ca.crt")
    image = f"localhost/bench-task-{name}"
    build = ("build", *RUN[:2], "-q", "-t", image, "-f", str(task.repo / "Containerfile"),
             str(task.repo))  # fmt: skip
    out: dict[str, float] = {}
    _, out["setup, cold"] = timed(podman, *build[:1], "--no-cache", *build[1:])
    _, out["setup, cached (a grade's lookup)"] = timed(podman, *build)
    size = float(podman("image", "inspect", "--format", "{{.Size}}", image))
    out["disk: environment (MiB)"] = size / 2**20
    grade = ("run", "--rm", *RUN, "--network", "none", image, "sh", "-c",
             f". .venv/bin/activate; {p.test} -q > /dev/null; true")  # fmt: skip
    out["grade, cached"] = min(timed(podman, *grade)[1] for _ in range(3))
    names = [f"bench-task-{name}-{i}" for i in range(parallel)]
    script = f". .venv/bin/activate; {p.test} -q > /dev/null; sleep 600"
    for n in names:
        podman("run", "-d", "--name", n, *RUN, "--network", "none", image, "sh", "-c", script,
               check=False)  # fmt: skip
    time.sleep(20)
    rw = [float(podman("container", "inspect", "--size", "--format", "{{.SizeRw}}", n) or 0)
          for n in names]  # fmt: skip
    for n in names:
        podman("rm", "-f", n, check=False)
    out["per extra parallel grade: its layer (MiB)"] = statistics.mean(rw) / 2**20
    out[f"disk of {parallel} parallel grades / one"] = (size + sum(rw)) / (size + rw[0])
    podman("rmi", "-f", image, check=False)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", default="prettytable", choices=sorted(PROJECTS))
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--podman", action="store_true", help="also a per-task container image")
    args = ap.parse_args()
    where = Path(tempfile.mkdtemp(prefix="sandlot-bench-task-", dir="/var/tmp"))
    task = make_task(PROJECTS[args.project], where)
    ours = sandlot_side(args.project, task, args.parallel, args.rounds)
    print({k: round(v, 3) for k, v in ours.items()}, flush=True)
    theirs = podman_side(args.project, task, args.parallel) if args.podman else {}
    print(f"\n{args.project}: sandlot" + ("  vs  a per-task podman image" if theirs else ""))
    for key, value in ours.items():
        other = f"{theirs[key]:10.2f}" if key in theirs else ""
        print(f"  {key:45} {value:10.2f} {other}")
    adds = ours["env adds to a grade (ms)"]
    ratio = ours[f"disk of {args.parallel} parallel grades / one"]
    print(f"targets: env adds {adds:.1f} ms (<= 50: {'met' if adds <= 50 else 'MISSED'}); "
          f"{args.parallel} parallel grades {ratio:.3f}x one (<= 1.1: "
          f"{'met' if ratio <= 1.1 else 'MISSED'})")  # fmt: skip
    subprocess.run(["rm", "-rf", str(where)])


if __name__ == "__main__":
    main()
