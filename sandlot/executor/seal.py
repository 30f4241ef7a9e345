"""The proof that a program's tests ran to their end, which the program under test cannot forge.

A sealed run gets a fresh secret (`new`) in `SEAL_FILE`, in the run step only: never in the compile
step (builds stay the same from one submission to the next, so the compile cache hits), in argv or
in the environment. The run's guard (the Python or JavaScript driver, a test framework's listener,
or statements the judge puts around a test's main) reads the file and removes it before any code
under test runs, and when the tests have passed writes a frame to stdout:

    SECRET PAYLOAD SECRET

Only a frame with this run's secret counts; it is cut out of the stdout the caller sees. What the
code under test can read or write (its files, the work dir, its environment, argv, stdout) holds
no secret by the time it runs, so it cannot print one, and exiting early (`sys.exit(0)`,
`os._exit(0)`, `System.exit(0)` in a static block, `exit(0)` in a destructor) leaves no frame.
What it can still do is reach into its own process (frames, gc, reflection, `/proc/self/mem`),
which no guard inside that process can stop: docs/integrity.md says so, with the tests that show it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

SEAL_FILE = ".sandlot_seal"
SECRET_BYTES = 16  # 32 hex digits: never guessed, never found in a program's own output


def new() -> bytes:
    return secrets.token_hex(SECRET_BYTES).encode()


@dataclass(frozen=True, slots=True)
class Opened:
    payload: bytes | None  # None: no frame with the secret (the tests did not end, or failed)
    stdout: bytes  # the run's stdout without the frame


def open_frame(stdout: bytes, secret: bytes) -> Opened:
    """The payload of the last frame sealed with `secret`, and stdout without it."""
    end = stdout.rfind(secret)
    start = stdout.rfind(secret, 0, end) if end > 0 else -1
    if start < 0:
        return Opened(None, stdout)
    stop = end + len(secret)
    if stdout[stop : stop + 1] == b"\n":
        stop += 1
    return Opened(stdout[start + len(secret) : end], stdout[:start] + stdout[stop:])


def counts(payload: bytes) -> dict[str, int]:
    """A framework guard's `passed=N failed=N skipped=N` payload as numbers (absent: {})."""
    out = {}
    for part in payload.decode(errors="replace").split():
        key, _, value = part.partition("=")
        if value.isdigit():
            out[key] = int(value)
    return out
