"""What a tool gives back: text that reads well in a transcript, the structured result beside it,
files as embedded resources, and failures as tool errors that say what to change.

A model reads the text; a program reads the structured content (the same shape the HTTP API
answers with, where there is one). Long text is cut in both, with a note saying how much was
cut and how to get the rest, so one noisy run does not flood a context window.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

from sandlot.errors import SandlotError

TEXT_CHARS = 20_000  # of one stream in a result; the rest is cut, with a note
FILE_URI = "sandlot://{where}/{path}"


def clip(text: str | None, what: str, notes: list[str], limit: int = TEXT_CHARS) -> str:
    """`text` cut to `limit` characters (head and tail kept), with a note of what was cut."""
    text = text or ""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    notes.append(
        f"{what} was {len(text):,} characters; {cut:,} in the middle were cut (write it to a "
        "file and download it, or print less, to see all of it)"
    )
    head = limit * 3 // 4
    return f"{text[:head]}\n[... {cut:,} characters cut ...]\n{text[len(text) - (limit - head) :]}"


def file_blocks(files: Mapping[str, bytes], where: str) -> list[ContentBlock]:
    """Files as embedded resources: text when it is UTF-8, else a blob (base64 once, in the
    resource, never in the transcript's text)."""
    blocks: list[ContentBlock] = []
    for path, data in files.items():
        uri = FILE_URI.format(where=where, path=path.lstrip("/"))
        resource: TextResourceContents | BlobResourceContents
        try:
            resource = TextResourceContents(uri=uri, text=data.decode(), mime_type="text/plain")
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode()
            resource = BlobResourceContents(
                uri=uri, blob=blob, mime_type="application/octet-stream"
            )
        blocks.append(EmbeddedResource(type="resource", resource=resource))
    return blocks


def result(
    text: str,
    structured: BaseModel | Mapping[str, Any],
    notes: list[str] = (),  # type: ignore[assignment]
    extra: list[ContentBlock] = (),  # type: ignore[assignment]
    error: bool = False,
) -> CallToolResult:
    """One tool result: the text (then the notes), extra blocks, and the structured content."""
    data = (
        structured.model_dump(mode="json")
        if isinstance(structured, BaseModel)
        else dict(structured)
    )
    if notes:
        data["notes"] = list(notes)
        text = text.rstrip("\n") + "\n" + "\n".join(f"note: {n}" for n in notes)
    content: list[ContentBlock] = [TextContent(type="text", text=text), *extra]
    return CallToolResult(content=content, structured_content=data, is_error=error)


def section(title: str, body: str) -> str:
    """A titled block of output for the text, or nothing when it is empty."""
    if not body:
        return ""
    return f"--- {title} ---\n{body}{'' if body.endswith(chr(10)) else chr(10)}"


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """sandlot's errors as tool errors, their message (what to change) kept; anything else is
    the SDK's: logged here, a generic error there (no traceback reaches the client)."""
    try:
        yield
    except SandlotError as exc:
        raise ToolError(str(exc)) from exc
