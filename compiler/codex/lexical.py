"""Lexical path facts Codex applies before anything else: absolute, normalized, ancestors.

Pure (no I/O). Every other module of the Codex wing builds on these three functions and the
error every Codex-side rejection raises.
"""

from __future__ import annotations

import posixpath

from ..errors import InputError


class EvaluationError(InputError):
    """A profile that Codex itself rejects (message mirrors Codex's own)."""

    kind = "codex-profile"


def ancestors(p: str) -> list[str]:
    """`p` and its ancestors, most specific first, ending with `/`."""
    out = [p]
    while p != "/":
        p = p[: p.rfind("/")] or "/"  # posixpath.dirname for a normalized absolute path
        out.append(p)
    return out


def normalize_abs(path: str, *, what: str = "path") -> str:
    """Lexically normalize an absolute path (`..`, `.`, `//`, trailing `/`), as Codex does."""
    if not path.startswith("/"):
        raise EvaluationError(f"{what} `{path}` must be absolute")
    if path == "/" or (
        "//" not in path
        and not path.endswith(("/", "/.", "/.."))
        and ("/." not in path or ("/./" not in path and "/../" not in path))
    ):
        return path  # already normal: no empty, `.` or `..` segment (`/.git` is), no trailing /
    n = posixpath.normpath(path)
    # POSIX keeps a leading `//`; Codex does not.
    return "/" + n.lstrip("/")


def under(path: str, base: str) -> bool:
    return base == "/" or path == base or path.startswith(base.rstrip("/") + "/")
