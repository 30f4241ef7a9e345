"""The HTTP API fuzzed against its own OpenAPI schema (schemathesis), on a real server on
127.0.0.1: no request, valid or not, may get a 5xx. Bounded: a fixed number of examples per
operation, and the server's own limits kept small so that every generated run is short.

Schemathesis sends JSON, so the inputs it cannot send are added by hand: NaN and ±Infinity,
numbers too big for any type, 5000-deep nesting, huge keys and strings.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from sandlot.api import create_app
from sandlot.config import Config
from sandlot.service import Service
from tests.conftest import Server, running_server

pytestmark = [pytest.mark.root, pytest.mark.slow]

EXAMPLES = 25  # per operation and generation mode (valid and invalid data)
# Small maxima keep every generated run short; the schema states them, so generated valid
# requests stay within them. No coder_roots: /code is off, the fuzzer never starts Aider.
LIMITS = {"run_timeout": 3.0, "max_run_timeout": 3.0, "max_compile_timeout": 10.0,
          "memory_mb": 512, "max_memory_mb": 512,
          "max_test_cases": 8, "max_batch_items": 4, "max_batch_cases": 8, "queue_size": 64,
          "coder_roots": ""}  # fmt: skip


def served_schema() -> dict:
    """The schema a server with LIMITS serves, made in this process (schemathesis's lazy
    loader, which would read it from the fixture's server, does not run on pytest 9)."""
    return create_app(Service(Config.load(**LIMITS))).openapi()


schema = schemathesis.openapi.from_dict(served_schema())
schema.config.generation.update(max_examples=EXAMPLES)


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[Server]:
    env = {f"SANDLOT_{k.upper()}": str(v) for k, v in LIMITS.items()}
    with running_server("--slots", "2", env=env) as srv:
        assert httpx.get(srv.url + "/openapi.json").json() == served_schema()
        yield srv


VALID: Counter[bool] = Counter()  # schema-valid requests outside /code: accepted or not


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_fuzz_no_request_gets_a_server_error(case, fuzz_server: Server) -> None:
    r = case.call_and_validate(base_url=fuzz_server.url, checks=[not_a_server_error], timeout=60)
    assert fuzz_server.alive()
    if case.meta and case.meta.generation.mode.value == "positive" and case.path != "/code":
        VALID[r.status_code < 400 or r.status_code == 404] += 1  # 404: a name that is not here


def test_fuzz_the_schema_says_what_the_server_accepts() -> None:
    """Requests the fuzzer made valid by the schema were mostly served (/code is off here)."""
    if not VALID:
        pytest.skip("runs after test_fuzz_no_request_gets_a_server_error")
    assert VALID[True] >= 0.7 * sum(VALID.values()), VALID


DEEP = 5000
HOSTILE = {  # what JSON-only generators never send
    "nan": "NaN",
    "infinity": "-Infinity",
    "huge int": "1" * 5000,
    "huge float": "1e400",
    "deep list": "[" * DEEP + "]" * DEEP,
    "deep object": '{"a":' * DEEP + "1" + "}" * DEEP,
    "900-deep list": "[" * 900 + "]" * 900,
    "long key": json.dumps({"k" * 100_000: 1}),
}


def post_routes(client: httpx.Client) -> list[str]:
    paths = client.get("/openapi.json").json()["paths"]
    return [p for p, item in paths.items() if "post" in item]


def test_fuzz_hostile_json_is_a_4xx_everywhere(fuzz_server: Server) -> None:
    """Each hostile value as the whole body and as the value of each top-level field."""
    with httpx.Client(base_url=fuzz_server.url, timeout=60) as c:
        spec = c.get("/openapi.json").json()
        for route in post_routes(c):
            body = spec["paths"][route]["post"].get("requestBody")
            fields = []
            if body is not None:
                ref = body["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
                fields = list(spec["components"]["schemas"][ref].get("properties", {}))
            for name, value in HOSTILE.items():
                raws = [value] + ['{"%s": %s}' % (f, value) for f in fields]  # noqa: UP031
                for raw in raws:
                    r = c.post(route, content=raw, headers={"content-type": "application/json"})
                    assert r.status_code < 500, f"{route} with {name}: {r.status_code} {r.text}"
                    assert "detail" in r.json() or r.status_code == 200, (route, name, r.text)
        assert c.get("/health").json()["status"] == "ok"
    assert fuzz_server.alive()
