"""Literal paths stay literal: the Codex key for a compiled entry's path, or a refusal (exit 5).

Measured on codex 0.171.0 (`codex sandbox`, docs/codex-semantics.md "Glob characters"): a key
holding none of `* ? [ ]` is matched literally, whatever else it holds (`\\`, `{`, `}`,
spaces). A key holding one of them is a deny glob, in which `\\` escapes the next character
and `{a,b}` is an alternation; a glob supports only `deny`, and masks only an existing regular
file at sandbox start (not a directory, not a socket, not a file created later). So a path with
a glob character can be emitted only as an escaped deny on an existing regular file; every
other entry holding one is refused, naming the character.

The escape itself is `profilec.codex.globs.escape_literal` (the evaluator models what it matches).
"""

from __future__ import annotations

from .codex.globs import escape_literal
from .codex.vocabulary import Access
from .errors import UnsafeRootError

#: The characters that turn a Codex filesystem key into a glob.
GLOB_CHARS = "*?[]"


def glob_char(path: str) -> str | None:
    """The first character of `path` that makes Codex read it as a glob, or None."""
    for ch in path:
        if ch in GLOB_CHARS:
            return ch
    return None


def refusal(path: str, ch: str, why: str) -> UnsafeRootError:
    """The exit-5 error for a path Codex cannot be made to match literally."""
    return UnsafeRootError(
        f"path {path} holds {ch!r}, which Codex reads as a glob character; {why}",
        where="literal paths",
        hint="rename the directory or file so its path holds none of * ? [ ]",
    )


def literal_key(path: str, access: Access) -> str:
    """The key that makes Codex match exactly `path`; UnsafeRootError when none does.

    Compile has already refused glob characters in every entry that is not a deny on an
    existing regular file (a glob masks nothing else), so here only the escape can fail.
    """
    ch = glob_char(path)
    if ch is None:
        return path  # the common case: no glob character, Codex matches it as written
    key = escape_literal(path, access=access)
    if key is None:
        raise refusal(path, ch, "no escape makes Codex match exactly this name")
    return key
