"""Repository tasks, the parts that need no jail: reports, patches, tamper rules, the store's
quota and locks, the allow-list, squid's config."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sandlot.errors import InvalidRequest, JailUnavailable, NotFound
from sandlot.repos import ecosystems, grade, reports
from sandlot.repos.egress import allow_list, squid_conf
from sandlot.repos.store import Store

PYTEST_XML = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_x.TestY" name="test_a[1]" file="tests/test_x.py" line="3"/>
<testcase classname="tests.test_x" name="test_b" file="tests/test_x.py"><failure message="x"/>
</testcase><testcase classname="tests.test_x" name="test_c" file="tests/test_x.py">
<skipped/></testcase><testcase classname="tests.test_x" name="test_d" file="tests/test_x.py">
<error/></testcase></testsuite></testsuites>"""


def test_pytest_junit_ids_are_pytests_own():
    v = reports.parse_all({"report/pytest.xml": PYTEST_XML}, b"")
    assert v.tests == {
        "tests/test_x.py::TestY::test_a[1]": "passed", "tests/test_x.py::test_b": "failed",
        "tests/test_x.py::test_c": "skipped", "tests/test_x.py::test_d": "error",
    }  # fmt: skip
    assert v.status("tests.test_x.TestY.test_a[1]") == "passed"  # junit's own name, an alias
    assert v.status("tests/test_x.py::nope") == "missing"


def test_jest_and_vitest_json():
    data = {"testResults": [
        {"name": "/repo/src/a.test.js", "assertionResults": [
            {"ancestorTitles": ["sum"], "title": "adds", "status": "passed",
             "fullName": "sum adds"},
            {"ancestorTitles": [], "title": "todo", "status": "pending"}]},
        {"name": "/repo/src/b.test.js", "status": "failed", "assertionResults": []},
    ]}  # fmt: skip
    v = reports.parse_all({"report/jest.json": json.dumps(data).encode()}, b"")
    assert v.tests == {"src/a.test.js > sum > adds": "passed", "src/a.test.js > todo": "skipped",
                       "src/b.test.js": "error"}  # fmt: skip
    assert v.status("sum adds") == "passed"


def test_go_test_json_and_cargo_output_from_stdout():
    events = [{"Action": "run", "Package": "m/p", "Test": "TestA"},
              {"Action": "pass", "Package": "m/p", "Test": "TestA"},
              {"Action": "fail", "Package": "m/p", "Test": "TestB/sub"},
              {"Action": "fail", "Package": "m/p"}]  # fmt: skip
    go = b"\n".join(json.dumps(e).encode() for e in events)
    v = reports.parse_all({}, b"noise\n" + go)
    assert v.tests == {"m/p::TestA": "passed", "m/p::TestB/sub": "failed"}
    assert v.status("TestB/sub") == "failed"
    cargo = b"running 3 tests\ntest a::b ... ok\ntest c ... FAILED\ntest d ... ignored\n"
    assert reports.parse_all({}, cargo).tests == {"a::b": "passed", "c": "failed", "d": "skipped"}


def test_generic_junit_cases_and_suites():
    xml = b"""<testsuites><testsuite name="parse()"><testcase name="#1 ok"/>
    <testcase name="#2 bad"><failure/></testcase></testsuite>
    <testsuite name="com.x.FooTest"><testcase classname="com.x.FooTest" name="t"/></testsuite>
    </testsuites>"""
    v = reports.parse_all({"report/tape.xml": xml}, b"")
    assert v.status("parse()") == "failed" and v.status("parse()::#1 ok") == "passed"
    assert v.status("com.x.FooTest.t") == "passed" and v.status("com.x.FooTest") == "passed"


@pytest.mark.parametrize("hostile", [
    b"<!DOCTYPE x [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;&a;&a;'>]><testsuites>&b;</testsuites>",
    b"{" * 100_000, b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe garbage", b"",
])  # fmt: skip
def test_hostile_reports_give_no_verdict_and_no_crash(hostile: bytes):
    for name in ("report/x.xml", "report/x.json", "report/x.txt"):
        assert reports.parse_all({name: hostile}, hostile).tests == {}


def test_a_missing_test_is_no_pass():
    v = reports.Verdicts()
    v.add("a", "passed")
    assert not grade.judge(v, ["a", "b"], [], 0).resolved
    assert grade.judge(v, ["a"], [], 1).resolved  # named tests decide, not the exit status
    assert not grade.judge(v, [], [], 1).resolved  # with none named, the exit status does


PATCH = """\
diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1 +1 @@
-x
+y
diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -1 +1 @@
-x
+y
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+z
diff --git a/old_test.go b/pkg/renamed_test.go
similarity index 100%
rename from old_test.go
rename to pkg/renamed_test.go
"""


def test_what_a_patch_touches_and_which_of_it_is_tests():
    assert grade.touched(PATCH) == ["src/calc.py", "tests/test_calc.py", "tests/test_new.py",
                                    "old_test.go", "pkg/renamed_test.go"]  # fmt: skip
    globs = ecosystems.PYTHON.test_globs + ecosystems.GO.test_globs
    t = grade.tamper(PATCH, globs, {"src/calc.py", "tests/test_calc.py", "old_test.go"}, False)
    assert t.touched == ["tests/test_calc.py", "tests/test_new.py", "old_test.go",
                         "pkg/renamed_test.go"]  # fmt: skip
    assert t.restored == ["tests/test_calc.py", "old_test.go"]
    assert t.removed == ["tests/test_new.py", "pkg/renamed_test.go"] and not t.counted
    allowed = grade.tamper(PATCH, globs, set(), True)
    assert allowed.counted and allowed.restored == [] and allowed.removed == []
    assert grade.touched("") == [] and grade.tamper("", globs, set(), False).touched == []


