"""`acp-json`: CODEX_ACP_PERMISSION_PROFILE_CONFIG; `session-config`: sanitized CODEX_CONFIG."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .overrides import override_lines

if TYPE_CHECKING:
    from ..models.compiled import CompiledBundle


def acp_document(bundle: CompiledBundle) -> dict[str, Any]:
    """The AgentConnect fork's CODEX_ACP_PERMISSION_PROFILE_CONFIG (its zod schema,
    src/PermissionProfileConfig.ts): configOverrides, modeProfiles, and `trustedMcpServers`
    ([{name, credential}]) for each vouched server that carries a per-launch credential."""
    doc: dict[str, Any] = {
        "configOverrides": override_lines(bundle),
        "modeProfiles": bundle.mode_profiles,
    }
    creds = bundle.vouched_mcp_credentials
    if creds:
        doc["trustedMcpServers"] = [
            {"name": name, "credential": creds[name]} for name in sorted(creds)
        ]
    return doc


def render_acp_json(bundle: CompiledBundle) -> str:
    """The acp-json document, sorted, LF-terminated."""
    doc = acp_document(bundle)
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_session_config(bundle: CompiledBundle) -> str:
    """The agent's session config with every permission/sandbox key stripped."""
    return (
        json.dumps(bundle.session_config or {}, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
