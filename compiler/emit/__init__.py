"""Renderers: each formats a CompiledBundle and decides nothing. Looked up by format name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..models import CompiledBundle


Renderer = Callable[["CompiledBundle"], str]


def renderer(name: str) -> Renderer:
    """The renderer for a `--format` name (imported lazily so a command loads only its own)."""
    if name == "toml":
        from .codex_toml import render_toml

        return render_toml
    if name == "overrides":
        from .overrides import render_overrides

        return render_overrides
    if name == "acp-json":
        from .acp_json import render_acp_json

        return render_acp_json
    if name == "session-config":
        from .acp_json import render_session_config

        return render_session_config
    if name == "bundle":
        from .bundle import render_bundle

        return render_bundle
    if name == "launch":
        from .launch import render_launch

        return render_launch
    raise KeyError(name)


FORMATS = ("toml", "overrides", "acp-json", "session-config", "bundle", "codex-home", "launch")
