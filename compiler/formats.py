"""Output formats by `--format` name: each one's renderer, imported lazily so a command loads
only its own (the renderers live in profilec.emit, the bundle document in profilec.bundle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import CompiledBundle


Renderer = Callable[["CompiledBundle"], str]


def renderer(name: str) -> Renderer:
    """The renderer for a `--format` name (imported lazily so a command loads only its own)."""
    if name == "toml":
        from .emit.codex_toml import render_toml

        return render_toml
    if name == "overrides":
        from .emit.overrides import render_overrides

        return render_overrides
    if name == "acp-json":
        from .emit.acp_json import render_acp_json

        return render_acp_json
    if name == "session-config":
        from .emit.acp_json import render_session_config

        return render_session_config
    if name == "bundle":
        from .bundle.document import render_bundle

        return render_bundle
    if name == "launch":
        from .emit.launch import render_launch

        return render_launch
    if name == "requirements":
        from .emit.requirements import render_requirements

        return render_requirements
    raise KeyError(name)


FORMATS = (
    "toml",
    "overrides",
    "acp-json",
    "session-config",
    "bundle",
    "codex-home",
    "launch",
    "requirements",
)
