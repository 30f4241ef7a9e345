"""The server's logs: one line per record on stderr, JSON or text.

`log_format = "auto"` writes text when stderr is a terminal (a person is reading) and JSON
lines otherwise (a collector is). Every record written while a request is served carries that
request's ID; an access-log record carries its fields (see `access.py`) at the top level of
its JSON object.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from sandlot import events

_FIELDS = ("language", "verdict", "limit", "queue_ms", "run_ms", "bytes_in", "bytes_out")


class _RequestId(logging.Filter):
    """Stamps each record with the ID of the request being served, if there is one."""

    def __init__(self, worker: int | None) -> None:
        super().__init__()
        self.worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            current = events.CURRENT.get()
            record.request_id = current.id if current is not None else None
        record.worker = self.worker
        return True


def _when(record: logging.LogRecord) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{stamp}.{int(record.msecs):03d}Z"


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": _when(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("request_id", "worker"):
            if getattr(record, key, None) is not None:
                line[key] = getattr(record, key)
        line.update(getattr(record, "access", None) or {})
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        head = f"{_when(record)} {record.levelname:<7} {record.name}"
        worker = getattr(record, "worker", None)
        head += f"[{worker}]" if worker is not None else ""
        text = f"{head} {record.getMessage()}" + (f" [{rid}]" if rid else "")
        access = getattr(record, "access", None)
        if access:
            shown = " ".join(f"{k}={access[k]}" for k in _FIELDS if access.get(k) is not None)
            text += f" {access['duration_ms']:.1f}ms {shown}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup(log_format: str, level: str, worker: int | None = None) -> None:
    """Route sandlot's and uvicorn's loggers to stderr in the chosen format."""
    if log_format == "auto":
        log_format = "text" if os.isatty(sys.stderr.fileno()) else "json"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(_RequestId(worker))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
