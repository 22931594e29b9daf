"""The library path: what the CLI and an embedding daemon call.

`load_and_compile` does the edge work (trust check, lstat/readlink, policy read: each input
file read once into compiler/inputs.py's `Inputs`) and then calls the pure `compile_bundle`;
`compile_inputs` compiles an `Inputs` a caller already holds (check, lock, audit share one), and
a daemon that already holds validated models calls `compile_bundle` directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .compile import compile_bundle
from .errors import InputError, UsageError
from .models import LaunchLayout, TrustedPath
from .paths import check_absolute, parent
from .roots import (
    resolve_home,
    resolve_roots,
    resolve_trusted_base_fields,
    resolve_workspace_roots,
)
from .session import untrusted_project_paths

if TYPE_CHECKING:
    from .inputs import Inputs
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
    from .inputs import Inputs

    return compile_inputs(
        Inputs(
            roots=roots_path,
            profiles=profiles_dir,
            workspace_roots=tuple(workspace_roots),
            codex_home=codex_home,
            session_config=session_config_path,
            tmpdir=tmpdir,
            home=home,
            vouched_mcp=vouched_mcp_path,
        )
    )


def compile_inputs(inputs: Inputs) -> CompiledBundle:
    """Compile from the one edge (compiler/inputs.py): every file's bytes come from `inputs`."""
    from .session import sanitize_with

    manifest = inputs.manifest()
    policy = inputs.policy()
    ws = inputs.workspace_roots
    canonical_ws = resolve_workspace_roots(ws)
    check_ws = tuple(dict.fromkeys([*ws, *canonical_ws]))
    roots = resolve_roots(manifest, check_ws)
    home_path = inputs.codex_home or default_codex_home(roots)
    resolved_home = resolve_home(home_path) if home_path else None
    if inputs.home is not None:
        check_absolute(inputs.home, what="--home", error=InputError)
    tb_fields = resolve_trusted_base_fields(policy.trusted_base, manifest.trusted_base)
    trusted = tuple(TrustedPath(**f) for f in tb_fields)
    session: dict[str, Any] | None = None
    stripped: tuple[str, ...] = ()
    classes: dict[str, str] = {}
    raw = inputs.session_raw()
    if raw is not None:
        session, cut = sanitize_with(raw, inputs.allowlist())
        stripped = tuple(s.path for s in cut)
        classes = {s.path: s.cls for s in cut}
    # The canonical spellings: a writable root (or cwd) spelled through a symlink drops every
    # deny under its real location in Codex 0.171.0, so compile emits only real paths.
    # TMPDIR canonical too: `:tmpdir` is a writable root in agent mode.
    tmp = resolve_workspace_roots([inputs.tmpdir])[0] if inputs.tmpdir else None
    layout = LaunchLayout(
        workspace_roots=canonical_ws, codex_home=home_path, home=inputs.home, tmpdir=tmp
    )
    return compile_bundle(
        roots,
        policy,
        layout,
        resolved_home,
        session_config=session,
        stripped_session_keys=stripped,
        stripped_session_classes=classes,
        vouched_mcp=inputs.vouched(),
        untrusted_projects=untrusted_project_paths(ws, canonical_ws),
        trusted_base=trusted,
    )
