"""Shell quoting for rendered command lines: every word single-quoted, POSIX (dash and bash)."""

from __future__ import annotations

from collections.abc import Sequence


def quote(word: str) -> str:
    """Single-quote one word always (even a plain one), so no word is ever re-split or expanded."""
    if "\x00" in word:
        raise ValueError("a shell word cannot hold a NUL byte")
    return "'" + word.replace("'", "'\"'\"'") + "'"


def line(argv: Sequence[str]) -> str:
    """One shell line whose words are exactly `argv`."""
    return " ".join(quote(w) for w in argv)
