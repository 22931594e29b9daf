"""JSON-RPC 2.0 framing: one JSON object per b"\\n"-ended line, as ACP and `codex app-server`
speak it. The e2e client (compiler/e2e/jsonrpc.py) and `profilec run`'s relay
(compiler/run/relay.py) both frame with this module, so they split and encode alike.

Messages are split on b"\\n" only (never splitlines: a U+2028 inside a JSON string is data);
`encode` writes compact JSON with the newline, non-ASCII as is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

#: The JSON-RPC error codes profilec sends.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    """A JSON-RPC error object (from the peer, or raised by a handler to answer with one)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__(f"{code}: {message}")

    def object(self) -> dict[str, Any]:
        """The `error` member of a response carrying this error."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class FramingError(ValueError):
    """A line that is not one JSON object (the text is kept, cut to 500 characters)."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as its line: compact JSON and b"\\n"."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def decode(raw: bytes) -> dict[str, Any] | None:
    """The message on one line (without its b"\\n"); None for a blank line; FramingError when
    the line is not one JSON object."""
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return None
    try:
        msg = json.loads(text)
    except json.JSONDecodeError:
        raise FramingError(text[:500]) from None
    if not isinstance(msg, dict):
        raise FramingError(text[:500])
    return msg


def error_response(rid: Any, error: RpcError) -> dict[str, Any]:
    """The response to request `rid` carrying `error`."""
    return {"jsonrpc": "2.0", "id": rid, "error": error.object()}


def read_lines(fd: int, on_line: Callable[[bytes], None]) -> None:
    """Read `fd` until end of file, calling `on_line` with each line (its b"\\n" dropped); a
    last line without one is delivered too. A read error counts as the end."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line, buf = buf[:nl], buf[nl + 1 :]
            on_line(line)
    if buf.strip():
        on_line(buf)
