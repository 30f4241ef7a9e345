"""What every step of `sandlot setup` works on, is described by and raises."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandlot.errors import SandlotError
from sandlot.install.sets import Mirrors
from sandlot.languages import Language

MIRRORS_DEFAULT = Mirrors()  # every tool's own default registry


class SetupError(SandlotError):
    """A set-up step failed; the message names the step and shows the failing command's output."""


@dataclass(frozen=True, slots=True)
class Setup:
    """What one `install()` call works on."""

    runtime: Path
    rows: tuple[Language, ...]
    log: Callable[[str], None]
    mirrors: Mirrors = MIRRORS_DEFAULT

    def names(self) -> set[str]:
        return {row.name for row in self.rows}


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    needed_by: frozenset[str] | None  # language rows that need it; None: always
    ensure: Callable[[Setup], str]  # does what is missing; returns what it did
