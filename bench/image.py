"""The container image: its size, and how long a container takes from `podman run` to serving.

Builds (or reuses) the image the image tests use (tests/container.py: the CI languages, unless
`--languages`), then starts it `--starts` times with the documented privileges and reports, per
start, the seconds until /v1/ping answers and until /health says the jail is ready; beside
them, in the same run, the same server started bare on this machine (`sandlot serve`), so the
container's own cost shows as a ratio.

    .venv/bin/python bench/image.py [--starts 5] [--languages python,cpp,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests import container  # noqa: E402
from tests.conftest import Server  # noqa: E402


def until_ready(url: str, started: float, timeout: float = 120) -> tuple[float, float]:
    """Seconds from `started` to the first /v1/ping answer and to /health's 200."""
    ping = None
    deadline = started + timeout
    while time.monotonic() < deadline:
        try:
            if ping is None and httpx.get(url + "/v1/ping", timeout=2).status_code == 200:
                ping = time.monotonic() - started
            if ping is not None and httpx.get(url + "/health", timeout=2).status_code == 200:
                return ping, time.monotonic() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} was not ready within {timeout} s")


def container_start(image: str) -> tuple[float, float]:
    box = container.Container(image, container.documented_run_flags())
    try:
        return until_ready(box.url, box.started)
    finally:
        box.remove()


def bare_start() -> tuple[float, float]:
    started = time.monotonic()
    srv = Server("--slots", "2")
    try:
        return until_ready(srv.url, started)
    finally:
        srv.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--languages", default=",".join(container.CI_LANGUAGES))
    args = parser.parse_args()
    image, built = container.ensure_image(tuple(args.languages.split(",")))
    size = int(container.podman("image", "inspect", "-f", "{{.Size}}", image).stdout)
    rows = {"container": [], "bare": []}
    for _ in range(args.starts):  # alternated, so both see the same machine load
        rows["container"].append(container_start(image))
        rows["bare"].append(bare_start())
    load = os.getloadavg()[0]
    result = {
        "image": image,
        "languages": args.languages,
        "size_bytes": size,
        "build_seconds": built,
        "load_average": round(load, 1),
        **{
            f"{kind}_{what}_s": round(statistics.median(r[i] for r in runs), 2)
            for kind, runs in rows.items()
            for i, what in enumerate(("ping", "health"))
        },
    }
    result["container_over_bare"] = round(result["container_health_s"] / result["bare_health_s"], 2)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
