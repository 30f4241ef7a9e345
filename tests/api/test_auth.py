"""API keys over real HTTP: without, with a wrong and with a right key, in both headers; and the
tenants they name: a session is its key's alone."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from sandlot.client import Client
from sandlot.errors import ServerError
from tests.api.test_logs import access
from tests.conftest import Server, running_server, serve_fails

pytestmark = pytest.mark.root

KEY = "k-" + "a1" * 16
FILE_KEY = "f-" + "b2" * 16
RUN = {"code": "print(1)", "language": "python"}
TENANT_A = {"Authorization": f"Bearer {KEY}"}
TENANT_B = {"X-Auth-Token": FILE_KEY}  # another key (of the file), in the other header


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    keys = tmp_path_factory.mktemp("keys") / "keys"
    keys.write_text(f"# the team's key\n{FILE_KEY}  # since May\n\n")
    env = {"SANDLOT_API_KEYS": f"{KEY}, other-key-0123456789", "SANDLOT_API_KEYS_FILE": str(keys)}
    with running_server("--slots", "1", env=env) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(keyed: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=keyed.url, timeout=60) as c:
        yield c


def test_a_401_is_logged_under_its_route_and_path(api: httpx.Client, keyed: Server) -> None:
    """Refused before routing, it is still logged (and counted) under the route it was for."""
    r = api.post("/sessions/abc123/execute", json={"code": "1"},
                 headers={"x-request-id": "no-key-1"})  # fmt: skip
    assert r.status_code == 401
    line = access(keyed, "no-key-1")
    assert line["endpoint"] == "/sessions/{session_id}/execute"
    assert line["path"] == "/sessions/abc123/execute"


def test_a_request_without_a_key_is_a_401_that_says_how(api: httpx.Client) -> None:
    r = api.post("/run_code", json=RUN)
    assert r.status_code == 401
    assert "Authorization: Bearer KEY" in r.json()["detail"]
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert api.get("/languages").status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer wrong-key-0123456789abcdef"},
        {"Authorization": f"Bearer {KEY[:-1]}"},  # a key short of one character
        {"Authorization": f"Bearer {KEY}x"},
        {"Authorization": f"Basic {KEY}"},  # the right key under another scheme
        {"X-Auth-Token": KEY.upper()},
        {"Authorization": "Bearer " + "x" * 6000},
        {"Authorization": "Bearer"},
    ],
    ids=["wrong", "prefix", "suffix", "basic", "case", "huge", "empty"],
)
def test_a_wrong_key_is_a_401(api: httpx.Client, headers: dict[str, str]) -> None:
    r = api.post("/run_code", json=RUN, headers=headers)
    assert r.status_code == 401, r.text
    assert "key" in r.json()["detail"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": f"Bearer {KEY}"},
        {"authorization": f"bearer {KEY}"},
        {"X-Auth-Token": KEY},  # Judge0's header
        {"Authorization": f"Bearer {FILE_KEY}"},  # from api_keys_file, comment stripped
    ],
    ids=["bearer", "lowercase", "x-auth-token", "file"],
)
def test_a_right_key_runs(api: httpx.Client, headers: dict[str, str]) -> None:
    r = api.post("/run_code", json=RUN, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["stdout"] == "1\n"


def test_probes_stay_open_and_metrics_is_closed(api: httpx.Client) -> None:
    assert api.get("/v1/ping").status_code == 200
    assert api.get("/health").status_code == 200
    assert api.get("/metrics").status_code == 401
    assert api.get("/metrics", headers={"X-Auth-Token": KEY}).status_code == 200
    # An open path is open to reads only: nothing that runs code gets through on it.
    assert api.post("/health", json=RUN).status_code == 401


def test_the_client_sends_its_key(keyed: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    with Client(keyed.url, api_key=KEY, retries=0) as c:
        assert c.run_code("print(2)", "python").stdout == "2\n"
    monkeypatch.setenv("SANDLOT_API_KEY", FILE_KEY)
    with Client(keyed.url, retries=0) as c:
        assert c.run_code("print(3)", "python").stdout == "3\n"
    monkeypatch.setenv("SANDLOT_API_KEY", "not-the-key-0123456789")
    with Client(keyed.url, retries=0) as c, pytest.raises(ServerError) as caught:
        c.run_code("print(4)", "python")
    assert caught.value.status_code == 401


def ids(api: httpx.Client, headers: dict[str, str]) -> set[str]:
    r = api.get("/sessions", headers=headers)
    assert r.status_code == 200, r.text
    return {s["id"] for s in r.json()}


def test_attack_another_keys_session_is_not_found(api: httpx.Client, keyed: Server) -> None:
    """Tenant B knows tenant A's session id (a leaked log, a shared trajectory): every route
    of the session answers B as for an id that never existed, and nothing of A's changes."""
    made = api.post("/sessions", json={"language": "python"}, headers=TENANT_A)
    assert made.status_code == 200, made.text
    sid = made.json()["id"]
    unknown = {"detail": f"no session {sid!r}: POST /sessions creates one"}
    base = f"/sessions/{sid}"
    try:
        a_run = api.post(f"{base}/execute", json={"code": "secret = 41"}, headers=TENANT_A)
        assert a_run.status_code == 200 and a_run.json()["status"] == "ok", a_run.text
        assert api.put(f"{base}/files/note.txt", content=b"A's", headers=TENANT_A).is_success
        attempts = [
            ("GET", base, {}),
            ("POST", f"{base}/execute", {"json": {"code": "print(secret)"}}),
            ("POST", f"{base}/execute", {"json": {"code": "print(secret)", "stream": True}}),
            ("GET", f"{base}/files/note.txt", {}),
            ("PUT", f"{base}/files/note.txt", {"content": b"B's"}),
            ("POST", f"{base}/interrupt", {}),
            ("POST", f"{base}/restart", {}),
            ("DELETE", base, {}),
            ("POST", "/run_code", {"json": {**RUN, "code": "print(secret)", "session_id": sid}}),
        ]
        for method, path, fields in attempts:
            r = api.request(method, path, headers=TENANT_B, **fields)
            assert (r.status_code, r.json()) == (404, unknown), (method, path, r.text)
        assert sid not in ids(api, TENANT_B)
        # The control: A still reaches and lists it, with its state and file as A left them.
        assert sid in ids(api, TENANT_A)
        again = api.post(f"{base}/execute", json={"code": "print(secret + 1)"}, headers=TENANT_A)
        assert again.json()["stdout"] == "42\n", again.text
        assert api.get(f"{base}/files/note.txt", headers=TENANT_A).content == b"A's"
        in_run = api.post("/run_code", json={**RUN, "code": "print(secret)", "session_id": sid},
                          headers=TENANT_A)  # fmt: skip
        assert in_run.json()["run_result"]["stdout"] == "41\n", in_run.text
    finally:
        assert api.delete(base, headers=TENANT_A).status_code == 200
    # Ended: A is told why; B still learns nothing.
    assert api.get(base, headers=TENANT_A).status_code == 410
    assert (api.get(base, headers=TENANT_B).json()) == unknown