def test_ecosystems_are_found_by_their_markers_and_key_their_manifests():
    found = ecosystems.detect({"package.json", "go.mod", "README"})
    assert [e.name for e in found] == ["node", "go"]
    assert ecosystems.is_manifest("sub/package-lock.json", found)
    assert not ecosystems.is_manifest("node_modules/x/package.json", found)
    assert not ecosystems.is_manifest("src/index.js", found)
    assert ecosystems.default_setup(()) == "" and ecosystems.default_test(()) is None


def test_the_allow_list_is_the_registries_and_checked_names():
    base = allow_list("")
    assert "pypi.org" in base and "registry.npmjs.org" in base
    assert set(allow_list("mirror.example.org, .corp.example")) - set(base) == {
        "mirror.example.org", ".corp.example"}  # fmt: skip
    for bad in ("127.0.0.1", "-x.org", "http://x.org", "x.org/path", "*", "x_y.org"):
        with pytest.raises(JailUnavailable, match="operator"):  # the server's setting: 503
            allow_list(bad)
    conf = squid_conf(Path("/w"), 3129, allow_list(""))
    assert "http_port 127.0.0.1:3129\n" in conf and "deny to_localhost" in conf
    assert conf.index("deny !registries") < conf.index("allow boxes")


def test_an_environments_key_covers_whose_it_is_the_runtimes_and_the_allow_list():
    from sandlot.repos.envs import env_key
    from sandlot.repos.source import Source

    src = Source("path:/srv/calc", "0" * 40, Path("/nonexistent"))
    files, py = [("requirements.txt", "ab12")], {"python": "3.11.2"}
    key = env_key("local", src, files, "pip install -r requirements.txt", py, allow_list(""))
    assert key == env_key("local", Source("path:/srv/calc", "1" * 40, Path("/x")), files,
                          "pip install -r requirements.txt", py, allow_list(""))  # fmt: skip
    for changed in (
        env_key("key-2", src, files, "pip install -r requirements.txt", py, allow_list("")),
        env_key("local", Source("path:/srv/other", "0" * 40, Path("/x")), files,
                "pip install -r requirements.txt", py, allow_list("")),
        env_key("local", src, files, "pip install -r requirements.txt", {"python": "3.12.0"},
                allow_list("")),
        env_key("local", src, files, "pip install -r requirements.txt", py,
                allow_list("mirror.example.org")),
    ):  # fmt: skip
        assert changed != key


def _entry(store: Store, kind: str, key: str, size: int) -> None:
    with store.making(kind, key) as made:
        assert made is not None
        (made / "layer").mkdir()
        store.commit(kind, key, made, size, {"repository": key})


def test_the_store_evicts_the_least_recently_used_but_never_one_in_use(tmp_path: Path):
    store = Store(tmp_path / "c", quota=250)
    store.setup()
    _entry(store, "envs", "a" * 16, 100)
    time.sleep(0.01)
    _entry(store, "envs", "b" * 16, 100)
    with store.use("envs", "a" * 16):  # in use (and now the most recent)
        time.sleep(0.01)
        _entry(store, "checkouts", "c" * 16, 100)  # over quota: b, not the held a, goes
    assert {e.key[0] for e in store.entries()} == {"a", "c"}
    with store.making("envs", "a" * 16) as made:
        assert made is None  # made already: nothing to make
    with store.use("envs", "a" * 16):
        assert not store.remove("envs", "a" * 16)  # in use
    assert store.remove("envs", "a" * 16)
    with pytest.raises(NotFound):
        store.remove("envs", "a" * 16)
    with pytest.raises(InvalidRequest):
        store.path("envs", "../../etc")


def test_a_tenant_lists_and_removes_its_own_environments_only(tmp_path: Path):
    from sandlot.config import Config
    from sandlot.languages import LANGUAGES, Registry
    from sandlot.repos.tasks import Repos

    cfg = Config.load(repo_dir=str(tmp_path / "c"), state_dir=str(tmp_path / "s"))
    repos = Repos(cfg, lambda: None, Registry(LANGUAGES, cfg.runtime_dir))  # type: ignore[arg-type,return-value]
    repos._prepare()
    for key, owner in (("a" * 16, "key-1"), ("b" * 16, "key-2")):
        with repos.store.making("envs", key) as made:
            assert made is not None
            repos.store.commit("envs", key, made, 1, {"owner": owner})
    assert [e["key"] for e in repos.entries("key-1")] == ["a" * 16]
    with pytest.raises(NotFound):
        repos.remove("b" * 16, "key-1")  # another tenant's: not found, not removed
    assert repos.store.get("envs", "b" * 16) is not None
    assert repos.remove("a" * 16, "key-1") and repos.entries("key-1") == []
    assert len(repos.entries()) == 1  # the machine's own view (sandlot env list) sees all
