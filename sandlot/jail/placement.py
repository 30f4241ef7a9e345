"""Which CPUs each slot's runs are kept to (the `slot_cpus` setting).

A run passes along a chain of processes (the spawner, the zygote, the box's init, the program),
each waking the next. Left to the kernel, a wake-up often goes to the other CPU, which has to
come out of idle first, or queues behind another slot's process while a CPU idles: two slots on
two cores kept them 84% busy. A slot kept to a CPU of its own hands a run on where it already
runs, and the cores stay 98% busy (docs/isolation.md). This is placement, not a limit: CPU
time is what a run is limited by.

A setting is `auto` (slot k gets every n-th of the CPUs the server may use, from the k-th, n
the slots; slots beyond the CPUs go round them again), `none` (the kernel places every run), or
one CPU list per slot, `;` between them (`0-3;4-7`, `1;2;3`), used round again when the slots
are more.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

AUTO, NONE = "auto", "none"
MAX_CPU = 8191  # the kernel's largest CONFIG_NR_CPUS

CpuSets = tuple[tuple[int, ...], ...]


def allowed_cpus() -> list[int]:
    """The CPUs this process may use (its affinity: a container's cpuset, `taskset`)."""
    return sorted(os.sched_getaffinity(0))


def parse_cpu_sets(setting: str) -> CpuSets | None:
    """The per-slot CPU lists a setting names: None for `auto`, () for `none`; ValueError
    saying what is wrong."""
    text = setting.strip().lower()
    if text == AUTO:
        return None
    if text == NONE:
        return ()
    return tuple(_cpu_list(part) for part in text.split(";"))


def _cpu_list(text: str) -> tuple[int, ...]:
    cpus: set[int] = set()
    for item in text.split(","):
        low, _, high = item.strip().partition("-")
        try:
            first, last = int(low), int(high or low)
        except ValueError:
            raise ValueError(
                f"{item.strip()!r} is not a CPU number or range (like 3 or 0-3)"
            ) from None
        if not 0 <= first <= last <= MAX_CPU:
            raise ValueError(f"{item.strip()!r} is not a range of CPUs 0-{MAX_CPU}")
        cpus.update(range(first, last + 1))
    return tuple(sorted(cpus))


def spread(slots: int, cpus: Sequence[int]) -> CpuSets:
    """`auto`: slot k gets every `slots`-th of `cpus` from the k-th, or, with more slots than
    CPUs, the (k mod len(cpus))-th alone."""
    ordered = sorted(cpus)
    if slots >= len(ordered):
        return tuple((ordered[k % len(ordered)],) for k in range(slots))
    return tuple(tuple(ordered[k::slots]) for k in range(slots))


def resolve_cpu_sets(setting: str, slots: int, allowed: Sequence[int]) -> CpuSets:
    """Each slot's CPUs under `setting` (() for none), `allowed` being what the server may use
    (`auto` spreads over it); ValueError for a setting that cannot be read."""
    named = parse_cpu_sets(setting)
    if named is None:
        return spread(slots, allowed)
    return tuple(named[k % len(named)] for k in range(slots)) if named else ()


def outside(sets: CpuSets, allowed: Sequence[int]) -> str | None:
    """Why `sets` cannot be used by a process that may use `allowed`, if they cannot."""
    beyond = sorted({cpu for cpus in sets for cpu in cpus} - set(allowed))
    if not beyond:
        return None
    return (
        f"slot_cpus names CPU {describe_cpu_sets((tuple(beyond),))}, which this server may not use "
        f"(it may use {describe_cpu_sets((tuple(sorted(allowed)),))})"
    )


def describe_cpu_sets(sets: CpuSets) -> str:
    """The setting that names `sets` (`none` for none): `0-3;4-7`."""
    if not sets:
        return NONE
    return ";".join(",".join(_ranges(cpus)) for cpus in sets)


def _ranges(cpus: tuple[int, ...]) -> list[str]:
    out: list[str] = []
    start = prev = cpus[0]
    for cpu in (*cpus[1:], None):
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return out
