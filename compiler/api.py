"""The library path: what the CLI and an embedding daemon call.

`load_and_compile` does the edge work (trust check, lstat/readlink, policy read) and then calls
the pure `compile_bundle`; a daemon that already holds validated models calls that directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .compile import compile_bundle
from .errors import InputError, UsageError
from .mcp import load_vouched_mcp
from .models import LaunchLayout, TrustedPath
from .paths import check_absolute, parent
from .policy import load_policy
from .roots import (
    load_manifest,
    resolve_home,
    resolve_roots,
    resolve_trusted_base_fields,
    resolve_workspace_roots,
)
from .session import load_session_config, untrusted_project_paths

if TYPE_CHECKING:
    from .models import CompiledBundle, ResolvedRoot


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
    tmpdir: str | None = None,
    home: str | None = None,
    vouched_mcp_path: str | None = None,
) -> CompiledBundle:
    """Read every input at the edge, then compile; raises ProfilecError subclasses only.

    `home` is HOME of the session's commands, when the launcher sets one: no vault may hold it.
    """
    return _pipeline(
        roots_path,
        profiles_dir,
        workspace_roots,
        codex_home,
        session_config_path,
        tmpdir=tmpdir,
        home=home,
        vouched_mcp_path=vouched_mcp_path,
    )


def _pipeline(
    roots_path: str,
    profiles_dir: str | None,
    workspace_roots: Sequence[str],
    codex_home: str | None,
    session_config_path: str | None,
    *,
    tmpdir: str | None = None,
    home: str | None = None,
    vouched_mcp_path: str | None = None,
) -> CompiledBundle:
    """The one edge pipeline: read and resolve every input, then compile."""
    manifest = load_manifest(roots_path)
    policy = load_policy(profiles_dir)
    ws = tuple(workspace_roots)
    canonical_ws = resolve_workspace_roots(ws)
    check_ws = tuple(dict.fromkeys([*ws, *canonical_ws]))
    roots = resolve_roots(manifest, check_ws)
    home_path = codex_home or default_codex_home(roots)
    resolved_home = resolve_home(home_path) if home_path else None
    if home is not None:
        check_absolute(home, what="--home", error=InputError)
    tb_fields = resolve_trusted_base_fields(policy.trusted_base, manifest.trusted_base)
    trusted = tuple(TrustedPath(**f) for f in tb_fields)
    session: dict[str, Any] | None = None
    stripped: tuple[str, ...] = ()
    classes: dict[str, str] = {}
    if session_config_path:
        session, cut = load_session_config(session_config_path, profiles_dir)
        stripped = tuple(s.path for s in cut)
        classes = {s.path: s.cls for s in cut}
    vouched = load_vouched_mcp(vouched_mcp_path) if vouched_mcp_path else None
    # The canonical spellings: a writable root (or cwd) spelled through a symlink drops every
    # deny under its real location in Codex 0.171.0, so compile emits only real paths.
    # TMPDIR canonical too: `:tmpdir` is a writable root in agent mode.
    tmp = resolve_workspace_roots([tmpdir])[0] if tmpdir else None
    layout = LaunchLayout(workspace_roots=canonical_ws, codex_home=home_path, home=home, tmpdir=tmp)
    return compile_bundle(
        roots,
        policy,
        layout,
        resolved_home,
        session_config=session,
        stripped_session_keys=stripped,
        stripped_session_classes=classes,
        vouched_mcp=vouched,
        untrusted_projects=untrusted_project_paths(ws, canonical_ws),
        trusted_base=trusted,
    )
