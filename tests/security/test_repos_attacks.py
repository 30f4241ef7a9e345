"""Attacks on repository tasks, through a real server: each named, each with its control.

- a setup reaching what the egress proxy does not allow (another host, the host's loopback, the
  sandlot API, the metadata address, DNS), through the proxy and around it: every way fails,
  the refusals are in the result, and nothing but the registries was reached;
- a postinstall script persisting into the cache, the runtimes or another repository's
  environment: it changes nothing but its own;
- a setup filling its disk: it fails, nothing is cached, the host's disk is untouched;
- a test run reading the git history past its base: there is none to read.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sandlot.repos.egress import allow_list
from tests.conftest import running_server

pytestmark = [pytest.mark.root, pytest.mark.slow]
ENV_BYTES = 64 << 20  # the setups' layer here: small, so that filling it is quick


@pytest.fixture(scope="module")
def server_and_cache() -> Iterator[tuple[str, Path]]:
    cache = Path(tempfile.mkdtemp(prefix="sandlot-attack-cache-", dir="/var/tmp"))
    env = {"SANDLOT_REPO_DIR": str(cache), "SANDLOT_REPO_ENV_BYTES": str(ENV_BYTES)}
    with running_server("--slots", "2", env=env) as srv:
        yield srv.url, cache
    shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture(scope="module")
def api(server_and_cache) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server_and_cache[0], timeout=900) as client:
        yield client


def make_repo(where: Path, files: dict[str, str], later: dict[str, str] | None = None) -> str:
    """A git repository of `files` (its base), and a later commit of `later`, tagged: the
    base's hash."""
    where.mkdir()
    for name, text in files.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(where)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    if later:
        for name, text in later.items():
            (where / name).write_text(text)
        subprocess.run([*git, "commit", "-qam", "later"], check=True)
        subprocess.run([*git, "tag", "the-answer"], check=True)
    return base.strip()


def tarball(repo: Path) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(repo, arcname=repo.name)
    return base64.b64encode(buf.getvalue()).decode()


def setup(api: httpx.Client, repo: Path, base: str, command: str) -> dict:
    r = api.post("/repo/setup", json={"tarball": tarball(repo), "base": base, "setup": command})
    assert r.status_code == 200, r.text
    return r.json()


def host_address() -> str:
    """An address of this machine other than loopback (what a box would try to go around by)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        return s.getsockname()[0]


PROBE = r"""
import json, socket, sys, urllib.request
api_port, host = int(sys.argv[1]), sys.argv[2]
out = {}
def fetch(url):
    try:
        return urllib.request.urlopen(url, timeout=20).status
    except Exception as exc:
        return type(exc).__name__ + ": " + str(exc)[:120]
def connect(addr, port):
    s = socket.socket(); s.settimeout(5)
    try:
        s.connect((addr, port)); return "connected"
    except OSError as exc:
        return f"errno {exc.errno}"
    finally:
        s.close()
out["registry"] = fetch("https://pypi.org/simple/six/")
out["other host"] = fetch("https://example.com/")
out["api via proxy"] = fetch(f"http://127.0.0.1:{api_port}/v1/ping")
out["localhost via proxy"] = fetch(f"http://localhost:{api_port}/v1/ping")
out["host address via proxy"] = fetch(f"http://{host}:{api_port}/v1/ping")
out["metadata via proxy"] = fetch("http://169.254.169.254/latest/meta-data/")
out["api around the proxy"] = connect("127.0.0.1", api_port)
out["host address around the proxy"] = connect(host, api_port)
out["metadata around the proxy"] = connect("169.254.169.254", 80)
for name in ("pypi.org", "example.com"):
    try:
        socket.getaddrinfo(name, 443); out[f"dns {name}"] = "resolved"
    except OSError as exc:
        out[f"dns {name}"] = f"no: {exc}"
