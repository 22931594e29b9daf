"""The library path: what the CLI and an embedding daemon call.

`load_and_compile` does the edge work (trust check, lstat/readlink, policy read: each input
file read once into compiler/inputs.py's `Inputs`) and then calls the pure `compile_bundle`;
`compile_inputs` compiles an `Inputs` a caller already holds (check, lock, audit share one), and
a daemon that already holds validated models calls `compile_bundle` directly.
`load_and_compile_lite` is the same pipeline producing compiler/lite.py's pydantic-free twins
(the `profilec compile` fast path); it raises lite.NotLite for input it cannot vouch for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import lite
from .compile import compile_bundle, get_kit
from .errors import InputError, UsageError
from .mcp import load_vouched_mcp
from .paths import check_absolute, parent
from .policy import load_policy, load_policy_with
from .roots import (
    load_manifest,
    load_manifest_with,
    resolve_home,
    resolve_home_fields,
    resolve_root_fields,
    resolve_roots,
    resolve_roots_with,
    resolve_trusted_base_fields,
    resolve_workspace_roots,
)
from .session import load_session_config, untrusted_project_paths

if TYPE_CHECKING:
    from .inputs import Inputs
    from .models import CompiledBundle, ResolvedRoot


def default_codex_home(roots: Sequence[ResolvedRoot] | Sequence[lite.ResolvedRoot]) -> str | None:
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
    from .models import LaunchLayout, TrustedPath
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
        kit=get_kit("models"),
        trusted_base=trusted,
    )


def load_and_compile_lite(
    roots_path: str,
    *,
    profiles_dir: str | None = None,
    workspace_roots: Sequence[str] = (),
    codex_home: str | None = None,
    session_config_path: str | None = None,
    tmpdir: str | None = None,
    home: str | None = None,
    vouched_mcp_path: str | None = None,
) -> lite.CompiledBundle:
    """`load_and_compile` without pydantic: the same steps, lite twins in and out.

    Raises lite.NotLite when the manifest or policy is not one the lite validators vouch for
    (the caller then runs `load_and_compile`, which reports the exact schema error).
    """
    bundle = _pipeline(
        roots_path,
        profiles_dir,
        workspace_roots,
        codex_home,
        session_config_path,
        fast=True,
        tmpdir=tmpdir,
        home=home,
        vouched_mcp_path=vouched_mcp_path,
    )
    return cast(lite.CompiledBundle, bundle)


def _lite_validator(check: Callable[[object], Any]) -> Callable[[dict[str, Any], str], Any]:
    def validate(data: dict[str, Any], where: str) -> Any:
        return check(data)

    return validate


def _lite_root(
    spec: Any, workspace_roots: Sequence[str], dir_cache: dict[str, os.stat_result]
) -> lite.ResolvedRoot:
    def hop(index: int, link: str, value: str, spelling: str) -> lite.Hop:
        return lite.Hop(index=index, link=link, value=value, spelling=spelling)

    return lite.ResolvedRoot(**resolve_root_fields(spec, workspace_roots, hop, dir_cache))


def _pipeline(
    roots_path: str,
    profiles_dir: str | None,
    workspace_roots: Sequence[str],
    codex_home: str | None,
    session_config_path: str | None,
    *,
    fast: bool,
    tmpdir: str | None = None,
    home: str | None = None,
    vouched_mcp_path: str | None = None,
) -> Any:
    """The one edge pipeline; `fast` builds lite twins instead of pydantic models."""
    if fast:
        manifest: Any = load_manifest_with(roots_path, _lite_validator(lite.manifest_doc))
        policy = load_policy_with(
            profiles_dir,
            _lite_validator(lite.mode_map_doc),
            _lite_validator(lite.policy_doc),
            _lite_validator(lite.trusted_base_doc),
        )
    else:
        manifest = load_manifest(roots_path)
        policy = load_policy(profiles_dir)
    ws = tuple(workspace_roots)
    canonical_ws = resolve_workspace_roots(ws)
    check_ws = tuple(dict.fromkeys([*ws, *canonical_ws]))
    roots: Any = (
        resolve_roots_with(manifest.roots, check_ws, _lite_root)
        if fast
        else resolve_roots(manifest, check_ws)
    )
    home_path = codex_home or default_codex_home(roots)
    resolved_home: Any = None
    if home_path:
        if fast:
            resolved_home = lite.ResolvedHome(**resolve_home_fields(home_path))
        else:
            resolved_home = resolve_home(home_path)
    if home is not None:
        check_absolute(home, what="--home", error=InputError)
    tb_fields = resolve_trusted_base_fields(policy.trusted_base, manifest.trusted_base)
    if fast:
        trusted: tuple[Any, ...] = tuple(lite.TrustedPath(**f) for f in tb_fields)
    else:
        from .models import TrustedPath

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
    if fast:
        layout: Any = lite.LaunchLayout(
            workspace_roots=canonical_ws, codex_home=home_path, home=home, tmpdir=tmp
        )
    else:
        from .models import LaunchLayout

        layout = LaunchLayout(
            workspace_roots=canonical_ws, codex_home=home_path, home=home, tmpdir=tmp
        )
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
        kit=get_kit("lite" if fast else "models"),
        trusted_base=trusted,
    )
