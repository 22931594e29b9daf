"""What one check looks at (`CheckInputs`), and the session contexts it is evaluated in.

compiler/check/build.py builds it (from what profilec compiled, or from a foreign config stack);
compiler/check/checker.py runs the check over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..codex.resolve import PLACEHOLDER_CWD, EvalContext, session_contexts
from ..models.compiled import ResolvedRoot
from .configstack import ConfigStack


@dataclass(frozen=True, slots=True)
class CheckInputs:
    """Everything one check looks at."""

    stack: ConfigStack
    mode_map: Mapping[str, str]
    roots: tuple[ResolvedRoot, ...]
    workspace_roots: tuple[str, ...] = ()
    codex_home: str | None = None
    codex_home_holders: tuple[str, ...] = ()
    session_raw: Mapping[str, Any] | None = None
    session_file: str | None = None
    manifest_file: str | None = None
    home: str | None = None
    tmpdir: str | None = None
    #: The trusted base a compiled bundle carries (empty for a foreign config).
    trusted_base: tuple[Any, ...] = ()
    #: The session cwd as the launcher spells it (`check --cwd`); None: each workspace root.
    cwd: str | None = None
    #: The session allow-list of the run's policy directory (None: the shipped one).
    allowlist: Any = None
    #: The reviewed parent policy the stack must keep in force (profiles/parent.toml).
    parent: tuple[Any, ...] = ()


def launch_context_line(inp: CheckInputs) -> str:
    """The launch context every report prints: `~`, `:tmpdir` and the cwd decide access."""
    if inp.cwd:
        cwd = inp.cwd
    elif inp.workspace_roots:
        cwd = "each workspace root in turn"
    else:
        cwd = f"{PLACEHOLDER_CWD} (placeholder: no workspace root, no --cwd)"
    tmp = inp.tmpdir or "(unset: :tmpdir covers nothing; Codex's temp dir is /tmp)"
    return f"launch context: cwd {cwd}; HOME {inp.home or '(unset)'}; TMPDIR {tmp}"


def contexts(inp: CheckInputs) -> list[EvalContext]:
    """One evaluation context per possible session cwd (--cwd, else each workspace root)."""
    return session_contexts(
        inp.workspace_roots, cwd=inp.cwd or None, tmpdir=inp.tmpdir, home=inp.home
    )
