"""Cached environments: what a repository's setup command adds to its tree, keyed by what
decides it, made once in a setup box and mounted read-only under every later run.

The key is a hash of: whose it is (the owner, and the repository's identity), the manifests and
lockfiles at the base (their paths and git blob hashes), the setup command, the versions of the
runtimes a setup runs on, and the egress allow-list. Source files that are not manifests are
not in it: a later commit with the same manifests reuses the environment (what setup built from
the repository's own sources, an editable install, points at the tree the run has).

A setup runs on an overlay of the checkout whose writable layer is a tmpfs of
`repo_env_bytes` (a setup that fills it fails with ENOSPC, and the host's disk is untouched),
with the egress proxy as its only network. Only when it exits 0 is its layer copied to disk
(normalised: layers.normalise) and becomes the cached environment; nothing a setup does can
reach another repository's environment, which is never mounted in its box.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from sandlot.repos.ecosystems import Ecosystem, is_manifest
from sandlot.repos.source import Source, git

FORMAT = "sandlot-env-1"  # bump when what a layer holds or how it is made changes
RUNTIMES = ("python", "nodejs", "go", "rust", "java")  # rows whose versions key an environment
TAIL = 8192


def manifests(source: Source, ecosystems: tuple[Ecosystem, ...]) -> list[tuple[str, str]]:
    """(path, blob hash) of every manifest and lockfile tracked at the base."""
    out = []
    listing = git(source.checkout, "ls-files", "-s", "-z")
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        if is_manifest(path, ecosystems or ()):
            out.append((path, meta.split()[1]))
    return sorted(out)


def env_key(
    owner: str, source: Source, files: list[tuple[str, str]], setup: str,
    runtimes: dict[str, str | None], allow: tuple[str, ...],
) -> str:  # fmt: skip
    parts = {
        "format": FORMAT, "owner": owner, "repository": source.identity, "manifests": files,
        "setup": setup, "runtimes": runtimes, "allow": list(allow),
    }  # fmt: skip
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(slots=True)
class SetupResult:
    key: str
    ok: bool
    cached: bool  # the environment was there already: no setup ran
    command: str
    seconds: float = 0.0
    size: int = 0
    exit_code: int | None = None
    limit: str | None = None
    output: str = ""  # the tail of what the setup printed
    egress: dict[str, object] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key, "ok": self.ok, "cached": self.cached, "command": self.command,
            "seconds": round(self.seconds, 3), "size": self.size, "exit_code": self.exit_code,
            "limit": self.limit, "output_tail": self.output, "egress": self.egress,
            "error": self.error,
        }  # fmt: skip


def tail(data: bytes, limit: int = TAIL) -> str:
    text = data.decode(errors="replace")
    return text if len(text) <= limit else "[...]\n" + text[-limit:]
