"""The web playground's files: static pages, scripts and styles shipped as package data.

Served by `sandlot/api/playground.py` from the same server and port as the API; the pages call
the API from the browser, with no front-end server and nothing fetched from the internet.
`templates.py` holds what the pages need about each language (editor mode, hello world).
Imports nothing of the server: this is data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

from sandlot.playground.templates import as_json

__all__ = ["StaticFile", "as_json", "static_files"]

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
}


@dataclass(frozen=True, slots=True)
class StaticFile:
    body: bytes
    media_type: str
    etag: str


def static_files() -> dict[str, StaticFile]:
    """Every file under static/ by its path there (e.g. `js/app.js`), read once.

    Only these names are ever served: a request path is a key, never a file system path.
    """
    files: dict[str, StaticFile] = {}
    pending = [("", resources.files(__package__) / "static")]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            name = prefix + entry.name
            if entry.is_dir():
                pending.append((name + "/", entry))
                continue
            media = next((t for s, t in MEDIA_TYPES.items() if entry.name.endswith(s)), None)
            if media is not None:
                body = entry.read_bytes()
                files[name] = StaticFile(body, media, f'"{hashlib.sha256(body).hexdigest()[:32]}"')
    return files
