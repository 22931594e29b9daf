"""`acp-json`: CODEX_ACP_PERMISSION_PROFILE_CONFIG; `session-config`: sanitized CODEX_CONFIG."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints

from ..models import Frozen, Slug
from .overrides import OverrideLine, override_lines

if TYPE_CHECKING:
    from ..models import CompiledBundle


_NonEmpty = Annotated[str, StringConstraints(min_length=1)]


class TrustedMcpServer(Frozen):
    """A launcher-vouched MCP server with its per-launch credential."""

    name: _NonEmpty
    credential: _NonEmpty


class AcpModeProfiles(Frozen):
    """ACP mode -> profile id: the three modes the adapter offers, and any other mode."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Slug] = Field(init=False)

    read_only: Slug = Field(alias="read-only")
    agent: Slug
    agent_full_access: Slug = Field(alias="agent-full-access")


class AcpLaunchConfig(Frozen):
    """CODEX_ACP_PERMISSION_PROFILE_CONFIG: -c lines and ACP mode -> profile id."""

    # schemas/acp-launch.schema.json is generated from this model; `acp_document` writes it.
    config_overrides: Annotated[list[OverrideLine], Field(min_length=1)] = Field(
        alias="configOverrides"
    )
    mode_profiles: AcpModeProfiles = Field(alias="modeProfiles")
    trusted_mcp_servers: list[TrustedMcpServer] = Field(
        default_factory=list,
        alias="trustedMcpServers",
        description="Launcher-vouched MCP servers (the AgentConnect fork's zod shape).",
    )


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
