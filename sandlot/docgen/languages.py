"""The languages table of docs/languages.md, rendered from the registry and measured timings.

    python -m sandlot.docgen.languages [--timings bench/languages.json] [--page docs/languages.md]

rewrites the page's `languages` block; `bench/languages.py` calls the same function after
measuring. Everything in the table comes from the rows (names, aliases, commands), the
toolchains themselves (versions, probed on this machine) and the benchmark's JSON (times), so
the page cannot drift from what the server does.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from sandlot.docgen import DOCS, rewrite
from sandlot.languages import LANGUAGES, Availability, Language, Registry

BLOCK = "languages"
RUNTIME = "/opt/sandlot"
COMMAND_WIDTH = 70
# JVM and runtime tuning and start-up flags: the same for every JVM (or Node) row and noise in a
# table (the notes under the table and the page's warm-starts section say what they are).
JAR_DIR = re.compile(r"(?<![\w.-])(?:\{runtime\})?/[\w./-]+/(?=[\w.-]+\.jar)")
NOISE = re.compile(
    r"^(-XX:|-Xss|-Xshare|-Xlog:|-J-|--max-old-space-size|--gc-params|--no-rehash-snapshot)"
)


def command(row: Language, argv: tuple[str, ...] | None) -> str:
    """One line for a compile or run argv: the command a shell script ends in, short paths."""
    if not argv:
        return "—"
    words = list(argv)
    if words[:2] == ["/bin/sh", "-c"]:
        # The script prepares (finds a class name, copies a cache), then execs the real command.
        script = words[2]
        words = ["…", *script.rsplit("exec ", 1)[-1].split()] if "exec " in script else [script]
    words = [w for w in words if not NOISE.match(w)]
    first = 1 if words[0] == "…" else 0
    if words[first].startswith(("/usr/bin/", "/bin/", "{runtime}/")):
        words[first] = words[first].rsplit("/", 1)[-1]  # the executable: its name says enough
    text = " ".join(words).replace("{runtime}/node/node_modules/", "").replace("{src}", row.source)
    text = JAR_DIR.sub("", text)  # jars by name: where Debian keeps them is no news
    if len(text) > COMMAND_WIDTH:
        text = text[: COMMAND_WIDTH - 1] + "…"
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def version_cell(status: Availability) -> str:
    """The version number the toolchain reports (its first line, as probed on this machine)."""
    if not status.available:
        return "needs a GPU" if "GPU" in (status.reason or "") else "not installed"
    found = re.search(r"\d+\.\d+(?:\.\d+)*", status.version or "")
    return found.group(0) if found else (status.version or "—")


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.0f}"


def render(
    rows: tuple[Language, ...], status: dict[str, Availability], timings: dict[str, Any]
) -> str:
    """The markdown between the markers: one line per row, then the notes."""
    measured = timings.get("languages", {})
    lines = [
        "| language | aliases | toolchain | version | compile | run "
        "| hello world, ms: cold / cached |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        t = measured.get(row.name, {})
        cold, cached = t.get("cold_median_s"), t.get("cached_median_s")
        times = ms(cold) if row.compile is None else f"{ms(cold)} / {ms(cached)}"
        if not t:
            times = "—"
        aliases = ", ".join(f"`{a}`" for a in row.aliases) or "—"
        lines.append(
            f"| `{row.name}` | {aliases} | {row.summary or '—'} "
            f"| {version_cell(status[row.name])} | "
            f"{command(row, row.compile)} | {command(row, row.run)} | {times} |"
        )
    when = timings.get("measured_at", "never")
    machine = timings.get("machine", "")
    lines += [
        "",
        f"Times measured by `bench/languages.py` ({when}{', ' + machine if machine else ''}): "
        "median wall time of one request in the jail, hello world, through the in-process "
        "engine (no HTTP). *cold*: the compile cache empty, so compile + run; *cached*: the same "
        "source again, the compile cache serves the build and only the run is paid. "
        "Commands are shown without the heap and JVM flags every run gets from its memory "
        "limit (`-XX:MaxRAM={memory_mb}m` and friends, `--max-old-space-size`, mono's "
        "`max-heap-size`). Rows marked *not installed* or *needs a GPU* answer every request "
        "with `SandboxError` and a message saying why and how an operator adds the toolchain.",
    ]
    return "\n".join(lines)


def update(page: Path, timings: dict[str, Any], runtime: str = RUNTIME) -> None:
    registry = Registry(LANGUAGES, runtime)
    rewrite(page, BLOCK, render(LANGUAGES, registry.probe(), timings))


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timings", type=Path, default=root / "bench" / "languages.json")
    parser.add_argument("--page", type=Path, default=DOCS / "languages.md")
    parser.add_argument("--runtime-dir", default=RUNTIME)
    args = parser.parse_args()
    timings = json.loads(args.timings.read_text()) if args.timings.exists() else {}
    update(args.page, timings, args.runtime_dir)


if __name__ == "__main__":
    main()
