"""The framing between the server and a session's agent: a 4-byte big-endian length, then that
many bytes of UTF-8 JSON holding one object. Server to agent: ops (`execute`, `interrupt`,
`restart`, and a snapshot's `save`, `load`, `rebase`); agent to server: events (`ready`,
`stdout`, `stderr`, `display_data`, `execute_result`, `error`, `end`, `restarted`, and `saved`,
`loaded`, `rebased`). Standard library only: the agent imports it too.
"""

import json
import struct

HEADER = struct.Struct(">I")
# The largest event the agent sends: one output chunk or one image. The server refuses more.
MAX_FRAME = 16 << 20
# The largest op the server sends: code at the server's size limit, escaped as JSON.
MAX_OP = 64 << 20
# Where the agent keeps its own files in the box (the kernel's connection file, a shell's cell).
PRIVATE = "/tmp/.sandlot-agent"
# Where a snapshot's state (a kernel's names, a shell's environment) is written in the work dir,
# so that the snapshot's layer holds it; a session that reads it back removes it at once.
STATE = "/sandbox/.sandlot-state"


def encode(message: dict) -> bytes:
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    return HEADER.pack(len(body)) + body
