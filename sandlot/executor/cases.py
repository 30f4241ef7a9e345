"""Compile once, run these cases: what a caller hands the executor's one mechanism for it.

`/run_code` test cases, `/run_batch` and the judge's stdin problems are all items of runs: an
item is a program, compiled once (through the compile cache), and each of its runs is one box
over that build with its own stdin, and its own program text when it has one. Every item of a
request is checked before anything runs, and all its runs take turns in one admission lane
(admission.py), whatever their number. Each run's outcome goes to the caller's `OnRun` as soon
as it ends: the caller judges it and keeps what it needs, so 10,000 cases are never held as
10,000 outputs, and its verdict can stop an item at its first failure. A sealed run (seal.py)
hands `OnRun` its seal's payload too, None when it wrote none (its tests did not run to their
end), and says that it was sealed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sandlot.executor.guards import Seal
from sandlot.jail import Outcome

if TYPE_CHECKING:
    from sandlot.executor.runner import CodeRequest


@dataclass(frozen=True, slots=True)
class Run:
    """One run of an item's program: its stdin, and its own program text when it has one (the
    item's code with an assert appended, a harness around it) with the files beside it (the
    answer's own, under a harness). A run with a `seal` (or of a test framework's row) is
    sealed; `case` is an expression test case its driver judges."""

    stdin: bytes = b""
    code: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    fetch: tuple[str, ...] = ()
    seal: Seal | None = None
    case: tuple[str, str] | None = None


@dataclass(slots=True)
class Item:
    request: CodeRequest
    runs: list[Run]


@dataclass(slots=True)
class ItemOutcome:
    """How an item went, beyond its runs' outcomes (those went to `OnRun`)."""

    compile: Outcome | None = None
    cached: bool = False
    error: str | None = None  # the sandbox could not serve this item (never the program's fault)
    stopped: bool = False  # no more runs: the build failed, or a run failed and we stop at one
    ran: int = 0


# (item index, run index, outcome, its seal's payload, whether it was sealed) -> whether it passed
OnRun = Callable[[int, int, Outcome, bytes | None, bool], Awaitable[bool]]
