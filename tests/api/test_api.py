"""/run_code's SandboxFusion contract, the simple shape, test cases, and bad input, over HTTP."""

from __future__ import annotations

import base64

import httpx
import pytest

from sandlot.jail import placement

pytestmark = pytest.mark.root

CPP_SUM = "#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- SandboxFusion's request and response shapes ---------------------------------------------


def test_defaults_nulls_and_unknown_fields(run):
    out = run(
        "print(input())",
        "python",
        stdin="hi",
        compile_timeout=None,
        run_timeout=None,
        memory_limit_MB=-1,
        files=None,
        fetch_files=None,
        some_future_field={"x": 1},
    )
    assert out["status"] == "Success"
    assert out["run_result"]["stdout"] == "hi\n"


def test_client_style_body_with_every_field(run):
    # What the sandbox-fusion client sends for RunCodeRequest(code=..., language=...).
    body = {"compile_timeout": 10, "run_timeout": 10, "stdin": None, "files": {}, "fetch_files": []}
    out = run("print(1)", "python", **body)
    assert set(out) >= {"status", "message", "compile_result", "run_result", "executor_pod_name",
                        "files"}  # fmt: skip
    assert out["message"] == "" and out["files"] == {}
    assert out["compile_result"] is None
    rr = out["run_result"]
    assert set(rr) >= {"status", "execution_time", "return_code", "stdout", "stderr"}
    assert isinstance(rr["execution_time"], float)


def test_extra_fields_describe_the_run(run):
    rr = run("x = bytearray(50 << 20); print(len(x))", "python")["run_result"]
    assert rr["cpu_time"] > 0
    assert rr["memory_peak_bytes"] >= 50 << 20
    assert rr["limit"] is None and rr["signal"] is None
    assert rr["stdout_truncated"] is False and rr["stderr_truncated"] is False


