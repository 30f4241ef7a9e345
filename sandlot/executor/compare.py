"""Output comparison for stdin/stdout tests: the one place that says whether a program's output
matches the expected one (`/run_code` test cases and the judge's checkers both use it).

Built-in: exact bytes; `lines` (trailing spaces on each line and trailing blank lines ignored:
what `/run_code` stdin cases use); whitespace-tolerant (tokens per line, trailing blank lines
ignored); case-tolerant; float tolerance (absolute and relative) on numeric tokens;
`sandboxfusion` (its CommonOJ rule: per line, case-insensitive, relative 1e-5); `verl` (exact
but for trailing newlines, as verl's sandbox_fusion reward compares). A `custom`
checker is a program in any language that the judge runs in the jail, testlib-style: it reads
`input.txt`, `output.txt` (the program's) and `answer.txt` (expected) from its work dir and exits
0 to accept.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sandlot.errors import InvalidRequest

MODES = ("exact", "lines", "whitespace", "case", "float", "sandboxfusion", "verl", "custom")


@dataclass(frozen=True, slots=True)
class Checker:
    mode: str = "whitespace"
    ignore_case: bool = False
    abs_tol: float | None = None
    rel_tol: float | None = None
    code: str | None = None  # the custom checker's source
    language: str = "python"
    # a tolerance for real numbers only: two integers are equal only when they are (the
    # SandboxFusion rule alone takes 903952722 for 903952723, a relative 1e-9 apart)
    exact_integers: bool = False

    @classmethod
    def parse(cls, spec: object, strict: bool = False) -> Checker:
        """From a config value: a mode name, or {"mode", "abs_tol", "rel_tol", "code", ...}.
        `strict`: a mode's own tolerance is for real numbers only; one the spec sets is as set."""
        if spec is None:
            return cls()
        if isinstance(spec, str):
            spec = {"mode": spec}
        if not isinstance(spec, dict):
            raise InvalidRequest("checker must be a mode name or an object with 'mode'")
        mode = spec.get("mode") or ("custom" if spec.get("code") else "whitespace")
        if mode not in MODES:
            raise InvalidRequest(f"unknown checker {mode!r}; use one of: {', '.join(MODES)}")
        if mode == "custom" and not isinstance(spec.get("code"), str):
            raise InvalidRequest("a custom checker needs 'code' (and 'language', default python)")
        try:
            abs_tol = _num(spec.get("abs_tol", 1e-6 if mode == "float" else None))
            rel_tol = _num(spec.get("rel_tol", 1e-6 if mode == "float" else None))
        except (TypeError, ValueError):
            raise InvalidRequest("checker abs_tol and rel_tol must be numbers") from None
        if mode == "sandboxfusion":
            rel_tol = rel_tol if rel_tol is not None else 1e-5
        return cls(
            mode=mode,
            ignore_case=mode in ("case", "sandboxfusion") or bool(spec.get("ignore_case")),
            abs_tol=abs_tol,
            rel_tol=rel_tol,
            code=spec.get("code"),
            language=spec.get("language") or "python",
            exact_integers=strict and "abs_tol" not in spec and "rel_tol" not in spec,
        )

    def compare(self, actual: str, expected: str) -> tuple[bool, str | None]:
        """Whether `actual` is accepted for `expected`, and if not, where they first differ."""
        if self.mode == "exact":
            return (True, None) if actual == expected else (False, "output differs (exact)")
        if self.mode == "verl":
            same = actual.rstrip("\n") == expected.rstrip("\n")
            return (True, None) if same else (False, "output differs (exact, as verl compares)")
        got, want = _lines(actual, self.mode), _lines(expected, self.mode)
        if len(got) != len(want):
            return False, f"expected {len(want)} line(s), got {len(got)}"
        for n, (g, w) in enumerate(zip(got, want, strict=True), 1):
            if len(g) != len(w):
                return False, f"line {n}: expected {len(w)} token(s), got {len(g)}"
            for a, b in zip(g, w, strict=True):
                if not self._token_equal(a, b):
                    return False, f"line {n}: expected {_short(b)}, got {_short(a)}"
        return True, None

    def _token_equal(self, a: str, b: str) -> bool:
        if a == b or (self.ignore_case and a.lower() == b.lower()):
            return True
        if self.abs_tol is None and self.rel_tol is None:
            return False
        if self.exact_integers:
            m, n = _integer(a), _integer(b)
            if m is not None and n is not None:
                return m == n
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return math.isclose(x, y, rel_tol=self.rel_tol or 0.0, abs_tol=self.abs_tol or 0.0)


def _num(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


_INTEGER = re.compile(r"([+-]?)0*([0-9]+)")


def _integer(token: str) -> str | None:
    """An integer token's value as text (no int(): a token may have a million digits)."""
    found = _INTEGER.fullmatch(token)
    if found is None:
        return None
    sign, digits = found.groups()
    return ("-" if sign == "-" and digits != "0" else "") + digits


def _lines(text: str, mode: str) -> list[list[str]]:
    lines = text.replace("\r\n", "\n").split("\n")
    # SandboxFusion compares whole stripped lines, `lines` whole right-stripped ones; the other
    # modes compare tokens.
    if mode == "lines":
        tokens = [[ln.rstrip()] for ln in lines]
    else:
        tokens = [[ln.strip()] if mode == "sandboxfusion" else ln.split() for ln in lines]
    while tokens and not any(tokens[-1]):
        tokens.pop()
    if mode == "sandboxfusion":
        tokens = [t if t != [""] else [] for t in tokens]
        while tokens and not tokens[0]:
            tokens.pop(0)
    return tokens


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
