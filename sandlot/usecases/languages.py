"""The languages table as the faces read it: the names a request may give (the OpenAPI schema's
enums), the row a name picks and the language a file's suffix says (`sandlot run`), and every
row with its toolchain's status (`sandlot languages`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from sandlot.languages import Language
    from sandlot.service import Service


def language_names(service: Service) -> list[str]:
    """Every name and alias a run may give, sorted."""
    return sorted(service.registry.names)


def session_language_names(service: Service) -> list[str]:
    """The names (and aliases) of the languages a session can be, sorted."""
    from sandlot.sessions import LANGUAGES

    return sorted(k for k, row in service.registry.names.items() if row in LANGUAGES)


def language_row(service: Service, name: str) -> Language:
    """The row a name or alias picks; UnknownLanguage (with the known ones) if none."""
    return service.registry.get(name)


def language_of_file(service: Service, file: Path) -> str | None:
    """The language whose source file or extra suffixes end as `file` does, if one does."""
    from pathlib import Path

    for row in service.registry.rows.values():
        if file.suffix in (Path(row.source).suffix, *row.suffixes):
            return row.name
    return None


def probed_languages(service: Service) -> list[dict[str, Any]]:
    """Every row with its status, after probing the toolchains: for a command that asks without
    starting the service (which probes at start)."""
    service.registry.probe()
    return service.languages()
