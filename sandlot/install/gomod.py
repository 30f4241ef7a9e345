"""Go: the module cache the go and go_test rows build with, downloaded by `go mod download` from
the lock beside the rows (go.mod, go.sum: Go's own checksums), offline and read-only in the box.

A build then runs in module mode: the row copies the lock's go.mod and go.sum into the work dir
(unless the code brought its own) and Go reads the modules from this cache with GOPROXY=off.
When the module proxy cannot be reached, Debian's packages of the modules that Debian has are
installed instead and the rows build in GOPATH mode, as before there was a module cache.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from sandlot.install.apt import APT_INSTALL, installed_debs
from sandlot.install.files import (
    fresh_dir,
    prepare_runtime,
    replace_dir,
    stamp_matches,
    write_stamp,
)
from sandlot.install.go import go_build_env
from sandlot.install.process import PATH, host_env, run
from sandlot.install.sets import LOCKS, Mirrors, SetStatus, fallback_line, write_status
from sandlot.install.step import Setup, SetupError
from sandlot.languages import GO, GO_MODULES

GO_LOCK = LOCKS / "go"
LOCK_FILES = ("go.mod", "go.sum", "imports.go")
# What Debian 12 packages of the lock's modules, for a host that cannot reach the module proxy
# (GOPATH mode finds them in /usr/share/gocode). Debian has no gorm, goleak, automaxprocs nor
# go-enry, and older versions of the rest.
DEBIAN_GO = {
    "github.com/stretchr/testify": "golang-github-stretchr-testify-dev",
    "go.uber.org/zap": "golang-go.uber-zap-dev",
    "go.uber.org/atomic": "golang-go.uber-atomic-dev",
    "gopkg.in/yaml.v2": "golang-gopkg-yaml.v2-dev",
    "gopkg.in/yaml.v3": "golang-gopkg-yaml.v3-dev",
    "github.com/spf13/cobra": "golang-github-spf13-cobra-dev",
    "github.com/spf13/pflag": "golang-github-spf13-pflag-dev",
    "github.com/spf13/viper": "golang-github-spf13-viper-dev",
    "github.com/sirupsen/logrus": "golang-github-sirupsen-logrus-dev",
    "golang.org/x/text": "golang-golang-x-text-dev",
    "golang.org/x/oauth2": "golang-golang-x-oauth2-dev",
    "github.com/opentracing/opentracing-go": "golang-github-opentracing-opentracing-go-dev",
    "github.com/go-openapi/inflect": "golang-github-go-openapi-inflect-dev",
}


def direct_modules(go_mod: str) -> list[str]:
    """The modules the lock's go.mod requires directly (its first require block)."""
    block = go_mod.split("require (", 1)[1].split(")", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def go_env(home: Path, modcache: Path, mirrors: Mirrors, **extra: str) -> dict[str, str]:
    # The operator's proxy settings and Go's default module proxy and checksum database,
    # unless a mirror is set; nothing of another Go installation.
    proxy = {"GOPROXY": mirrors.goproxy} if mirrors.goproxy else {}
    settings = {"PATH": PATH, "HOME": str(home), "GOTOOLCHAIN": "local",
                "GOMODCACHE": str(modcache), "GOCACHE": str(home / "gocache"),
                "GOFLAGS": "-mod=readonly", **proxy, **extra}  # fmt: skip
    return host_env(**settings)


def ensure_go_modules(setup: Setup) -> str:
    mirrors = setup.mirrors
    target = Path(GO_MODULES.format(runtime=setup.runtime))
    go = GO.format(runtime=setup.runtime)
    lock = {name: (GO_LOCK / name).read_text() for name in LOCK_FILES}
    # The toolchain, the std cache the set's cache starts from, and the lock.
    std_cache = (setup.runtime / "go-cache" / ".sandlot-stamp").read_text()
    spec = f"{std_cache}\n{lock['go.mod']}\n{lock['go.sum']}\n{lock['imports.go']}"
    if stamp_matches(target, spec):
        return "ok (already present)"
    setup.log(f"go modules: downloading the locked build list into {target} ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    with tempfile.TemporaryDirectory() as tmp:
        module = Path(tmp) / "module"
        module.mkdir()
        for name, text in lock.items():
            (module / name).write_text(text)
        env = go_env(Path(tmp), new / "mod", mirrors)
        try:
            run([go, "mod", "download"], env=env, cwd=str(module))
        except SetupError as exc:
            shutil.rmtree(new, ignore_errors=True)
            return go_fallback(setup, target, lock["go.mod"], mirrors, exc)
        # Every package resolves from the cache alone, and every module matches go.sum.
        offline = {**env, "GOPROXY": "off"}
        run([go, "list", "-deps", "./..."], env=offline, cwd=str(module))
        run([go, "mod", "verify"], env=offline, cwd=str(module))
        shutil.rmtree(Path(tmp) / "gocache", ignore_errors=True)
    for name in ("go.mod", "go.sum"):
        (new / name).write_text(lock[name])
    modules = len({line.split()[0] for line in lock["go.sum"].splitlines()})
    write_status(new, SetStatus("go modules", "registry", mirrors.goproxy or "Go's module proxy",
                                modules))  # fmt: skip
    replace_dir(new, target)
    warm_module_cache(setup, target, lock)
    write_stamp(target, spec)
    return f"downloaded {modules} modules (go.sum verified) into {target}, and compiled them"


# What go_test builds beside them: the testing main and testify's packages.
WARM_TEST = """package main

import (
	"testing"

	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
)

func TestWarm(t *testing.T) {}
"""


def warm_module_cache(setup: Setup, target: Path, lock: dict[str, str]) -> None:
    """The go row's prewarmed build cache plus every package of the set, compiled: a build that
    imports them starts from it (the row copies it in then) and compiles only its own code, as
    SandboxFusion's warm cache does. Built after the modules are in their final place: Go's
    cache keys hold a package's directory."""
    cache = fresh_dir(target / ".cache.new")
    shutil.rmtree(cache)
    shutil.copytree(setup.runtime / "go-cache", cache, symlinks=True)
    with tempfile.TemporaryDirectory() as tmp:
        module = Path(tmp)
        for name, text in {**lock, "main_test.go": WARM_TEST}.items():
            (module / name).write_text(text)
        env = go_build_env(setup, cache, module)
        go = GO.format(runtime=setup.runtime)
        run([go, "test", "-c", "-o", "warm.test", "."], env=env, cwd=tmp)
        run([go, "build", "-o", "warm", "."], env=env, cwd=tmp)
    replace_dir(cache, target / "cache")


def go_fallback(setup: Setup, target: Path, go_mod: str, mirrors: Mirrors, exc: SetupError) -> str:
    """Debian's packages of the modules it has; the rows build in GOPATH mode (no go.mod in the
    set's dir). A host that has the set from an earlier run keeps it."""
    if (target / "go.mod").exists():
        raise SetupError(f"the Go module lock changed and the proxy cannot be reached: {exc}")
    packages = sorted(set(DEBIAN_GO.values()))
    absent = [pkg for pkg in packages if pkg not in installed_debs(packages)]
    if absent:
        run([*APT_INSTALL, *absent], env=host_env(DEBIAN_FRONTEND="noninteractive"))
    prepare_runtime(setup)
    target.mkdir(exist_ok=True)
    reason = str(exc).splitlines()[-1].strip()[:200]
    direct = direct_modules(go_mod)
    missing = [module for module in direct if module not in DEBIAN_GO]
    status = SetStatus("go modules", "debian", " ".join(packages), len(direct), missing, reason)
    write_status(target, status)
    return fallback_line(status)
