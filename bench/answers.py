"""How many of a dataset's shipped answers the judge accepts, through `POST /submit`.

MultiPL-E's rows carry no reference solution but a GPT answer each (`gpt_solution`), right or
wrong; the count of those accepted is how a change to a language's assembly (a prelude, a split
build) shows on real answers: a count that drops is programs the change broke. Prints, per
dataset, the accepted count and the mix of the others' reasons (their first line), so that a
change's rows can be told apart (compile errors against failing tests).

`--assembly sandboxfusion` runs the same answers as SandboxFusion assembles them, through `POST
/run_code`: its prelude, the answer's first code block (sandlot's extraction, strict as
SandboxFusion's), a newline and the row's tests, one file, accepted when it exits 0. For the
languages of `SANDBOXFUSION` (its run language and prelude, from its IMPORT_HELPER).

    .venv/bin/python bench/answers.py --datasets multiple_d,multiple_mbpp_d [--url URL]
    .venv/bin/python bench/answers.py --datasets multiple_d --assembly sandlot,sandboxfusion

Without `--url` it starts its own server (bench/engine.py's, `--slots` of them).
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import start_server, stop_server, wait_ping
from bench.judge import RUNTIME, Dataset, judge_all, samples
from sandlot.judge import Datasets
from sandlot.judge.extract import extract
from sandlot.judge.split.d import PRELUDE as D_PRELUDE
from sandlot.languages import LANGUAGES, Registry

SHOWN = 5  # reasons printed per dataset
# A dataset's language: the language SandboxFusion runs its programs as, and its prelude.
SANDBOXFUSION = {"D_ut": ("D_ut", D_PRELUDE)}


def reason(info: dict[str, Any]) -> str:
    """Why a program was not accepted, in a few words, from its exec_info (or /run_code answer)."""
    built = info.get("compile_result") or {}
    if built and (built.get("status") != "Finished" or built.get("return_code")):
        return "compile error"
    run = info.get("run_result") or {}
    if run.get("status") == "Finished":
        return f"exit {run.get('return_code')}"
    return str(run.get("status") or info.get("status") or "not accepted")


def judged(client: httpx.Client, name: str, items: list[dict], slots: int) -> list[str | None]:
    """Each answer through /submit: None if accepted, else why not."""
    _, results = judge_all(client, Dataset(name), items, slots)
    out: list[str | None] = []
    for r in results:
        tests = r.get("tests") or [{}]
        info = tests[0].get("exec_info") or {}
        out.append(None if r.get("accepted") else reason(info) if info else r["extracted_type"])
    return out


def as_sandboxfusion(
    client: httpx.Client, registry: Registry, name: str, items: list[dict], slots: int
) -> list[str | None]:
    """Each answer as SandboxFusion assembles it, through /run_code: None if it exits 0."""
    data = Datasets(registry)
    spec = data.spec(name)
    if spec.language not in SANDBOXFUSION:
        sys.exit(f"{name}: --assembly sandboxfusion knows {', '.join(SANDBOXFUSION)} programs only")
    language, prelude = SANDBOXFUSION[spec.language]
    tests = {str(row[spec.id_field]): row["tests"] for row in data.get(spec.name).rows}

    def one(item: dict) -> str | None:
        code = extract(item["completion"], spec.language, strict=True).code
        body = {"language": language, "code": f"{prelude}{code}\n{tests[str(item['id'])]}"}
        r = client.post("/run_code", json=body)
        r.raise_for_status()
        answer = r.json()
        run = answer.get("run_result") or {}
        ok = answer.get("status") == "Success" and run.get("return_code") == 0
        return None if ok else reason(answer)

    with ThreadPoolExecutor(slots) as pool:
        return list(pool.map(one, items))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", required=True, help="comma-separated, rows with gpt_solution")
    ap.add_argument("--field", default="gpt_solution", help="the row field holding the answer")
    ap.add_argument("--rows", type=int, default=None, help="the first ROWS of each dataset")
    ap.add_argument("--slots", type=int, default=2, help="in flight (and the server's slots)")
    ap.add_argument("--url", help="an already running server")
    ap.add_argument("--assembly", default="sandlot",
                    help="sandlot, sandboxfusion, or both: sandlot,sandboxfusion")  # fmt: skip
    args = ap.parse_args()
    if unknown := set(args.assembly.split(",")) - {"sandlot", "sandboxfusion"}:
        ap.error(f"unknown assembly {', '.join(sorted(unknown))}: sandlot or sandboxfusion")
    registry = Registry(LANGUAGES, RUNTIME)
    registry.probe()
    proc = None
    if args.url:
        url = args.url
    else:
        log = Path(tempfile.gettempdir()) / "bench-answers.log"
        proc, url = start_server(args.slots, log)
        wait_ping(url, proc, log)
    rows = []
    try:
        with httpx.Client(base_url=url, timeout=600) as client:
            for assembly in args.assembly.split(","):
                for name in args.datasets.split(","):
                    items = samples(registry, Dataset(name, args.field))[: args.rows]
                    start = time.perf_counter()
                    if assembly == "sandboxfusion":
                        whys = as_sandboxfusion(client, registry, name, items, args.slots)
                    else:
                        whys = judged(client, name, items, args.slots)
                    seconds = time.perf_counter() - start
                    others = collections.Counter(why for why in whys if why is not None)
                    mix = ", ".join(f"{why} {n}" for why, n in others.most_common(SHOWN))
                    rows.append(f"| {name} | {assembly} | {whys.count(None)} of {len(whys)} "
                                f"| {mix} | {seconds:.0f} |")  # fmt: skip
                    print(rows[-1], flush=True)
    finally:
        if proc is not None:
            stop_server(proc)
    print("\n| dataset | assembly | accepted | the others | s |\n|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
