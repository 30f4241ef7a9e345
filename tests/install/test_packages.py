"""The package sets `sandlot setup` fetches from the language registries (sandlot/install/sets.py):
programs that import them build and run in a box, with no network; what is not in a set is
not fetched at run time; the locks and the installed sets agree."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandlot.install import Mirrors, Setup
from sandlot.install.gomod import ensure_go_modules
from sandlot.install.jars import ensure_jars
from sandlot.install.locks import check_jars
from sandlot.languages import LANGUAGES, Registry

pytestmark = [pytest.mark.root, pytest.mark.slow]

# Every module of SandboxFusion's Go runtime, each used (a blank import would let a missing
# package's code go unbuilt no more than a used one, but a used one shows it links and runs).
GO_EVERY_DEPENDENCY = """\
package main

import (
	"fmt"

	"github.com/go-enry/go-enry/v2"
	"github.com/go-openapi/inflect"
	"github.com/opentracing/opentracing-go"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/atomic"
	"go.uber.org/automaxprocs/maxprocs"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"golang.org/x/oauth2"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	yaml2 "gopkg.in/yaml.v2"
	"gopkg.in/yaml.v3"
	"gorm.io/gorm"
)

type t struct{}

func (t) Errorf(string, ...interface{}) {}

func main() {
	fmt.Println(enry.GetLanguage("x.go", nil), inflect.Pluralize("box"))
	fmt.Println(opentracing.GlobalTracer() != nil, logrus.New() != nil, viper.New() != nil)
	flags := pflag.NewFlagSet("f", pflag.ContinueOnError)
	fmt.Println((&cobra.Command{Use: "x"}).Name(), flags.NArg())
	fmt.Println(assert.Equal(t{}, 1, 1), otel.GetTracerProvider() != nil, sdk.Version() != "")
	var _ metric.Meter
	var _ trace.Span
	_ = stdoutmetric.New
	fmt.Println(sdkmetric.NewMeterProvider() != nil, atomic.NewInt64(41).Inc())
	_, _ = maxprocs.Set()
	fmt.Println(goleak.Find() == nil, zap.NewNop() != nil, oauth2.Config{}.ClientID == "")
	fmt.Println(cases.Title(language.English).String("hello world"))
	b2, _ := yaml2.Marshal(map[string]int{"a": 1})
	b3, _ := yaml.Marshal(map[string]int{"b": 2})
	fmt.Print(string(b2), string(b3))
	fmt.Println(gorm.ErrRecordNotFound)
}
"""
GO_EVERY_DEPENDENCY_OUT = """\
Go boxes
true true true
x 0
true true true
true 42
true true true
Hello World
a: 1
b: 2
record not found
"""
SLOW_BUILD = {"compile_timeout": 120, "run_timeout": 30}


def test_go_program_importing_every_sandboxfusion_dependency_builds_and_runs(run):
    out = run(GO_EVERY_DEPENDENCY, "go", **SLOW_BUILD)
    assert out["status"] == "Success", out["compile_result"]["stderr"]
    assert out["run_result"]["stdout"] == GO_EVERY_DEPENDENCY_OUT


def test_go_module_outside_the_set_is_not_fetched(run):
    """Control: the box has no network and Go no proxy, so a module the set lacks stays absent."""
    code = 'package main\n\nimport "github.com/samber/lo"\n\nfunc main() { lo.Uniq([]int{1}) }\n'
    out = run(code, "go", **SLOW_BUILD)
    assert out["status"] == "Failed"
    assert (
        "no required module provides package github.com/samber/lo"
        in (out["compile_result"]["stderr"])
    )


def test_go_test_uses_testify_from_the_set(run):
    code = (
        'package main\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/require"\n)\n\n'
        "func TestAdd(t *testing.T) { require.Equal(t, 3, 1+2) }\n"
    )
    out = run(code, "go_test", **SLOW_BUILD)
    assert out["status"] == "Success", out
    assert out["run_result"]["stdout"].startswith("ok  \tcommand-line-arguments\t")
    failing = code.replace("3, 1+2", "4, 1+2")
    out = run(failing, "go_test", **SLOW_BUILD)
    assert out["status"] == "Failed" and "Not equal" in out["run_result"]["stdout"]


JAVA_WITH_JARS = """\
import io.reactivex.Observable;
import org.javatuples.Pair;
import org.json.JSONObject;