def test_signal_is_a_negative_return_code(run):
    out = run("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "python")
    assert out["status"] == "Failed"
    assert out["run_result"]["status"] == "Finished"
    assert out["run_result"]["return_code"] == -11
    assert out["run_result"]["signal"] == 11


@pytest.mark.parametrize(
    ("code", "language", "fields", "words"),
    [
        ("while True: pass", "python", {"run_timeout": 1},
         "time limit: the program was stopped after 1."),
        ("x = bytearray(1 << 30)", "python", {"memory_limit_MB": 64},
         "memory limit: the program was killed at 6"),
        ("import sys\nwhile True: sys.stdout.write('x' * 65536)", "python", {},
         "output limit: its stdout passed 8 MiB, so the program was stopped"),
        ("raise SystemExit(3)", "python", {}, "the program exited with code 3"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "python", {},
         "the program was killed by signal 11 (SIGSEGV)"),
        ("int main( {", "cpp", {}, "the compile step failed with exit code 1"),
    ],
    ids=["time", "memory", "output", "exit", "signal", "compile"],
)  # fmt: skip
def test_a_failed_run_says_what_happened_in_message(run, code, language, fields, words):
    out = run(code, language, **fields)
    assert out["status"] == "Failed" and words in out["message"], out["message"]


def test_failing_test_cases_say_how_many_in_message(run):
    cases = [{"stdin": "1", "expected_stdout": "1"}, {"stdin": "2", "expected_stdout": "3"},
             {"stdin": "3", "expected_stdout": "4"}]  # fmt: skip
    out = run("print(input())", "python", test_cases=cases)
    assert out["status"] == "Failed"
    assert out["message"] == "2 of 3 test cases failed, the first is case 2: wrong answer"
    assert run("print(1)", "python")["message"] == ""  # a success says nothing


def test_compile_failure_leaves_run_result_null(run):
    out = run("int main( {", "cpp")
    assert out["status"] == "Failed"
    assert out["compile_result"]["return_code"] != 0
    assert out["run_result"] is None


def test_files_and_fetch_files(run):
    code = (
        "print(open('data/in.txt').read().strip())\n"
        "open('out.txt', 'w').write('result')\n"
        "import os; os.makedirs('outdir'); open('outdir/a.txt', 'w').write('A')\n"
    )
    out = run(
        code,
        "python",
        files={"data/in.txt": b64(b"payload"), "ignored": None},
        fetch_files=["out.txt", "outdir", "missing.txt"],
    )
    assert out["run_result"]["stdout"] == "payload\n"
    assert base64.b64decode(out["files"]["out.txt"]) == b"result"
    assert base64.b64decode(out["files"]["outdir/a.txt"]) == b"A"
    assert "missing.txt" not in out["files"]


def test_compiled_language_sees_files_in_both_steps(run):
    code = (
        "#include <fstream>\n#include <iostream>\n"
        'int main(){std::ifstream f("n.txt");int n;f>>n;std::cout<<n*2;}'
    )
    out = run(code, "cpp", files={"n.txt": b64(b"21")})
    assert out["run_result"]["stdout"] == "42"


def test_time_limit_shape(run):
    out = run("import time; time.sleep(30)", "python", run_timeout=0.5)
    assert out["status"] == "Failed" and out["message"].startswith("time limit: ")
    assert out["run_result"]["status"] == "TimeLimitExceeded"
    assert out["run_result"]["return_code"] is None
    assert out["run_result"]["limit"] == "time"
    assert isinstance(out["run_result"]["stdout"], str)


def test_output_is_drained_past_pipe_buffers(run):
    # SandboxFusion reports > 128 KiB of output as a time-out; sandlot returns all of it.
    out = run("import sys; sys.stdout.write('x' * 3_000_000)", "python")
    assert out["status"] == "Success"
    assert len(out["run_result"]["stdout"]) == 3_000_000
    assert out["run_result"]["stdout_truncated"] is False


def test_second_identical_build_comes_from_the_cache(run):
    code = CPP_SUM + "\n// cache test\n"
    first = run(code, "cpp", stdin="1 2")
    second = run(code, "cpp", stdin="3 4")
    assert first["cached_build"] is False
    assert second["cached_build"] is True
    assert second["run_result"]["stdout"] == "7\n"
    assert second["compile_result"]["return_code"] == 0


# -- the simple shape --------------------------------------------------------------------------


def test_simple_shape(run):
    out = run("import sys; print('out'); print('err', file=sys.stderr); sys.exit(2)", "python",
              timeout=5)  # fmt: skip
    assert out["stdout"] == "out\n"
    assert out["stderr"] == "err\n"
    assert out["exit_code"] == 2


def test_timeout_sets_the_run_timeout(run):
    out = run("import time; time.sleep(5)", "python", timeout=0.5)
    assert out["run_result"]["status"] == "TimeLimitExceeded"


@pytest.mark.parametrize("language,code", [
    ("python", "def add(a, b):\n    return a + b\n"),
    ("javascript", "function add(a, b) { return a + b }"),
])  # fmt: skip
def test_expression_cases(run, language, code):
    cases = [
        {"input": "add(1, 2)", "expected": "3"},
        {"input": "add(0.1, 0.2)", "expected": "0.3"},
        {"input": "add([1], [2])" if language == "python" else "[1].concat([2])",
         "expected": "[1, 2]"},
        {"input": "add(1, 2)", "expected": "4"},
    ]  # fmt: skip
    out = run(code, language, test_cases=cases)
    assert [t["passed"] for t in out["tests"]] == [True, True, True, False]
    assert out["passed"] is False
    assert out["status"] == "Failed"
    assert out["tests"][3]["actual"] == "3"


def test_expression_case_errors_are_reported(run):
    out = run("def f():\n    raise ValueError('boom')\n", "python",
              test_cases=[{"input": "f()", "expected": "1"}])  # fmt: skip
    case = out["tests"][0]
    assert case["passed"] is False
    assert "exited with code 1" in case["error"]
    assert "boom" in case["run_result"]["stderr"]


def test_stdin_cases_compile_once(run):
    cases = [
        {"stdin": "1 2", "expected_stdout": "3"},
        {"stdin": "20 22\n", "expected_stdout": "42\n"},
    ]
    out = run(CPP_SUM + "// stdin cases\n", "cpp", test_cases=cases)
    assert out["passed"] is True and out["status"] == "Success"
    assert out["compile_result"]["return_code"] == 0
    assert [t["passed"] for t in out["tests"]] == [True, True]
    wrong = run(CPP_SUM + "// stdin cases\n", "cpp",
                test_cases=[{"stdin": "1 1", "expected_stdout": "3"}])  # fmt: skip
    assert wrong["cached_build"] is True
    assert wrong["passed"] is False and wrong["tests"][0]["actual"] == "2\n"


def test_cases_with_a_compile_error(run):
    out = run("int main( {", "cpp", test_cases=[{"stdin": "", "expected_stdout": ""}])
    assert out["passed"] is False
    assert out["tests"] == []
    assert out["compile_result"]["return_code"] != 0


# -- other endpoints ---------------------------------------------------------------------------


def test_ping(client):
    r = client.get("/v1/ping")
    assert r.status_code == 200 and r.json() == "pong"


def test_health(client):
    body = client.get("/health").json()
    assert body["status"] == "ok"
    assert body["isolation"]["ready"] is True
    assert body["isolation"]["mechanism"].startswith("namespaces built by a per-slot zygote")
    assert body["isolation"]["network"].startswith("loopback only; a box's namespace goes")
    assert body["isolation"]["cgroup_version"] in (1, 2)
    assert body["slots"] == 2 and body["queued"] == 0
    assert body["slot_cpus"] == placement.describe_cpu_sets(
        placement.spread(2, placement.allowed_cpus())
    )
    assert "python" in body["languages"]


def test_docs(client):
    assert client.get("/docs").status_code == 200
    spec = client.get("/openapi.json").json()
    assert "/run_code" in spec["paths"]


# -- what a hostile web page can send ------------------------------------------------------------

BODY = b'{"code": "echo ran", "language": "bash"}'
# The Content-Types a page may POST cross-site with no CORS preflight (a form, fetch() with a
# string or a typeless Blob), as a browser sends them.
SIMPLE = ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=----x", None]  # fmt: skip


@pytest.mark.parametrize("content_type", SIMPLE)
def test_attack_cross_site_post_without_preflight_is_refused(client, content_type):
    headers = {"origin": "http://evil.example", "referer": "http://evil.example/page"}
    if content_type is not None:
        headers["content-type"] = content_type
    r = client.post("/run_code", content=BODY, headers=headers)
    assert r.status_code == 415, r.text
    assert "application/json" in r.json()["detail"] and "ran" not in r.text
    assert "access-control-allow-origin" not in r.headers  # and the page may not read it


def test_attack_form_encoded_fields_do_not_run(client):
    r = client.post("/run_code", data={"code": "echo ran", "language": "bash"})
    assert r.status_code == 415 and "--json" in r.json()["detail"]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "application/vnd.sandlot+json"])  # fmt: skip
