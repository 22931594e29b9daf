"""`acp-json`: CODEX_ACP_PERMISSION_PROFILE_CONFIG; `session-config`: sanitized CODEX_CONFIG."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .overrides import override_lines

if TYPE_CHECKING:  # renderers format models or lite twins alike; no pydantic import
    from ..models import CompiledBundle


def render_acp_json(bundle: CompiledBundle) -> str:
    """`{"configOverrides": [...], "modeProfiles": {mode: id}}`, sorted, LF-terminated."""
    doc = {"configOverrides": override_lines(bundle), "modeProfiles": bundle.mode_profiles}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_session_config(bundle: CompiledBundle) -> str:
    """The agent's session config with every permission/sandbox key stripped."""
    return (
        json.dumps(bundle.session_config or {}, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