public class Main {
  public static void main(String[] args) {
    JSONObject o = new JSONObject("{\\"a\\": [1, 2]}");
    int sum = Observable.fromArray(1, 2, 3).reduce(0, Integer::sum).blockingGet();
    System.out.println(o.getJSONArray("a").length() + " " + sum + " " + Pair.with("x", 1));
  }
}
"""


def test_java_program_uses_org_json_rxjava2_and_javatuples(run):
    out = run(JAVA_WITH_JARS, "java", **SLOW_BUILD)
    assert out["status"] == "Success", out["compile_result"]
    assert out["run_result"]["stdout"] == "2 6 [x, 1]\n"


# AssertJ's hasDimensions came in 3.17 (Debian 12 has 3.14); aider's mazy-mice exercise uses it.
JUNIT_ASSERTJ = """\
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

public class GridTest {
  @Test
  public void dimensions() {
    assertThat(new char[2][3]).hasDimensions(2, EXPECTED);
  }
}
"""


def test_junit_runs_assertj_newer_than_debians(run):
    out = run(JUNIT_ASSERTJ.replace("EXPECTED", "3"), "junit", **SLOW_BUILD)
    assert out["status"] == "Success", out["compile_result"]
    assert "1 tests successful" in out["run_result"]["stdout"]
    out = run(JUNIT_ASSERTJ.replace("EXPECTED", "4"), "junit", **SLOW_BUILD)  # control
    assert out["status"] == "Failed" and "1 tests failed" in out["run_result"]["stdout"]


RUST_WITH_CRATES = """\
use itertools::Itertools;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug)]
struct Point { x: i32, y: i32 }

