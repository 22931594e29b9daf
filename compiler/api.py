"""The library path: what the CLI and an embedding daemon call.

`load_and_compile` does the edge work (trust check, lstat/readlink, policy read) and then calls
the pure `compile_bundle`; a daemon that already holds validated models calls that directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .compile import compile_bundle
from .errors import UsageError
from .models import CompiledBundle, LaunchLayout, ResolvedHome, ResolvedRoot
from .paths import parent
from .policy import load_policy
from .roots import load_manifest, resolve_home, resolve_roots, resolve_workspace_roots
from .session import load_session_config


def default_codex_home(roots: Sequence[ResolvedRoot]) -> str | None:
    """The directory holding a codex root's link (backend or id `codex`), if exactly one."""
    homes = sorted({parent(r.path) for r in roots if r.backend == "codex" or r.id == "codex"})
    if len(homes) > 1:
        raise UsageError(
            f"codex roots live in several directories ({', '.join(homes)}); pass --codex-home"
        )
    return homes[0] if homes else None


def load_and_compile(
    roots_path: str,
    *,
    profiles_dir: str | None = None,
    workspace_roots: Sequence[str] = (),
    codex_home: str | None = None,
    session_config_path: str | None = None,
) -> CompiledBundle:
    """Read every input at the edge, then compile; raises ProfilecError subclasses only."""
    manifest = load_manifest(roots_path)
    policy = load_policy(profiles_dir)
    ws = tuple(workspace_roots)
    canonical_ws = resolve_workspace_roots(ws)
    check_ws = tuple(dict.fromkeys([*ws, *canonical_ws]))
    roots = resolve_roots(manifest, check_ws)
    home_path = codex_home or default_codex_home(roots)
    home: ResolvedHome | None = resolve_home(home_path) if home_path else None
    session: dict[str, Any] | None = None
    stripped: tuple[str, ...] = ()
    if session_config_path:
        session, stripped = load_session_config(session_config_path)
    layout = LaunchLayout(workspace_roots=ws, codex_home=home_path)
    return compile_bundle(
        roots, policy, layout, home, session_config=session, stripped_session_keys=stripped
    )
