"""`bench/rl.py --overload X`: verl's reward requests arriving at X times what the server can do.

Each request is one stdin case of a shipped RL sample (`tests/rl_samples.py`), sent as verl's
`sandbox_fusion` reward code sends it: its payload, a read timeout of compile + run timeout +
10 s (30 s), three attempts that retry a 504 and nothing else, after 1 s and then 2 s. Every
case first sleeps `--case-seconds`, so that a run holds its slot that long without taking the
shared CPUs: capacity is then slots / case-seconds, whatever else the machine does. The bench
measures it closed-loop first, then sends requests open-loop (evenly spaced) at X times that for
`--duration` seconds, and waits for the last client.

Reported, per request: answered in the client's time (a reward verl can use, and whether it
was right), given up after 504s (verl scores -1, but knows at once), given up on a read timeout
(-1 after 30 s: the worst case), other errors; latency of the answered ones; goodput against
capacity; and from the server's access log the runs done for clients that had gone (status 499
with a run, or answered after the client's timeout) and how long the server took to be idle
after the last client was done (its drain).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from engine import server_health

TIMEOUT = 10  # verl's per-case compile and run timeout
READ_TIMEOUT = 2 * TIMEOUT + 10  # verl: compile + run timeout + API_TIMEOUT
DELAYS = (1, 2)  # verl's sleeps before its second and third attempt, after a 504


@dataclass
class Tally:
    sent: int = 0
    answered: int = 0
    right: int = 0
    gave_up_504: int = 0
    read_timeout: int = 0
    other: int = 0
    attempts_504: int = 0
    latencies: list[float] = field(default_factory=list)


def cases(samples: list[list[Any]], seconds: float) -> list[tuple[str, str, str]]:
    """(code, stdin, expected) of every case, each program first holding its slot `seconds`."""
    prelude = f"import time\ntime.sleep({seconds})\n"
    return [(prelude + c.code, c.stdin, c.expected) for sample in samples for c in sample]


async def verl_request(http: httpx.AsyncClient, url: str, case: tuple[str, str, str],
                       tally: Tally) -> None:  # fmt: skip
    code, stdin, expected = case
    payload = {"compile_timeout": TIMEOUT, "run_timeout": TIMEOUT, "code": code,
               "stdin": stdin, "memory_limit_MB": 1024, "language": "python", "files": {},
               "fetch_files": []}  # fmt: skip
    started = time.monotonic()
    for attempt in range(len(DELAYS) + 1):
        try:
            r = await http.post(f"{url}/run_code", json=payload, timeout=READ_TIMEOUT)
        except httpx.ReadTimeout:
            tally.read_timeout += 1
            return
        except httpx.HTTPError:
            tally.other += 1
            return
        if r.status_code == 504:
            tally.attempts_504 += 1
            if attempt < len(DELAYS):
                await asyncio.sleep(DELAYS[attempt])
                continue
            tally.gave_up_504 += 1
            return
        if r.status_code != 200:
            tally.other += 1
            return
        body = r.json()
        stdout = (body.get("run_result") or {}).get("stdout") or ""
        tally.answered += 1
        tally.right += body.get("status") == "Success" and (
            stdout.rstrip("\n") == expected.rstrip("\n")
        )
        tally.latencies.append(time.monotonic() - started)
        return


async def closed_loop(url: str, work: list[tuple[str, str, str]], fan_out: int) -> float:
    """Cases per second the server sustains with `fan_out` requests always in flight."""
    tally, queue = Tally(), list(work)
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=fan_out)) as http:

        async def worker() -> None:
            while queue:
                await verl_request(http, url, queue.pop(), tally)

        started = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(fan_out)))
        return tally.answered / (time.monotonic() - started)


async def open_loop(url: str, work: list[tuple[str, str, str]], rate: float,
                    duration: float) -> tuple[Tally, float, float]:  # fmt: skip
    """Requests every 1/rate s for `duration` s; the tally once every client is done, and the
    seconds from the first request to the last sent and to the last client done."""
    tally = Tally()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
    async with httpx.AsyncClient(limits=limits) as http:
        tasks = []
        started = time.monotonic()
        n = 0
        while (due := started + n / rate) < started + duration:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            tasks.append(asyncio.create_task(verl_request(http, url, work[n % len(work)], tally)))
            tally.sent += 1
            n += 1
        last_sent = time.monotonic() - started
        await asyncio.gather(*tasks)
    return tally, last_sent, time.monotonic() - started


def drain_seconds(url: str) -> float:
    started = time.monotonic()
    while True:
        health = server_health(url)
        if health.get("busy", 1) == 0 and health.get("queued", 1) == 0:
            return time.monotonic() - started
        time.sleep(0.1)


def wasted_runs(log: Path) -> dict[str, int]:
    """Runs the server did for clients that had gone, from its access log."""
    gone = late = 0
    for text in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if line.get("logger") != "sandlot.access" or line.get("endpoint") != "/run_code":
            continue
        if line.get("status") == 499 and line.get("runs"):
            gone += 1
        elif line.get("status") == 200 and float(line.get("duration_ms", 0)) > READ_TIMEOUT * 1e3:
            late += 1
    return {"ran_for_a_client_that_left": gone, "answered_after_the_client_timeout": late}


def run(url: str, log: Path, samples: list[list[Any]], slots: int, overload: float,
        case_seconds: float, duration: float) -> dict[str, Any]:  # fmt: skip
    work = cases(samples, case_seconds)
    capacity = asyncio.run(closed_loop(url, work[: 10 * slots], 2 * slots))
    print(f"capacity {capacity:.2f} cases/s (closed loop, {2 * slots} in flight)", flush=True)
    rate = overload * capacity
    tally, last_sent, done = asyncio.run(open_loop(url, work, rate, duration))
    drain = drain_seconds(url)
    lat = sorted(tally.latencies)
    out = {
        "slots": slots, "case_seconds": case_seconds, "capacity_per_s": round(capacity, 2),
        "offered_per_s": round(rate, 2), "duration_s": duration, "sent": tally.sent,
        "answered_in_time": tally.answered, "right": tally.right,
        "gave_up_after_504s": tally.gave_up_504, "read_timeouts": tally.read_timeout,
        "other_errors": tally.other, "504_answers": tally.attempts_504,
        "goodput_vs_capacity": round(tally.answered / done / capacity, 3),
        "latency_p50_s": round(statistics.median(lat), 2) if lat else None,
        "latency_p99_s": round(lat[int(0.99 * (len(lat) - 1))], 2) if lat else None,
        "last_client_s_after_last_send": round(done - last_sent, 1),
        "drain_s_after_last_client": round(drain, 1),
        **wasted_runs(log),
    }  # fmt: skip
    return out