print("PROBE " + json.dumps(out))
"""


def test_a_setup_reaches_the_registries_and_nothing_else(api, server_and_cache, tmp_path):
    port = int(server_and_cache[0].rsplit(":", 1)[1])
    host = host_address()
    repo = tmp_path / "probe"
    base = make_repo(repo, {"probe.py": PROBE})
    result = setup(api, repo, base, f"python3 probe.py {port} {host}")
    line = next(x for x in result["output_tail"].splitlines() if x.startswith("PROBE "))
    seen = json.loads(line[6:])
    assert seen["registry"] == 200  # control: the proxy does its job for what is allowed
    for name in ("other host", "api via proxy", "localhost via proxy", "host address via proxy",
                 "metadata via proxy"):  # fmt: skip
        assert "403" in str(seen[name]), (name, seen[name])
    for name in ("api around the proxy", "host address around the proxy",
                 "metadata around the proxy"):  # fmt: skip
        assert seen[name] != "connected", (name, seen[name])
    assert seen["dns pypi.org"].startswith("no") and seen["dns example.com"].startswith("no")
    egress = result["egress"]
    denied = " ".join(egress["denied"])
    for target in ("example.com:443", f"127.0.0.1:{port}", f"localhost:{port}",
                   f"{host}:{port}", "169.254.169.254"):  # fmt: skip
        assert target in denied, (target, egress)
    assert set(egress["reached"]) <= set(allow_list("")), egress  # zero egress beyond the list


POSTINSTALL = r"""
const fs = require('fs');
const tries = {};
for (const target of process.argv.slice(2)) {
  try { fs.mkdirSync(require('path').dirname(target), {recursive: true});
        fs.writeFileSync(target, 'pwned'); tries[target] = 'written'; }
  catch (e) { tries[target] = e.code; }
}
fs.mkdirSync('node_modules', {recursive: true});
fs.writeFileSync('node_modules/.own-marker', 'mine');
console.log('TRIES ' + JSON.stringify(tries));
"""


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            h.update(str(path.relative_to(root)).encode())
            if not path.is_symlink():
                h.update(path.read_bytes())
    return h.hexdigest()


def test_a_postinstall_cannot_persist_into_the_cache_or_another_repos_environment(
    api, server_and_cache, tmp_path
):
    cache = server_and_cache[1]
    other = tmp_path / "other"
    other_base = make_repo(
        other, {"package.json": json.dumps({"name": "other", "version": "1.0.0"})}
    )
    first = setup(
        api,
        other,
        other_base,
        "npm install --no-audit --no-fund && mkdir -p node_modules && touch node_modules/.x",
    )
    assert first["ok"], first
    other_layer = cache / "envs" / first["key"] / "layer"
    before = _digest(other_layer)
    targets = [
        str(other_layer / "node_modules" / "pwned"), str(cache / "envs" / "pwned"),
        "/opt/sandlot/pwned", "/var/cache/sandlot/repos/envs/pwned", "/repo/../pwned",
    ]  # fmt: skip
    evil = tmp_path / "evil"
    manifest = {"name": "evil", "version": "1.0.0",
                "scripts": {"postinstall": "node evil.js " + " ".join(targets)}}  # fmt: skip
    evil_base = make_repo(evil, {"package.json": json.dumps(manifest), "evil.js": POSTINSTALL})
    result = setup(api, evil, evil_base, "npm install --no-audit --no-fund")
    assert result["ok"], result
    line = next(x for x in result["output_tail"].splitlines() if x.startswith("TRIES "))
    tries = json.loads(line[6:])
    # Inside the box: no such places (ENOENT), or read-only (EROFS); never written on the host.
    assert all(v != "written" or k.startswith("/repo/") for k, v in tries.items()), tries
    assert not (other_layer / "node_modules" / "pwned").exists()
    assert not (cache / "envs" / "pwned").exists() and not Path("/opt/sandlot/pwned").exists()
    assert _digest(other_layer) == before  # the other repository's environment is as it was
    # Control: what it wrote in its own tree is its own environment, and only its own.
    assert (cache / "envs" / result["key"] / "layer" / "node_modules" / ".own-marker").exists()
    assert not (other_layer / "node_modules" / ".own-marker").exists()


def test_a_setup_that_fills_its_disk_fails_and_leaves_nothing(api, server_and_cache, tmp_path):
    cache = server_and_cache[1]
    repo = tmp_path / "filler"
    base = make_repo(repo, {"README": "fills its disk\n"})
    usage = shutil.disk_usage(cache).used
    one_file = "dd if=/dev/zero of=big bs=1M count=100000"
    many_files = "for i in $(seq 1000); do head -c 1048576 /dev/zero > f$i || exit 1; done"
    for command in (one_file, many_files):
        result = setup(api, repo, base, command)
        assert not result["ok"] and "layer is full" in result["error"], result
        assert not (cache / "envs" / result["key"]).exists()  # nothing cached
    runs = [run for worker in (cache / "runs").iterdir() for run in worker.iterdir()]
    assert runs == []  # its layer went with it
    assert shutil.disk_usage(cache).used - usage < 4 * ENV_BYTES  # the disk saw none of it
    # Control: a setup that writes within its layer is cached.
    ok = setup(api, repo, base, "dd if=/dev/zero of=small bs=1M count=8")
    assert ok["ok"] and (cache / "envs" / ok["key"]).exists()


HISTORY = r"""
echo "LOG $(git log --all --format=%H | tr '\n' ' ')"
echo "TAGS $(git tag | tr '\n' ' ')"
echo "REFS $(git for-each-ref --format='%(refname)' | tr '\n' ' ')"
git cat-file -t "$LATER" && echo "LATER VISIBLE"
git cat-file --batch-all-objects --batch | grep -a -c THE-ANSWER || true
grep -r -a -l THE-ANSWER .git || true
"""


def test_a_test_run_cannot_read_the_history_past_its_base(api, tmp_path):
    repo = tmp_path / "history"
    base = make_repo(repo, {"answer.txt": "not yet\n"}, later={"answer.txt": "THE-ANSWER\n"})
    later = subprocess.run(["git", "-C", str(repo), "rev-parse", "the-answer"],
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    r = api.post("/repo/test", json={
        "tarball": tarball(repo), "base": base, "setup": "",
        "test": f"LATER={later}\n{HISTORY}",
    })  # fmt: skip
    assert r.status_code == 200, r.text
    out = r.json()["run"]["stdout_tail"]
    log = next(x for x in out.splitlines() if x.startswith("LOG "))
    assert log.split()[1:] == [base]  # control: the base's own history is there
    assert later not in out and "LATER VISIBLE" not in out
    assert "the-answer" not in out  # no tag, no ref
    assert "\n0\n" in out  # no object holds the later content
