"""The `acp-json` format: CODEX_ACP_PERMISSION_PROFILE_CONFIG (schemas/acp-launch.schema.json).

compiler/emit/acp_json.py writes it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, StringConstraints

from .base import Frozen, OverrideLine, Slug

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
