"""The project roots Codex keys trust by, and the paths a launch marks untrusted.

Kept apart from compiler/session.py (the session-config allow-list, its tables and its
dataclasses) so that every compile, which marks its workspace roots untrusted, does not import
the session sanitizer unless a session config is given.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


def project_root(path: str) -> str | None:
    """The nearest ancestor of `path` (itself included) holding `.git`: the project root Codex
    0.171.0 keys trust by (its default project_root_markers). lstat only; None if there is none.
    """
    cur = path
    while True:
        try:
            os.lstat(os.path.join(cur, ".git"))
            return cur
        except OSError:
            pass
        if cur == "/":
            return None
        cur = os.path.dirname(cur)


def untrusted_project_paths(given: Sequence[str], canonical: Sequence[str]) -> tuple[str, ...]:
    """Every path a launch must mark untrusted: each workspace root as given and canonical, and
    the project root above its canonical path (measured on 0.171.0: Codex resolves the cwd, and a
    trusted entry for the repository root loaded the project's config for a cwd under it even
    when the cwd itself had an untrusted entry)."""
    out: set[str] = {*given, *canonical}
    for r in canonical:
        top = project_root(r)
        if top is not None:
            out.add(top)
    return tuple(sorted(out))
