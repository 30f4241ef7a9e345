"""SandboxFusion's request contract where nothing runs: unknown routes, the numeric fields of
every route and what is not a number, checked on the app in this process over an in-process
transport (no server, no jail: the fast tier). tests/api/test_api.py runs code over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from sandlot.api.app import create_app
from sandlot.config import Config
from sandlot.service import Service


@pytest.fixture(scope="module")
def app_client() -> Iterator[httpx.Client]:
    """The app of a Service that never starts: the app's start-up (the lifespan) is not run,
    so there is no jail, and a route that would run code says so (503)."""
    service = Service(Config.load())
    service.problem = "the fast tier runs no code"
    # TestClient is an httpx.Client over the ASGI app in this process; an exception in the app
    # raises here instead of becoming a 500.
    with TestClient(create_app(service), base_url=f"http://{service.config.host}") as c:
        yield c


def test_a_route_that_runs_code_says_why_it_cannot(app_client):
    r = app_client.post("/run_code", json={"code": "print(1)", "language": "python"})
    assert r.status_code == 503 and "the fast tier runs no code" in r.json()["detail"]


def test_unknown_route_and_method(app_client):
    assert app_client.get("/nope").status_code == 404
    assert app_client.get("/run_code").status_code == 405


# -- numbers that are not numbers ---------------------------------------------------------------

CONFIG = ["config.compile_timeout", "config.run_timeout", "config.memory_limit_MB"]
NUMERIC = {  # route -> (a body it accepts, every numeric field in it, as a dotted path)
    "/run_code": ({"code": "print(1)", "language": "python"},
                  ["compile_timeout", "run_timeout", "timeout", "memory_limit_MB"]),
    "/submit": ({"dataset": "humaneval", "id": "HumanEval/0", "completion": "x"},
                ["id", "problem_id", *CONFIG]),
    "/list_ids": ({"dataset": "humaneval"}, ["offset", "limit", *CONFIG]),
    "/get_prompts": ({"dataset": "humaneval"}, ["offset", "limit", *CONFIG]),
    "/get_prompt_by_id": ({"dataset": "humaneval", "id": "HumanEval/0"}, ["id", *CONFIG]),
    "/get_metrics": ({"dataset": "humaneval"}, CONFIG),
    "/get_metrics_function": ({"dataset": "humaneval"}, CONFIG),
    "/evaluate": ({"dataset": "humaneval", "samples": []},
                  ["k.0", "samples.0.id", "samples.0.task_id", "samples.0.problem_id", *CONFIG]),
    "/run_batch": ({"items": [{"code": "print(1)", "asserts": ["pass"]}]},
                   ["items.0.id", "items.0.compile_timeout", "items.0.run_timeout",
                    "items.0.memory_limit_MB"]),
    "/repo_tests": ({"cmd": "true"}, ["timeout"]),
    "/repo/grade": ({"tarball": "", "base": "HEAD"}, ["timeout"]),
    "/repo/test": ({"tarball": "", "base": "HEAD"}, ["timeout"]),
    "/code": ({"repo": "/nonexistent", "message": "x"},
              ["max_attempts", "timeout", "test_timeout", "llm_grace"]),
    "/run_jupyter": ({"cells": ["1"]}, ["cell_timeout", "total_timeout", "memory_limit_MB"]),
    "/sessions": ({"language": "python"},
                  ["idle_timeout", "lifetime", "memory_limit_MB", "pause_after"]),
    "/sessions/{session_id}/fork": ({}, ["count", "idle_timeout", "lifetime", "memory_limit_MB",
                                         "pause_after"]),
    "/sessions/{session_id}/execute": ({"code": "1"}, ["timeout"]),
}  # fmt: skip
CASES = [(route, path) for route, (_, paths) in NUMERIC.items() for path in paths]


def numeric_paths(schema: dict, node: dict, prefix: str = "") -> set[str]:
    """Dotted paths of every number or integer a request body schema admits."""
    if "$ref" in node:
        return numeric_paths(schema, schema["components"]["schemas"][node["$ref"].split("/")[-1]],
                             prefix)  # fmt: skip
    found: set[str] = set()
    for branch in node.get("anyOf", [node]):
        kind = branch.get("type")
        if kind in ("number", "integer"):
            found.add(prefix.rstrip("."))
        elif kind == "array" and "items" in branch:
            found |= numeric_paths(schema, branch["items"], prefix + "0.")
        elif "$ref" in branch:
            found |= numeric_paths(schema, branch, prefix)
        for name, sub in branch.get("properties", {}).items():
            found |= numeric_paths(schema, sub, prefix + name + ".")
    return found


def test_the_table_names_every_numeric_request_field(app_client):
    schema = app_client.get("/openapi.json").json()
    for route, item in schema["paths"].items():
        body = item.get("post", {}).get("requestBody")
        if body is None:
            continue
        ref = body["content"]["application/json"]["schema"]
        expected = set(NUMERIC.get(route, ({}, []))[1])
        assert numeric_paths(schema, ref) == expected, route


def put(body: dict, path: str, value: object) -> None:
    """body at dotted `path` = value, making what is missing on the way ("k.0": a list)."""
    keys = path.split(".")
    where: Any = body
    for key, below in pairwise(keys):
        fresh: Any = [] if below.isdigit() else {}
        if key.isdigit():
            while len(where) <= int(key):
                where.append(fresh)
            where = where[int(key)]
        else:
            where = where.setdefault(key, fresh)
    if keys[-1].isdigit():
        where.append(value)
    else:
        where[keys[-1]] = value


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("route,path", CASES)
def test_attack_non_finite_numbers_are_a_4xx(app_client, route, path, value):
    body = json.loads(json.dumps(NUMERIC[route][0]))
    put(body, path, "__X__")
    raw = json.dumps(body).replace('"__X__"', value)  # what Python's json.dumps sends for NaN
    r = app_client.post(route, content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert path in r.json()["detail"]
