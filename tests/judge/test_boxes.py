"""The box every shipped row's judge job becomes is the same, byte for byte, from one change of
the executor to the next: its compile step, and its run step with the driver, guard files and
argv a seal adds (the seal's own secret, fresh per run, aside).

`boxes.json` holds, per shipped dataset, one sha256 over every row's boxes, the reference
solution assembled as `/submit` assembles it (or a stand-in where a row has none). A change
that means to change what runs (a new guard, an assembly fix) regenerates it, and its commit
says why:

    .venv/bin/python tests/judge/test_boxes.py > tests/judge/boxes.json
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sandlot.config import Config
from sandlot.executor import CodeRequest, Executor, Run, Seal, guards
from sandlot.executor.seal import SEAL_FILE
from sandlot.jail import RunSpec
from sandlot.judge import Datasets
from sandlot.judge.engine import Judge
from sandlot.judge.families import reference
from sandlot.judge.plans import JudgeConfig, Program
from sandlot.languages import LANGUAGES, Registry

GOLDEN = Path(__file__).parent / "boxes.json"
STAND_IN = "```python\nprint(1)\n```"


def spec_digest(spec: RunSpec) -> str:
    files = {name: hashlib.sha256(b"SECRET" if name == SEAL_FILE else data).hexdigest()
             for name, data in sorted(spec.files.items())}  # fmt: skip
    return json.dumps([list(spec.argv), sorted(spec.env.items()), repr(spec.ro_binds), spec.warm,
                       files, hashlib.sha256(spec.stdin).hexdigest(), list(spec.fetch),
                       repr(spec.limits), spec.any_cpu], sort_keys=True)  # fmt: skip


def boxes(executor: Executor, req: CodeRequest, run: Run) -> list[str]:
    """The digests of a request's compile step (over its sources) and run step (over them and
    a stand-in for each of the build's artifacts)."""
    row = executor.check(req)
    sources = guards.sources(row, req.code, req.files, req.harness is not None)
    files, out = sources.files, []
    if row.compile is not None:
        step = executor._compile_step(row, files, req, row.compile, row.artifacts)
        out.append(spec_digest(step))
        files = {**files, **{a: f"artifact {a}".encode() for a in row.artifacts}}
    out.append(spec_digest(executor._run_step(row, sources, files, req, run)[0]))
    return out


def digests() -> dict[str, str]:
    registry = Registry(LANGUAGES, "/opt/sandlot")
    executor = Executor(Config.load(), None, registry)  # type: ignore[arg-type]  # never runs
    judge = Judge(Datasets(registry), executor=lambda: executor)
    out = {}
    for name in sorted(judge.datasets.specs):
        spec = judge.datasets.spec(name)
        # a dataset of any language (stdin problems) is judged here in Python
        stdin = not spec.language and spec.family.name == "stdio"
        cfg = JudgeConfig(language="python" if stdin else None)
        h = hashlib.sha256()
        for row in judge.datasets.get(name).rows:
            job = judge.assemble(spec, row, reference(spec.family, row) or STAND_IN, cfg).job
            if job is None or not _known(registry, job.language):
                h.update(b"none" if job is None else b"unknown language")
                continue
            parts: list[Any]
            if isinstance(job, Program):
                # as the judge seals it by default: a Python answer whose tests only call it split
                seal = (Seal(job.tests_at, False, job.entry, job.unittest, job.split)
                        if job.seal else None)  # fmt: skip
                req = judge._request(job.language, job.code, cfg, job, files=job.files,
                                     fetch=job.fetch, seal=seal)  # fmt: skip
                parts = boxes(executor, req, Run(req.stdin, fetch=req.fetch))
            else:
                req = judge._request(job.language, job.code, cfg, job, files=job.files)
                stdin = job.cases[0].stdin.encode() if job.cases else b""
                parts = boxes(executor, req, Run(stdin))
            h.update(json.dumps(parts).encode())
        out[name] = h.hexdigest()
    return out


def _known(registry: Registry, language: str) -> bool:
    try:
        registry.get(language)
    except Exception:
        return False
    return True


@pytest.fixture
def fixed_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge's guards name their variables afresh per program: fixed here."""
    from sandlot.judge import guard_texts

    monkeypatch.setattr(guard_texts.secrets, "token_hex", lambda n=16: "5" * (2 * n))


@pytest.mark.usefixtures("fixed_names")
def test_every_shipped_rows_boxes_are_unchanged() -> None:
    want = json.loads(GOLDEN.read_text())
    got = digests()
    assert sorted(got) == sorted(want), "a dataset came or went: regenerate boxes.json"
    changed = [name for name in want if got[name] != want[name]]
    assert changed == [], f"the boxes of {len(changed)} datasets changed: {changed[:8]}"


if __name__ == "__main__":
    with pytest.MonkeyPatch.context() as mp:
        from sandlot.judge import guard_texts

        mp.setattr(guard_texts.secrets, "token_hex", lambda n=16: "5" * (2 * n))
        json.dump(digests(), sys.stdout, indent=0, sort_keys=True)
        sys.stdout.write("\n")
