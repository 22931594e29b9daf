"""Stack building: the `CheckInputs` of one run, from what profilec compiled or from a foreign
config stack (--config, --overrides, --acp-json), with the launch context.

`from_bundle` re-reads what profilec compiled (the `-c` lines it renders, parsed back as Codex
parses them); `foreign_inputs` takes a config.toml, an override list or an acp-json document
someone else wrote, over the roots resolved as compile resolves them. Either way the roots
manifest says what must be denied. Every file is read through the run's `Inputs` edge.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..emit.overrides import render_overrides
from ..pipeline import resolve_layout, trusted_paths
from ..roots import resolve_home
from ..session import MAX_BYTES
from .check_inputs import CheckInputs
from .configstack import (
    ConfigStack,
    Layer,
    load_acp_json,
    load_config_toml,
    load_overrides,
    load_session,
    parse_override_lines,
    session_layer,
)

if TYPE_CHECKING:
    from ..inputs import Inputs
    from ..models.compiled import CompiledBundle, ResolvedRoot
    from .options import CheckOptions


def bundle_layers(bundle: CompiledBundle) -> Layer:
    """The compiled profiles as Codex receives them: the rendered `-c` lines, parsed back."""
    text = render_overrides(bundle)
    return Layer(
        "-c overrides (compiled)",
        "cli-override",
        parse_override_lines(text, where="compiled overrides"),
        None,
        text,
    )


def from_bundle(
    bundle: CompiledBundle,
    mode_map: Mapping[str, str],
    *,
    manifest_file: str | None = None,
    session_raw: Mapping[str, Any] | None = None,
    session_file: str | None = None,
    extra_layers: Sequence[Layer] = (),
) -> CheckInputs:
    """Inputs for checking what profilec compiled (session config as the launcher passes it)."""
    layers: list[Layer] = list(extra_layers)
    layers.append(bundle_layers(bundle))
    if bundle.session_config is not None:
        layers.append(session_layer(bundle.session_config, file=session_file, text=None))
    ws = tuple(dict.fromkeys(bundle.layout.workspace_roots))
    home = bundle.codex_home
    return CheckInputs(
        stack=ConfigStack(tuple(layers)),
        mode_map=dict(mode_map),
        roots=tuple(bundle.roots),
        workspace_roots=ws,
        codex_home=home.canonical if home else None,
        codex_home_holders=home.holder_dirs if home else (),
        session_raw=session_raw,
        session_file=session_file,
        manifest_file=manifest_file,
        # The launch context compiled in (--home, --tmpdir), else this process's environment.
        home=bundle.layout.home or os.environ.get("HOME"),
        tmpdir=bundle.layout.tmpdir or os.environ.get("TMPDIR"),
        trusted_base=tuple(bundle.trusted_base),
        parent=tuple(bundle.parent),
    )


def policy_modes(edge: Inputs) -> dict[str, str]:
    """The policy's mode map (mode -> profile id)."""
    return {m: e.profile_id for m, e in edge.policy().mode_map.modes.items()}


def compiled_inputs(
    options: CheckOptions, edge: Inputs, modes: dict[str, str] | None, bundle: CompiledBundle
) -> CheckInputs:
    """What profilec compiled, under CODEX_HOME/config.toml when there is one."""
    session_raw = edge.session_raw()  # bounded: untrusted; the bytes compile sanitized
    home_layer = home_config_layer(
        edge, bundle.codex_home.canonical if bundle.codex_home else None, bundle.roots
    )
    return from_bundle(
        bundle,
        modes if modes is not None else policy_modes(edge),
        manifest_file=edge.roots_path,
        session_raw=session_raw,
        session_file=options.session_file,
        extra_layers=[home_layer] if home_layer else [],
    )


def foreign_inputs(
    options: CheckOptions, edge: Inputs, modes: dict[str, str] | None
) -> CheckInputs:
    """A config stack profilec did not write, over the roots resolved as compile resolves
    them (pipeline.resolve_layout) and held to the same trusted base (PC025)."""
    canonical_ws, resolved, home_path = resolve_layout(edge)
    home = resolve_home(home_path) if home_path else None
    home_layer = home_config_layer(edge, home.canonical if home else None, resolved)
    layers = _foreign_layers(options, edge, home_layer)
    if options.acp_json:
        afile = str(options.acp_json)
        acp_layer, acp_modes = load_acp_json(afile, edge.text(afile, "acp-json document"))
        layers.append(acp_layer)
        modes = acp_modes if modes is None else modes
    session_raw: dict[str, Any] | None = None
    sfile = options.session_file
    if sfile:
        session, session_raw = load_session(sfile, edge.untrusted(sfile, MAX_BYTES + 1).data)
        layers.append(session)
    return CheckInputs(
        stack=ConfigStack(tuple(layers)),
        mode_map=modes if modes is not None else policy_modes(edge),
        roots=resolved,
        workspace_roots=options.workspace_roots,
        codex_home=home.canonical if home else None,
        codex_home_holders=home.holder_dirs if home else (),
        session_raw=session_raw,
        session_file=sfile,
        manifest_file=edge.roots_path,
        home=os.environ.get("HOME"),
        tmpdir=os.environ.get("TMPDIR"),
        trusted_base=trusted_paths(edge, canonical_ws, edge.flags.home),
    )


def _foreign_layers(options: CheckOptions, edge: Inputs, home_layer: Layer | None) -> list[Layer]:
    """--config (else CODEX_HOME/config.toml), then --overrides (read through `edge`)."""
    layers: list[Layer] = []
    if options.config:
        cfile = str(options.config)
        layers.append(load_config_toml(cfile, edge.text(cfile, "config")))
    elif home_layer:
        layers.append(home_layer)
    if options.overrides:
        ofile = str(options.overrides)
        layers.append(load_overrides(ofile, edge.text(ofile, "override list")))
    return layers


def home_config_layer(
    edge: Inputs, home: str | None, roots: tuple[ResolvedRoot, ...]
) -> Layer | None:
    """CODEX_HOME/config.toml as the lowest layer, when it is a regular file (lstat) and no root."""
    if home is None:
        return None
    path = os.path.join(home, "config.toml")
    protected = {s for r in roots for s in (*r.spellings, r.target)}
    if path in protected:
        return None  # never read a protected path, whatever it is called
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return load_config_toml(path, edge.text(path, "config"), name="CODEX_HOME config.toml")


def with_launch_context(options: CheckOptions, edge: Inputs, inputs: CheckInputs) -> CheckInputs:
    """The session's cwd, HOME and TMPDIR (the flags, else what `inputs` holds: the ones the
    bundle was compiled with, which a --plan-layout gives, else the environment's), the
    policy's session allow-list when there is a session config, the reviewed parent policy
    (PC046)."""
    parent = edge.policy().parent
    return replace(
        inputs,
        cwd=options.cwd,
        home=options.home if options.home is not None else inputs.home,
        tmpdir=options.tmpdir if options.tmpdir is not None else inputs.tmpdir,
        allowlist=edge.allowlist() if inputs.session_raw is not None else None,
        parent=tuple(parent.settings) if parent else (),
    )
