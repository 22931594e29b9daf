"""Minimal, exact TOML text for the values profilec emits (strings, bools, ints, tables).

Written by hand rather than through tomlkit's document model because tomlkit's inline tables
grow quadratically with their size (28 s for 3,000 roots); tests round-trip every output
through tomllib, including paths with quotes, backslashes, `#`, `=`, dots and non-ASCII.
"""

from __future__ import annotations

import re
from typing import Any

#: Characters `string` must escape; a value without any is emitted as is (the common case).
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f\x7f"\\]')
#: A bare TOML key: one or more ASCII letters, digits, `-` or `_`.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def string(value: str) -> str:
    """A TOML basic string; control characters and DEL are escaped."""
    if _NEEDS_ESCAPE.search(value) is None:
        return '"' + value + '"'
    out = ['"']
    for ch in value:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def key(name: str) -> str:
    """A bare key when it is one, else a quoted key."""
    if _BARE_KEY.fullmatch(name) is not None:
        return name
    return string(name)


def value(v: Any) -> str:
    """Any emitted value; dicts become inline tables (single line)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, dict):
        return inline(v)
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TypeError(f"cannot emit {type(v).__name__} as TOML")


def inline(table: dict[str, Any]) -> str:
    """A single-line inline table, keys in the given order."""
    if not table:
        return "{}"
    return "{ " + ", ".join(f"{key(k)} = {value(v)}" for k, v in table.items()) + " }"
