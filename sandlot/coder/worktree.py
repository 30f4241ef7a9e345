"""Git for the coder: checks before anything runs, a worktree on a new branch, commits, diffs.

The user's working tree and branch are never touched: every edit happens in a `git worktree`
under a temp dir, on a new `sandlot/coder-*` branch. Nothing is ever pushed, merged or rebased;
the only write to the user's branch is `apply()`, an explicit fast-forward after tests passed.
"""

from __future__ import annotations

import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import GitFailed, InvalidRequest
from sandlot.repos import Owner, run_git

# Used only when the user has no identity configured, so our commits never fail for it.
FALLBACK_IDENTITY = ("sandlot coder", "coder@sandlot.invalid")
# Aider's own artefacts (tags cache, histories) never go into a commit.
EXCLUDE = (":(exclude).aider*",)


@dataclass(frozen=True, slots=True)
class RepoState:
    root: Path
    head: str  # the base commit
    branch: str | None  # None when HEAD is detached
    dirty: list[str]  # tracked paths with uncommitted changes (staged or not)
    owner: Owner | None = None  # whose uid runs git here (a server's task), else ours


def inspect(path: str | Path, owner: Owner | None = None) -> RepoState:
    """The repository at `path`, or InvalidRequest saying why it cannot be used."""
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InvalidRequest(f"{path} is not a directory")
    try:
        inside = run_git(p, "rev-parse", "--is-inside-work-tree", owner=owner).strip()
    except GitFailed as exc:
        if (p / ".git").exists():  # a repository git cannot use: not what the user thinks
            raise GitFailed(["rev-parse"], path, exc.first_line, hint=(
                "it has a .git that git, run as the repository's owner, cannot use: check that "
                "the owner can read all of it and that it is intact (`git fsck`)"
            )) from None  # fmt: skip
        inside = ""
    if inside != "true":
        raise InvalidRequest(
            f"{path} is not a git repository (the coder works on a new branch in a git "
            "worktree): run `git init` and commit your files first"
        )
    root = Path(run_git(p, "rev-parse", "--show-toplevel", owner=owner).strip())
    head = run_git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False,
               owner=owner).strip()  # fmt: skip
    if not head:
        raise InvalidRequest(f"{root} has no commits yet: commit your files first")
    branch = run_git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False,
                 owner=owner).strip() or None  # fmt: skip
    status = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=no", owner=owner)
    dirty = [entry[3:] for entry in status.split("\0") if len(entry) > 3]
    return RepoState(root, head, branch, dirty, owner)


def resolve_files(state: RepoState, names: list[str], what: str) -> list[str]:
    """Repo-relative paths of files that exist at the base commit; InvalidRequest otherwise."""
    listed = run_git(
        state.root, "ls-tree", "-r", "-z", "--name-only", state.head, owner=state.owner
    )
    tracked = set(listed.split("\0"))
    out: list[str] = []
    unknown: list[str] = []
    for name in names:
        rel = _relative(state.root, name)
        if rel is None or rel not in tracked:
            unknown.append(name)
        else:
            out.append(rel)
    if unknown:
        raise InvalidRequest(
            f"unknown {what}: {', '.join(unknown)} (not committed in {state.root} at "
            f"{state.head[:10]}); name files of the repository, relative to its root"
        )
    return out


def _relative(root: Path, name: str) -> str | None:
    for candidate in (Path(name), root / name):
        full = candidate if candidate.is_absolute() else Path.cwd() / candidate
        try:
            rel = full.resolve().relative_to(root.resolve())
        except (ValueError, OSError):
            continue
        if rel.parts and ".." not in rel.parts:
            return rel.as_posix()
    return None


def slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:40].rstrip("-") or "task"


