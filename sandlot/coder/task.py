"""What a coding task asks for and what it gives back: plain records, and every default and bound
of a task defined once here (the CLI's options, the HTTP request model and the loop read them).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field

PASSED, FAILED_TESTS, NO_CHANGES = "passed", "failed_tests", "no_changes"
LLM_ERROR, TIMEOUT, ANSWERED = "llm_error", "timeout", "answered"

ATTEMPTS, MAX_ATTEMPTS = 2, 10  # edit + test rounds
ATTEMPT_TIMEOUT, MAX_ATTEMPT_TIMEOUT = 600.0, 3600.0  # seconds per Aider attempt
TEST_TIMEOUT = 120.0  # seconds per test run (the server's max_run_timeout bounds it)
LLM_GRACE, MAX_LLM_GRACE = 20.0, 600.0  # seconds Aider may retry a failing model


@dataclass(slots=True)
class CodeTask:
    repo: str
    message: str
    files: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    model: str | None = None
    edit_format: str | None = None
    test_cmd: str | None = None
    max_attempts: int = ATTEMPTS
    ask: bool = False
    apply: bool = False
    allow_dirty: bool = False
    aider_config: bool = False  # honour .aider.conf.yml (the repo's and ~/.aider.conf.yml)
    attempt_timeout: float = ATTEMPT_TIMEOUT
    test_timeout: float | None = TEST_TIMEOUT  # None: TEST_TIMEOUT or the server's maximum
    llm_grace: float = LLM_GRACE
    keep_worktree: bool = False
    stream: bool = False
    cancel: threading.Event | None = None  # set: stop now (its caller went away), leave nothing
    # The phases (sandlot/repos): a setup command ("auto", or the repository's own) makes the
    # task set its environment up once (cached), Aider work on the base's history alone, each
    # test run use that environment, and the result be proved against the base's tests.
    setup: str | None = None
    allow_test_changes: bool = False  # the proof grades Aider's test edits as they are
    tenant: str = "local"  # whose the environment is (sandlot.tenancy: a server's request's)


@dataclass(slots=True)
class Attempt:
    number: int
    seconds: float
    edited: list[str]
    commit: str | None
    tests: dict[str, object] | None = None
    llm_error: str | None = None
    stopped_for_llm: bool = False  # we ended aider `llm_grace` after the model failed
    log_tail: str = ""  # the end of what aider printed (the model's reply, applied edits)


@dataclass(slots=True)
class CodeResult:
    status: str
    message: str
    branch: str | None = None
    base: str | None = None
    head: str | None = None
    diff: str = ""
    files_changed: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    applied: bool = False
    model: str = ""
    test_cmd: str | None = None
    worktree: str | None = None
    answer: str | None = None
    log_tail: str = ""
    # With a setup: the final diff graded in a fresh box against the base's tests (the grade's
    # result: resolved, tamper with the test files Aider changed and whether they counted).
    proof: dict[str, object] | None = None

    @property
    def ok(self) -> bool:
        return self.status in (PASSED, ANSWERED)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)