fn main() {
    let p: Point = serde_json::from_str(r#"{"x": 1, "y": 2}"#).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let n: u8 = rng.gen_range(5..6);
    let words = ["b", "a", "b"].iter().unique().sorted().join(",");
    let re = regex::Regex::new(r"^\\d+$").unwrap();
    let big = num::BigInt::from(2).pow(70);
    let Some(first) = words.chars().next() else { return };
    println!("{:?} {} {} {} {} {}", p, n, words, re.is_match("42"), big, first);
}
"""
RUST_WITH_CRATES_OUT = "Point { x: 1, y: 2 } 5 a,b true 1180591620717411303424 a\n"


def test_rust_program_uses_crates_from_the_set(run):
    out = run(RUST_WITH_CRATES, "rust", **SLOW_BUILD)
    assert out["status"] == "Success", out["compile_result"]["stderr"]
    assert out["run_result"]["stdout"] == RUST_WITH_CRATES_OUT


CARGO_PROJECT = {
    "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n'
    '[dependencies]\nserde = { version = "1", features = ["derive"] }\nserde_json = "1"\n'
    'anyhow = "1"\nDEP\n',
    "src/main.rs": "#[derive(serde::Serialize)]\nstruct A { v: Vec<u8> }\n"
    "fn main() -> anyhow::Result<()> {\n"
    '    println!("{}", serde_json::to_string(&A { v: vec![1, 2] })?);\n'
    "    Ok(())\n}\n",
}


def cargo_files(extra_dependency: str = "") -> dict[str, str]:
    files = {name: text.replace("DEP", extra_dependency) for name, text in CARGO_PROJECT.items()}
    return {name: base64.b64encode(text.encode()).decode() for name, text in files.items()}


def test_cargo_project_builds_offline_from_the_set(run):
    out = run("cargo build --release -q && ./target/release/demo", "bash", files=cargo_files(),
              run_timeout=300)  # fmt: skip
    assert out["status"] == "Success", out["run_result"]["stderr"][-2000:]
    assert out["run_result"]["stdout"] == '{"v":[1,2]}\n'


def test_cargo_project_with_a_crate_outside_the_set_fails_offline(run):
    """Control: a crate the set lacks cannot be fetched from the box."""
    out = run("cargo build --release -q && ./target/release/demo", "bash",
              files=cargo_files('tokio = "1"'), run_timeout=300)  # fmt: skip
    assert out["status"] == "Failed"
    assert "tokio" in out["run_result"]["stderr"]


def test_languages_report_where_each_set_came_from(client):
    rows = {row["name"]: row for row in client.get("/v1/languages").json()}
    for name, target in (("go", "go modules"), ("java", "jars"), ("rust", "crates")):
        (status,) = rows[name]["packages"]
        assert status["name"] == target and status["source"] == "registry", status
        assert status["missing"] == [] and status["pins"] > 0
    assert rows["python"]["packages"] == []


def test_installed_sets_agree_with_their_locks():
    """What CI checks after set-up: `sandlot packages check`."""
    done = subprocess.run([sys.executable, "-m", "sandlot", "packages", "check"],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agree with their locks" in done.stdout


# An address where nothing listens: a registry that cannot be reached.
UNREACHABLE = "http://127.0.0.1:9"


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A dir the sandbox's uids can reach (pytest's tmp_path is closed to them)."""
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        yield Path(tmp)


def fallback_setup(open_dir: Path, mirrors: Mirrors, *links: str) -> Setup:
    """A runtime dir of its own, with `links` to the machine's (toolchains a set needs)."""
    runtime = open_dir / "runtime"
    runtime.mkdir()
    for name in links:
        (runtime / name).symlink_to(Path("/opt/sandlot") / name)
    return Setup(runtime, LANGUAGES, print, mirrors)


def test_jars_fall_back_to_debians_when_maven_central_is_unreachable(open_dir):
    setup = fallback_setup(open_dir, Mirrors(maven=UNREACHABLE))
    line = ensure_jars(setup)
    assert line.startswith("registry unreachable"), line
    jars = setup.runtime / "jars"
    assert (jars / "assertj-core.jar").resolve() == Path("/usr/share/java/assertj-core.jar")
    assert not (jars / "json.jar").exists()  # Debian has no org.json: said, not faked
    status = Registry(LANGUAGES, str(setup.runtime)).packages("junit")[0]
    assert status["source"] == "debian"
    assert status["missing"] == ["io.reactivex.rxjava2:rxjava:2.2.12", "org.json:json:20190722"]
    assert not (jars / ".sandlot-stamp").exists()  # the next run tries Maven Central again


def test_go_modules_fall_back_to_debians_when_the_proxy_is_unreachable(open_dir):
    setup = fallback_setup(open_dir, Mirrors(goproxy=UNREACHABLE), "go", "go-cache")
    line = ensure_go_modules(setup)
    assert line.startswith("registry unreachable"), line
    status = Registry(LANGUAGES, str(setup.runtime)).packages("go")[0]
    assert status["source"] == "debian"
    assert "gorm.io/gorm" in status["missing"] and "go.uber.org/zap" not in status["missing"]
    assert not (setup.runtime / "go-modules" / "go.mod").exists()  # the rows: GOPATH mode
    assert Path("/usr/share/gocode/src/go.uber.org/zap").is_dir()


def test_check_finds_a_jar_that_differs_from_the_lock(open_dir):
    """Control for the check above: one byte changed in an installed jar is found."""
    jars = open_dir / "jars"
    shutil.copytree("/opt/sandlot/jars", jars)
    assert check_jars(open_dir) == []
    with (jars / "json.jar").open("ab") as f:
        f.write(b"\0")
    (problem,) = check_jars(open_dir)
    assert problem.startswith(f"jars: {jars / 'json.jar'} has SHA-256 ")
