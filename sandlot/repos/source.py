"""A repository at its base commit, with its history up to that commit and nothing else.

The repository comes as a path on the server (under `coder_roots`, read by git run as its
owner) or as a tarball upload (opened in a box: its archive and its `.git` are hostile). Either
way what leaves is a git bundle of the base commit alone (a file of data: every object reachable
from the base, and no ref, tag or object of anything later), which root fetches into a new
repository of its own: the checkout. No config, hook or object of the source repository reaches
it. A checkout is named by its base commit (the commit's hash covers its whole history), shared
by every run at that commit, and made into a layer any box may read and write by copy-up.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import GitFailed, InvalidRequest, SandlotError
from sandlot.repos.gitrun import run_git
from sandlot.repos.owner import Owner

SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
REV = re.compile(r"^[A-Za-z0-9._/^~@{}-]{1,200}$")  # a commit, branch or tag name; no options
BUNDLE_REF = "refs/heads/base"
# In the box that opens an upload (a git bundle, or an archive of a repository: at the top, or
# in the one directory at the top; bare or not): its base fetched into a new repository and
# bundled from there, which holds nothing else. It prints the base's full hash.
UNPACK = r"""set -eu
git init -q f
if head -c 20 /sandbox/upload | grep -qa '^# v[23] git bundle'; then
  git -C f fetch -q --no-tags /sandbox/upload '+refs/*:refs/up/*' 2>/dev/null || true
  git -C f fetch -q --no-tags /sandbox/upload HEAD 2>/dev/null || true
  want=$BASE; [ "$BASE" = HEAD ] && want=FETCH_HEAD
  sha=$(git -C f rev-parse -q --verify "$want^{commit}") ||
    { echo "no commit $BASE in the uploaded bundle" >&2; exit 4; }
else
  mkdir x && tar -xf /sandbox/upload -C x --no-same-owner --no-same-permissions
  if [ -e x/.git ] || [ -f x/HEAD ]; then r=x
  else r=$(find x -mindepth 2 -maxdepth 2 \( -name .git -o -name HEAD \) -printf '%h\n' | head -1)
  fi
  [ -n "$r" ] || { echo "no git repository in the archive" >&2; exit 3; }
  git -C f fetch -q --no-tags "$PWD/$r" "$BASE" ||
    { echo "no commit $BASE in the archive's repository" >&2; exit 4; }
  sha=$(git -C f rev-parse FETCH_HEAD^{commit})
fi
git -C f update-ref refs/heads/base "$sha"
git -C f bundle create -q "$PWD/base.bundle" refs/heads/base
echo "$sha"
"""


def git(cwd: Path, *args: str, owner: Owner | None = None, check: bool = True,
        env: dict[str, str] | None = None) -> str:  # fmt: skip
    """git in `cwd` as `owner` (else as ourselves), with no configuration but its repository's."""
    return run_git(cwd, *args, owner=owner, check=check, env=env, user_config=False)


def check_rev(base: str) -> str:
    if not REV.match(base) or base.startswith("-"):
        raise InvalidRequest(
            f"base {base!r} is not a commit: give a commit hash (or a branch or tag name)"
        )
    return base


def resolve(repo: Path, base: str, owner: Owner | None) -> str | None:
    """The full hash of the commit `base` names in the repository at `repo`, or None."""
    out = git(repo, "rev-parse", "-q", "--verify", f"{check_rev(base)}^{{commit}}", owner=owner,
              check=False).strip()  # fmt: skip
    return out if SHA.match(out) else None


def bundle_from_path(repo: Path, base: str, work: Path, owner: Owner | None) -> tuple[Path, str]:
    """The base commit of the repository at `repo` as a bundle in `work` (git run as `owner`,
    in a directory of the owner's), and the commit's hash."""
    fetch = work / "fetch"
    fetch.mkdir(mode=0o700)
    if owner is not None:
        owner.give(work)
    git(fetch, "init", "-q", owner=owner)
    try:
        git(fetch, "fetch", "-q", "--no-tags", str(repo), check_rev(base), owner=owner)
    except GitFailed as exc:
        hint = (f"is {base!r} a commit, branch or tag of it, and is it an intact git repository "
                "its owner can read?")  # fmt: skip
        raise GitFailed(["fetch"], repo, exc.first_line, hint) from None
    sha = git(fetch, "rev-parse", "FETCH_HEAD^{commit}", owner=owner).strip()
    git(fetch, "update-ref", BUNDLE_REF, sha, owner=owner)
    bundle = work / "base.bundle"
    git(fetch, "bundle", "create", "-q", str(bundle), BUNDLE_REF, owner=owner)
    return bundle, sha


def working_patch(repo: Path, owner: Owner | None = None) -> str:
    """The working tree's changes against HEAD, untracked files (not ignored) included, as a
    binary-safe patch; made with an index of its own, so the repository's is not touched."""
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        if owner is not None:
            owner.give(Path(tmp))
        git(repo, "read-tree", "HEAD", owner=owner, env=env)
        git(repo, "add", "-A", "--", ".", owner=owner, env=env)
        return git(repo, "diff", "--cached", "--binary", "--no-color", "HEAD", owner=owner,
                   env=env)  # fmt: skip


def checkout(bundle: Path, sha: str, dest: Path) -> None:
    """A new repository at `dest`, its HEAD the base commit (detached), from the bundle alone."""
    dest.mkdir()
    git(dest, "init", "-q")
    git(dest, "fetch", "-q", "--no-tags", str(bundle), BUNDLE_REF)
    fetched = git(dest, "rev-parse", "FETCH_HEAD^{commit}").strip()
    if fetched != sha:
        raise SandlotError(f"the repository's bundle holds {fetched}, not the base {sha}")
    git(dest, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", sha)
    (dest / ".git" / "FETCH_HEAD").unlink(missing_ok=True)


def root_commits(dest: Path) -> list[str]:
    """The first commits of the base's history: what names an uploaded repository."""
    return sorted(git(dest, "rev-list", "--max-parents=0", "HEAD").split())


def tracked(dest: Path) -> list[str]:
    out = git(dest, "ls-files", "-z")
    return [p for p in out.split("\0") if p]


@dataclass(frozen=True, slots=True)
class Source:
    """A repository to work on: `identity` names it across bases (the path it is at on the
    server, or its root commits), `base` is the base commit's full hash, `checkout` the
    shared tree at that commit."""

    identity: str
    base: str
    checkout: Path

    def root_names(self) -> set[str]:
        return set(os.listdir(self.checkout))
