"""Grading in the SWE-bench way: what a patch touches, which of that is tests, and the verdict.

A candidate patch is applied to the base in a box of its own; the test files it touched are then
put back as they were at the base (or removed, if it added them) unless the request allows test
changes; the test patch, if any, is applied last. The tests then run in a fresh box, and the
runner's report gives each test's verdict: `resolved` when every FAIL_TO_PASS and every
PASS_TO_PASS test passed. The tamper report names every test file the candidate touched, and
says whether the grade counted those changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sandlot.repos.ecosystems import is_test_path
from sandlot.repos.reports import Verdicts

# Apply the candidate, put its test files back, apply the test patch (box_init runs it in /repo).
APPLY = r"""set -u
apply() { git apply --whitespace=nowarn --recount "$1"; }
if [ -s /sandbox/candidate.patch ]; then
  apply /sandbox/candidate.patch ||
    { echo "sandlot: the candidate patch does not apply" >&2; exit 10; }
fi
if [ -s /sandbox/restore ]; then
  git --literal-pathspecs checkout -q HEAD --pathspec-file-nul \
    --pathspec-from-file=/sandbox/restore || exit 12
fi
if [ -s /sandbox/remove ]; then xargs -0 rm -rf -- < /sandbox/remove || exit 12; fi
if [ -s /sandbox/test.patch ]; then
  apply /sandbox/test.patch || { echo "sandlot: the test patch does not apply" >&2; exit 11; }
fi
exit 0
"""
APPLY_FAILURES = {10: "the candidate patch does not apply to the base",
                  11: "the test patch does not apply to the base with the candidate applied",
                  12: "the candidate's test files could not be put back"}  # fmt: skip

_DIFF_GIT = re.compile(r'^diff --git (?:a/(\S+)|"a/(.+)") (?:b/(\S+)|"b/(.+)")$')
_OLD_NEW = re.compile(r'^(?:---|\+\+\+) (?:"?[ab]/)?(.+?)"?(?:\t.*)?$')
_RENAME = re.compile(r"^(?:rename|copy) (?:from|to) (.+)$")


def _unquote(path: str) -> str:
    if "\\" not in path:
        return path
    try:
        return (
            path.encode("latin-1", "backslashreplace")
            .decode("unicode_escape")
            .encode("latin-1")
            .decode("utf-8", "replace")
        )  # git's C-style quoting of odd bytes
    except (UnicodeDecodeError, UnicodeEncodeError):
        return path


def touched(patch: str) -> list[str]:
    """The repository paths a unified diff (git's or plain) creates, changes, renames or
    deletes, in order, each once."""
    paths: list[str] = []
    for line in patch.splitlines():
        if m := _DIFF_GIT.match(line):
            paths += [m.group(1) or m.group(2), m.group(3) or m.group(4)]
        elif line.startswith(("--- ", "+++ ")) and not line[4:].startswith("/dev/null"):
            if m := _OLD_NEW.match(line):
                paths.append(m.group(1))
        elif m := _RENAME.match(line):
            paths.append(m.group(1))
    return [_unquote(p) for p in dict.fromkeys(paths) if p]


@dataclass(slots=True)
class Tamper:
    """The test files the candidate touched, and what grading did with them."""

    touched: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)  # put back as at the base
    removed: list[str] = field(default_factory=list)  # added by the candidate: taken out
    counted: bool = False  # the candidate's test changes were graded as they were

    def to_dict(self) -> dict[str, object]:
        return {"test_files_touched": self.touched, "restored": self.restored,
                "removed": self.removed, "counted": self.counted}  # fmt: skip


def tamper(patch: str, globs: tuple[str, ...], at_base: set[str], allow: bool) -> Tamper:
    tests = [p for p in touched(patch) if is_test_path(p, globs)]
    if allow:
        return Tamper(tests, counted=bool(tests))
    return Tamper(tests, [p for p in tests if p in at_base], [p for p in tests if p not in at_base])


def nul_list(paths: list[str]) -> bytes:
    return b"".join(p.encode() + b"\0" for p in paths)


@dataclass(slots=True)
class Judgement:
    resolved: bool
    fail_to_pass: dict[str, str]
    pass_to_pass: dict[str, str]


def judge(verdicts: Verdicts, f2p: list[str], p2p: list[str], exit_code: int | None) -> Judgement:
    """Every F2P and P2P test passed (a test no report has is "missing", not passed); with no
    test named, the run's exit status and every reported test."""
    f = {t: verdicts.status(t) for t in f2p}
    p = {t: verdicts.status(t) for t in p2p}
    if f2p or p2p:
        ok = all(s == "passed" for s in (*f.values(), *p.values()))
    else:
        bad = {"failed", "error"}
        ok = exit_code == 0 and not any(s in bad for s in verdicts.tests.values())
    return Judgement(ok, f, p)
