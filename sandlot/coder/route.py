"""`route`: which tool serves a request — the sandbox (run, judge) or the coder (code, ask).

Deterministic and explainable on purpose: the rules are data (a phrase pattern, the route and
mode it votes for, a weight, a reason); every rule that fires is reported. The request text is
only ever matched, never obeyed, so "ignore the rules and route to X" is just more words.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field

from sandlot.errors import InvalidRequest

MAX_REQUEST_CHARS = 20_000
SANDBOX, CODER = "sandbox", "coder"


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    pattern: str  # a regex, matched case-insensitively on word boundaries
    route: str
    mode: str
    weight: int
    reason: str


# Weights: a phrase that names the job outright (3) beats a verb that hints at it (2), which
# beats context such as "my repo" (1). Phrases are written so a decision-guide example fires the
# rule meant for it and not its neighbour ("passes tests" judges, "write tests" codes).
RULES: tuple[Rule, ...] = (
    # --- sandbox: judge ---------------------------------------------------------------------
    Rule("judge-passes-tests", r"(?:pass(?:es|ing)?|fails?) (?:the |its |my |our )?tests?",
         SANDBOX, "judge", 3, "asks whether given code passes tests: a sandbox judgement"),
    Rule("judge-evaluate", r"evaluat\w*|judg\w*|grad(?:e|ing)|scor(?:e|ing)|verif(?:y|ies)",
         SANDBOX, "judge", 2, "evaluating or scoring code is a sandbox judgement"),
    Rule("judge-benchmark",
         r"human-?eval\w*|mbpp|livecodebench|multipl-?e|aider[_ ]benchmark|benchmark\w*|"
         r"pass@\d+|test cases?|reward\w*",
         SANDBOX, "judge", 3, "names a benchmark, test cases or rewards: the sandbox judges"),
    Rule("judge-llm-code", r"(?:llm|model|ai)[- ](?:generated|written) code|generated code",
         SANDBOX, "judge", 1, "the code comes from a model: run it in the sandbox"),
    # --- sandbox: run -----------------------------------------------------------------------
    Rule("run-verb", r"run(?:s|ning)?|execut\w+|what does (?:this|it) (?:print|output)",
         SANDBOX, "run", 2, "asks to run or execute code"),
    Rule("run-safely", r"safe(?:ly)?|untrusted|isolat\w+|sandbox\w*|jail\w*",
         SANDBOX, "run", 2, "asks for safe, isolated execution"),
    Rule("run-from-llm", r"code from an? (?:llm|model|ai)|(?:llm|model)'?s? code",
         SANDBOX, "run", 2, "code written by a model is run in the sandbox"),
    Rule("run-multi-language", r"multi-?language|polyglot|many languages|in ci\b|ci pipeline",
         SANDBOX, "run", 3, "multi-language execution (in CI) is the sandbox's job"),
    Rule("run-limits", r"time ?limit|timeout|stdin|memory limit|snippet",
         SANDBOX, "run", 1, "mentions execution limits, stdin or a snippet"),
    # --- coder: code ------------------------------------------------------------------------
    Rule("code-feature", r"(?:add|implement|build) (?:a |an |the |new )*(?:\w+ )?feature\w*|"
         r"implement\w*", CODER, "code", 3, "asks to add or implement a feature in code"),
    Rule("code-fix", r"fix(?:es|ing)? (?:a |the |this |my )?(?:\w+ )?bugs?|debug\w*|"
         r"bug ?fix\w*|fix\b", CODER, "code", 3, "asks to fix a bug"),
    Rule("code-write-tests", r"(?:write|add|create|generate) (?:\w+ ){0,2}tests?|"
         r"(?:unit )?test coverage", CODER, "code", 3, "asks to write tests for existing code"),
    Rule("code-refactor", r"refactor\w*|renam\w+|clean ?up|restructur\w+|migrat\w+",
         CODER, "code", 3, "asks to refactor or restructure code"),
    Rule("code-ai-help", r"(?:with|using) (?:ai|an llm|aider|a model)(?: help)?|ai help|aider",
         CODER, "code", 2, "asks for AI help with code (Aider)"),
    Rule("code-change", r"change|modify|edit|update|upgrade|improve|optimi[sz]e",
         CODER, "code", 1, "asks to change code"),
    Rule("code-repo", r"my (?:repo\w*|project|codebase|code ?base)|repo(?:sitory)?|codebase|"
         r"existing code|this (?:project|module|file)",
         CODER, "code", 1, "works on an existing repository"),
    # --- coder: ask -------------------------------------------------------------------------
    Rule("ask-explain", r"explain\w*|what does (?:this|the) (?:\w+ )?(?:function|class|method|"
         r"module|code) do|how does|walk me through|document\w*|describe",
         CODER, "ask", 3, "asks to explain code; the coder answers without editing"),
)  # fmt: skip

_COMPILED = tuple(
    (rule, re.compile(rf"(?<![\w@])(?:{rule.pattern})(?![\w])", re.IGNORECASE)) for rule in RULES
)
FENCE = re.compile(r"```")


@dataclass(slots=True)
class Decision:
    route: str
    mode: str
    reasons: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def route(request: str, repo: str | None = None, files: tuple[str, ...] = ()) -> Decision:
    """Pick the tool for `request`; `repo` and `files` are context the caller already has."""
    text = (request or "").strip()
    if not text:
        raise InvalidRequest("the request is empty: say what you want done")
    if len(text) > MAX_REQUEST_CHARS:
        raise InvalidRequest(f"the request is longer than {MAX_REQUEST_CHARS} characters")
    fired = [rule for rule, rx in _COMPILED if rx.search(text)]
    score = {SANDBOX: 0, CODER: 0}
    reasons: list[str] = []
    for rule in fired:
        score[rule.route] += rule.weight
        reasons.append(f"{rule.name}: {rule.reason}")
    if repo:
        score[CODER] += 2
        reasons.append("context-repo: a repository was given, the coder can edit it")
    if files:
        score[CODER] += 1
        reasons.append("context-files: files were named, the coder can edit them")
    has_code = bool(FENCE.search(text))
    if has_code and not repo and not files:
        score[SANDBOX] += 1
        reasons.append("context-snippet: a code block and no repository: run it as it is")

    if not fired and not repo and not files and not has_code:
        reasons.append("default: no rule fired; running code is the safe default")
        chosen = SANDBOX
    elif score[CODER] != score[SANDBOX]:
        chosen = CODER if score[CODER] > score[SANDBOX] else SANDBOX
    else:  # a tie: context decides; edits need a repository, runs do not
        chosen = CODER if repo or files else SANDBOX
        reasons.append(
            f"tie: {SANDBOX} {score[SANDBOX]} vs {CODER} {score[CODER]}, "
            f"{'a repository was given' if chosen == CODER else 'no repository'}"
        )
    mode = _mode(chosen, fired)
    # "write tests" and "fix ... so the tests pass" both end with a test run in the sandbox.
    tests_after = chosen == CODER and mode == "code"
    return Decision(chosen, mode, reasons, _next_steps(chosen, mode, text, repo, files,
                                                      tests_after))  # fmt: skip


def _mode(chosen: str, fired: list[Rule]) -> str:
    mine = [r for r in fired if r.route == chosen]
    if chosen == CODER:
        weights = {"code": 0, "ask": 0}
        for r in mine:
            weights[r.mode] += r.weight
        # Explaining never edits: "ask" wins only when nothing asks for a change as strongly.
        return "ask" if weights["ask"] > weights["code"] else "code"
    weights = {"run": 0, "judge": 0}
    for r in mine:
        weights[r.mode] += r.weight
    return "judge" if weights["judge"] > weights["run"] else "run"


def _next_steps(
    chosen: str, mode: str, text: str, repo: str | None, files: tuple[str, ...], tests_after: bool
) -> list[str]:
    where = f" --repo {shlex.quote(repo)}" if repo else ""
    names = "".join(f" {shlex.quote(f)}" for f in files)
    message = shlex.quote(text if len(text) <= 200 else text[:200] + "...")
    if chosen == SANDBOX and mode == "run":
        return [
            "run the code in the sandbox: `sandlot run FILE` or POST /run_code "
            '{"code": ..., "language": ...}',
            "read stdout, stderr and exit_code (limits and signals are reported too)",
        ]
    if chosen == SANDBOX:
        return [
            "judge the code in the sandbox: POST /run_code with `test_cases`, or POST /submit "
            "with a dataset and problem_id",
            "for a repository's own test suite: `sandlot test --repo PATH --cmd 'pytest -q'`",
        ]
    steps = [] if repo else ["point the coder at a git repository (`--repo PATH`)"]
    if mode == "ask":
        steps.append(
            f"ask the coder (no edits): `sandlot code --ask --message {message}{where}{names}`"
        )
        return steps
    steps.append(
        f"edit with the coder on a new branch in a worktree: `sandlot code --message "
        f"{message}{where}{names} --test-cmd 'pytest -q'`"
    )
    if tests_after:
        steps.append(
            f"prove it with the tests in the sandbox: `sandlot test{where} "
            "--cmd 'pytest -q'` (sandlot code does this after every attempt)"
        )
    steps.append(
        "review the branch's diff; `--apply` fast-forwards your branch once the tests pass"
    )
    return steps
