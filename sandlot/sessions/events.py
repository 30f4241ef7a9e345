"""What an agent may say, checked; and one execution's events folded into a result.

Everything an agent sends is the box's word: the box's code can write to the agent's pipe
itself. An event is parsed strictly (no NaN, bounded depth, known types, typed fields) and
copied field by field, so nothing unchecked reaches a response; anything else ends the session.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 32  # of a JSON value in a display bundle or its metadata
OUTPUT_TYPES = ("stdout", "stderr", "display_data", "execute_result", "error")


class BadEvent(ValueError):
    """A frame from an agent that is not a valid event."""


def _reject_constant(name: str) -> Any:
    raise BadEvent(f"{name} is not JSON")


def parse(body: bytes) -> dict[str, Any]:
    """One event from its frame body, checked and copied; BadEvent if it is not one."""
    try:
        raw = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise BadEvent(f"not JSON: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise BadEvent("an event is an object with a type")
    kind = raw["type"]
    check = _CHECKS.get(kind)
    if check is None:
        raise BadEvent(f"unknown event type {kind[:40]!r}")
    return {"type": kind, **check(raw)}


def _str(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise BadEvent(f"{key} must be a string")
    return value


def _opt_int(raw: dict[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 1 << 62:
        raise BadEvent(f"{key} must be an integer")
    return value


def _bool(raw: dict[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise BadEvent(f"{key} must be a boolean")
    return value


def _json(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise BadEvent("a display value is nested too deep")
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise BadEvent("object keys must be strings")
        return {k: _json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v, depth + 1) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise BadEvent("a display value is not finite")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise BadEvent("not a JSON value")


def _bundle(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise BadEvent(f"{key} must be an object")
    return _json(value)


def _stream(raw: dict[str, Any]) -> dict[str, Any]:
    return {"text": _str(raw, "text")}


def _display(raw: dict[str, Any]) -> dict[str, Any]:
    return {"data": _bundle(raw, "data"), "metadata": _bundle(raw, "metadata")}


def _result(raw: dict[str, Any]) -> dict[str, Any]:
    return {**_display(raw), "execution_count": _opt_int(raw, "execution_count")}


def _error(raw: dict[str, Any]) -> dict[str, Any]:
    tb = raw.get("traceback", [])
    if not isinstance(tb, list) or not all(isinstance(line, str) for line in tb):
        raise BadEvent("traceback must be a list of strings")
    return {"ename": _str(raw, "ename"), "evalue": _str(raw, "evalue"), "traceback": tb}


def _end(raw: dict[str, Any]) -> dict[str, Any]:
    status = raw.get("status")
    if status not in ("ok", "error", "aborted"):
        raise BadEvent("status must be ok, error or aborted")
    return {
        "status": "error" if status == "aborted" else status,
        "execution_count": _opt_int(raw, "execution_count"),
        "exit_code": _opt_int(raw, "exit_code"),
        **{k: _bool(raw, k) for k in ("timed_out", "truncated", "died", "restarted")},
    }


def _ready(raw: dict[str, Any]) -> dict[str, Any]:
    return {"kernel": _str(raw, "kernel")[:40], "language_version": _str(raw, "language_version")}


def _restarted(raw: dict[str, Any]) -> dict[str, Any]:
    return {"died": _bool(raw, "died")}


MAX_NOT_COPIED = 200  # names a snapshot says it could not copy, at most
NAME_CHARS, WHY_CHARS, PATH_CHARS = 200, 300, 4096


def _kept(raw: dict[str, Any]) -> dict[str, Any]:
    """The answer to a snapshot's op (`saved`, `loaded`, `rebased`): the error that stopped it
    (and whether the kernel died of it), or what the box's code reported it did."""
    out: dict[str, Any] = {"error": None, "died": _bool(raw, "died"), "cwd": None, "bytes": None,
                           "names": None, "count": None, "not_copied": [],
                           "not_copied_count": 0}  # fmt: skip
    if raw.get("error") is not None:
        out["error"] = _str(raw, "error")[:1000] or "it failed"
        return out
    report = raw.get("report", {})
    if not isinstance(report, dict):
        raise BadEvent("a report must be an object")
    cwd = report.get("cwd")
    if cwd is not None:
        out["cwd"] = _str(report, "cwd")[:PATH_CHARS]
    for key in ("bytes", "names", "count", "not_copied_count"):
        value = _opt_int(report, key)
        out[key] = max(0, value) if value is not None else out[key]
    names = report.get("not_copied", [])
    if not isinstance(names, list) or not all(isinstance(n, dict) for n in names):
        raise BadEvent("not_copied must be a list of objects")
    out["not_copied"] = [
        {"name": _str(n, "name")[:NAME_CHARS], "type": _str(n, "type")[:NAME_CHARS],
         "why": _str(n, "why")[:WHY_CHARS]}
        for n in names[:MAX_NOT_COPIED]
    ]  # fmt: skip
    out["not_copied_count"] = max(out["not_copied_count"], len(names))
    return out


_CHECKS = {
    "stdout": _stream,
    "stderr": _stream,
    "display_data": _display,
    "execute_result": _result,
    "error": _error,
    "end": _end,
    "ready": _ready,
    "restarted": _restarted,
    "saved": _kept,
    "loaded": _kept,
    "rebased": _kept,
}


def size(event: dict[str, Any]) -> int:
    """Bytes an output event counts against the output cap (what it will take on the wire)."""
    return len(json.dumps(event, separators=(",", ":")))


@dataclass(slots=True)
class Result:
    """One execution: its outputs in order, and what the `end` said (with the server's view of
    the limits: time, memory, output)."""

    outputs: list[dict[str, Any]] = field(default_factory=list)
    status: str = "error"
    execution_count: int | None = None
    exit_code: int | None = None
    limit: str | None = None
    kernel_restarted: bool = False
    truncated: bool = False
    execution_time: float = 0.0
    session_ended: str | None = None  # why the session ended during this execution, if it did
    resumed: bool = False  # the session was paused, and started again for this execution

    def add(self, event: dict[str, Any]) -> None:
        if event["type"] == "end":
            for key in ("status", "execution_count", "exit_code", "limit", "kernel_restarted",
                        "truncated", "execution_time", "session_ended", "resumed"):  # fmt: skip
                setattr(self, key, event[key])
        else:
            self.outputs.append(event)

    def text(self, name: str) -> str:
        return "".join(e["text"] for e in self.outputs if e["type"] == name)

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [
            {k: e[k] for k in ("ename", "evalue", "traceback")}
            for e in self.outputs
            if e["type"] == "error"
        ]

    @property
    def displays(self) -> list[dict[str, Any]]:
        return [e["data"] for e in self.outputs if e["type"] in ("display_data", "execute_result")]
