"""Which language rows a run of setup works on, and which rows a step is for."""

from __future__ import annotations

from collections.abc import Iterable

from sandlot.languages import LANGUAGES, Language, Registry


def select_rows(languages: list[str] | None, runtime_dir: str) -> tuple[Language, ...]:
    if languages is None:
        return LANGUAGES
    registry = Registry(LANGUAGES, runtime_dir)
    names = unique(registry.get(name).name for name in languages)  # resolves aliases
    return tuple(registry.rows[name] for name in names)


def rows_with(field: str, item: str | None = None) -> frozenset[str]:
    """Rows whose `field` is set (or, given `item`, holds it)."""
    return frozenset(
        row.name
        for row in LANGUAGES
        if (item in getattr(row, field) if item is not None else getattr(row, field))
    )


def rows_using(path: str) -> frozenset[str]:
    """Rows whose argv, binds or requires mention a path of the runtime dir."""
    return frozenset(
        row.name
        for row in LANGUAGES
        if any(path in part for part in (*row.requires, *row.binds, *(row.compile or ())))
    )


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