def test_json_bodies_are_read(client, content_type):
    r = client.post("/run_code", content=BODY, headers={"content-type": content_type})
    assert r.status_code == 200 and r.json()["stdout"] == "ran\n"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example",
                                  "localhost.evil.example", ""])  # fmt: skip
def test_attack_dns_rebinding_host_is_refused(server, host):
    """A page on evil.example whose name now resolves to 127.0.0.1 is same-origin with us, so it
    may send JSON; the Host header it cannot change still names evil.example."""
    with httpx.Client(base_url=server.url, headers={"host": host}, timeout=30) as c:
        r = c.post("/run_code", content=BODY, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "DNS rebinding" in r.json()["detail"], r.text
        assert c.get("/health").status_code == 400


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "sandlot.localhost"])
def test_own_names_are_served(server, host):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        port = server.url.rsplit(":", 1)[1]
        r = c.get("/v1/ping", headers={"host": f"{host}:{port}"})
        assert r.status_code == 200 and r.json() == "pong"


def test_configured_host_names_are_served():
    from sandlot.api.limits import host_allowed

    names = frozenset({"sandbox.internal", "0.0.0.0"})
    assert host_allowed("sandbox.internal:8080", names) and host_allowed("SANDBOX.internal.", names)
    assert host_allowed("10.1.2.3:80", names) and host_allowed("[fe80::1]:80", names)
    assert not host_allowed("other.internal", names) and not host_allowed(
        "sandbox.internal.x", names
    )
    assert host_allowed("anything.example", frozenset({"*"}))


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("body,status,says", [
    ({"code": "x", "language": "cobol"}, 400, "supports: bash"),
    ({"language": "python"}, 422, "code"),
    ({"code": 5, "language": "python"}, 422, "code"),
    ({"code": "x", "language": "python", "run_timeout": "soon"}, 422, "run_timeout"),
    ({"code": "x", "language": "python", "run_timeout": 10_000}, 400, "maximum"),
    ({"code": "x", "language": "python", "compile_timeout": -1}, 422, "greater than 0"),
    ({"code": "x", "language": "python", "memory_limit_MB": 10**6}, 400, "maximum"),
    ({"code": "x", "language": "python", "files": {"../x": "eA=="}}, 400, "not allowed"),
    ({"code": "x", "language": "python", "files": {"/etc/x": "eA=="}}, 400, "not allowed"),
    ({"code": "x", "language": "python", "files": {"a": "not base64!"}}, 400, "base64"),
    ({"code": "x", "language": "python", "fetch_files": ["../../etc/passwd"]}, 400, "not allowed"),
    ({"code": "x", "language": "python", "test_cases": [{"stdin": "1"}]}, 422, "expected"),
    ({"code": "x", "language": "python", "test_cases": []}, 400, "empty"),
    ({"code": "x", "language": "c", "test_cases": [{"input": "f()", "expected": "1"}]}, 400,
     "stdin"),
])  # fmt: skip
def test_bad_input_gets_a_clear_4xx(client, server, body, status, says):
    r = client.post("/run_code", json=body)
    assert r.status_code == status, r.text
    assert says in r.json()["detail"]
    assert server.alive()