def test_a_keys_sessions_work_through_the_client(api: httpx.Client, keyed: Server) -> None:
    with Client(keyed.url, api_key=KEY, retries=0) as a, a.session("bash") as s:
        assert s.run("echo $((6 * 7))").stdout == "42\n"
        assert s.id in ids(api, TENANT_A) and s.id not in ids(api, TENANT_B)
        s.upload("x.txt", "mine")
        assert s.download("x.txt") == b"mine"


def test_the_access_log_names_the_tenant_never_the_key(api: httpx.Client, keyed: Server) -> None:
    tenant_a = api.post("/run_code", json=RUN, headers={**TENANT_A, "X-Request-ID": "tenant-a"})
    api.post("/run_code", json=RUN, headers={**TENANT_B, "X-Request-ID": "tenant-b"})
    api.post("/run_code", json=RUN, headers={"X-Request-ID": "no-tenant"})
    assert tenant_a.status_code == 200
    a, b, none = (access(keyed, rid)["tenant"] for rid in ("tenant-a", "tenant-b", "no-tenant"))
    assert a.startswith("key-") and b.startswith("key-") and a != b and none is None
    keyed.log.seek(0)
    text = keyed.log.read().decode()
    assert KEY not in text and FILE_KEY not in text


def test_metrics_open_serves_metrics_without_a_key() -> None:
    env = {"SANDLOT_API_KEYS": KEY, "SANDLOT_METRICS_OPEN": "true"}
    with running_server("--slots", "1", env=env) as srv, httpx.Client(base_url=srv.url) as c:
        assert c.get("/metrics").status_code == 200
        assert c.post("/run_code", json=RUN).status_code == 401


def test_an_open_address_without_keys_is_refused() -> None:
    out = serve_fails("--host", "0.0.0.0")
    assert "refusing to listen on 0.0.0.0 with no API keys" in out and "--insecure" in out


@pytest.mark.parametrize("key", ["short", "has space 0123456789", "caf\u00e9-0123456789abcdef"])
def test_an_unusable_key_is_refused_at_start(key: str) -> None:
    out = serve_fails("--host", "127.0.0.1", env={"SANDLOT_API_KEYS": key})
    assert "API key 1 is not usable" in out
    assert key not in out  # the message never echoes a key