@dataclass(slots=True)
class Worktree:
    repo: Path
    path: Path
    branch: str
    base: str
    owner: Owner | None = None
    sealed: bool = False  # a clone holding the base's history alone, not a git worktree

    @classmethod
    def create_sealed(cls, state: RepoState, parent: Path, message: str) -> Worktree:
        """A clone of the base commit's history alone (no later commit, tag or ref of the
        repository), on a new branch: Aider works where the answer cannot be looked up. The
        branch reaches the repository by `deliver`."""
        from sandlot.repos import bundle_from_path

        branch = f"sandlot/coder-{slug(message)}-{secrets.token_hex(3)}"
        path = parent / "worktree"
        (parent / "bundle").mkdir(parents=True)
        if state.owner is not None:
            state.owner.give(parent)  # git, as the owner, bundles and clones in it
        bundle, _ = bundle_from_path(state.root, state.head, parent / "bundle", state.owner)
        run_git(parent, "clone", "-q", "--no-tags", "-b", "base", str(bundle), str(path),
            owner=state.owner)  # fmt: skip
        tree = cls(state.root, path, branch, state.head, state.owner, sealed=True)
        tree.git("checkout", "-q", "-b", branch)
        tree.git("branch", "-q", "-D", "base")
        tree.git("remote", "remove", "origin")
        return tree

    def deliver(self) -> None:
        """The sealed clone's branch, fetched into the repository (nothing else of it)."""
        if self.sealed:
            ref = f"refs/heads/{self.branch}"
            run_git(self.repo, "fetch", "-q", "--no-tags", str(self.path), f"+{ref}:{ref}",
                owner=self.owner)  # fmt: skip

    @classmethod
    def create(cls, state: RepoState, parent: Path, message: str) -> Worktree:
        branch = f"sandlot/coder-{slug(message)}-{secrets.token_hex(3)}"
        path = parent / "worktree"
        if state.owner is not None:
            state.owner.give(parent)  # git, as the owner, creates the checkout in it
        run_git(state.root, "worktree", "add", "-q", "-b", branch, str(path), state.head,
            owner=state.owner)  # fmt: skip
        return cls(state.root, path, branch, state.head, state.owner)

    def git(self, *args: str, check: bool = True) -> str:
        return run_git(self.path, *args, check=check, owner=self.owner)

    def hide(self, rel: str) -> None:
        """Keep a tracked file out of this worktree without recording a deletion."""
        if (self.path / rel).exists():
            self.git("update-index", "--skip-worktree", "--", rel)
            (self.path / rel).unlink()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def commit_all(self, message: str) -> str | None:
        """Commit every change Aider left (not its artefacts); the new sha, or None if none."""
        self.git("add", "-A", "--", ".", *EXCLUDE)
        if not self.git("diff", "--cached", "--name-only").strip():
            return None
        ident: list[str] = []
        if not self.git("config", "user.email", check=False).strip():
            name, email = FALLBACK_IDENTITY
            ident = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
        self.git(*ident, "commit", "-q", "--no-verify", "-m", message)
        return self.head()

    def diff(self) -> str:
        return self.git("diff", "--no-color", f"{self.base}..HEAD")

    def changed_files(self) -> list[str]:
        out = self.git("diff", "--name-only", "-z", f"{self.base}..HEAD")
        return [p for p in out.split("\0") if p]

    def remove(self) -> None:
        """Drop the checkout; the branch (the deliverable) stays."""
        if self.sealed:
            shutil.rmtree(self.path, ignore_errors=True)
            return
        run_git(self.repo, "worktree", "remove", "--force", str(self.path), check=False,
            owner=self.owner)  # fmt: skip
        run_git(self.repo, "worktree", "prune", check=False, owner=self.owner)

    def drop_branch(self) -> None:
        run_git(self.repo, "branch", "-D", self.branch, check=False, owner=self.owner)


def apply(state: RepoState, head: str) -> str:
    """Fast-forward the user's branch to `head` (the tested commit); never anything else."""
    now = inspect(state.root, state.owner)
    if now.branch is None or now.branch != state.branch:
        raise InvalidRequest("--apply needs the branch that was checked out at the start")
    if now.head != state.head:
        raise InvalidRequest(
            f"{now.branch} moved since the coder started; merge the coder's branch yourself"
        )
    if now.dirty:
        raise InvalidRequest(f"uncommitted changes in {', '.join(now.dirty[:5])}; not applying")
    run_git(state.root, "merge", "--ff-only", "-q", head, owner=state.owner)
    return run_git(state.root, "rev-parse", "HEAD", owner=state.owner).strip()