def test_malformed_json(client):
    r = client.post("/run_code", content=b'{"code": "x", "lang',
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422
    assert "JSON" in r.json()["detail"]


def test_malformed_json_says_why_and_where(client):
    r = client.post("/run_code", content=b'{"code": "print(1)",\n "language": "python",}',
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422
    assert r.json()["detail"] == (
        "the body is not valid JSON: Expecting property name enclosed in double quotes, at "
        "line 2, column 23"
    )


@pytest.mark.parametrize(("fields", "says"), [
    ({"timeout": 100000}, "timeout=100000 is above this server's maximum of 300"),
    ({"timeout": 1, "run_timeout": 2},
     "timeout and run_timeout are the same setting: give one (got timeout=1, run_timeout=2)"),
    ({"memory_limit_MB": "lots"},
     "memory_limit_MB: a whole number of MiB, at least 1, or -1 for the server's default"),
])  # fmt: skip
def test_limits_are_named_as_they_were_sent(client, fields, says):
    r = client.post("/run_code", json={"code": "print(1)", "language": "python", **fields})
    assert r.status_code in (400, 422), r.text
    assert says in r.json()["detail"], r.json()["detail"]
    assert "run_timeout=" not in r.json()["detail"] or "run_timeout" in fields


def test_the_same_timeout_twice_is_fine(client):
    body = {"code": "print(1)", "language": "python", "timeout": 5, "run_timeout": 5}
    assert client.post("/run_code", json=body).json()["status"] == "Success"


def test_a_wrong_method_is_told_the_right_one(client):
    r = client.get("/run_code")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["detail"] == "/run_code takes POST (with a JSON body), not GET"


def test_head_is_answered_wherever_get_is(client):
    for path in ("/playground/", "/health", "/v1/ping", "/languages"):
        get, head = client.get(path), client.head(path)
        assert head.status_code == get.status_code == 200, path
        assert head.content == b"" and head.headers["content-type"] == get.headers["content-type"]


def test_code_over_the_size_limit_is_413(client):
    r = client.post("/run_code", json={"code": "#" * (5 << 20), "language": "python"})
    assert r.status_code == 413
    assert "larger" in r.json()["detail"]


def test_body_over_the_limit_is_refused_before_it_is_read(client):
    r = client.post("/run_code", content=b"x" * (150 << 20),
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 413
