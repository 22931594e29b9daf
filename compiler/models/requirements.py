"""The `requirements` format: Codex's managed requirements as profilec writes them
(schemas/requirements.schema.json); compiler/emit/requirements.py renders them,
emit/requirements_verify.py checks an installed file against them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import AbsPath, Frozen, Slug


class FilesystemRequirements(Frozen):
    """`[permissions.filesystem]`: paths no sandboxed command reads, in any mode."""

    deny_read: Annotated[list[AbsPath], Field(min_length=1)]


class PermissionsRequirements(Frozen):
    """`[permissions]` of the requirements: filesystem constraints only (it defines no profile)."""

    filesystem: FilesystemRequirements


McpName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


class McpValueMatcher(Frozen):
    """One exact argument of a server's command line."""

    match: Literal["exact"]
    value: str


class McpCommandIdentity(Frozen):
    """A stdio server's whole command line: the executable and every argument, exactly."""

    executable: AbsPath
    args: list[McpValueMatcher]


class McpIdentity(Frozen):
    """`identity = { command = {...} }`: Codex's matcher form (0.166.0 and 0.171.0)."""

    command: McpCommandIdentity


class McpServerRequirement(Frozen):
    """One allowed MCP server (its name is the table key)."""

    identity: McpIdentity


class GranularFlags(Frozen):
    """Which prompts a granular approval policy lets reach the user (all: `on-request`)."""

    sandbox_approval: bool
    rules: bool
    skill_approval: bool
    request_permissions: bool
    mcp_elicitations: bool


class GranularApproval(Frozen):
    """`{ granular = {...} }`: the approval policy profilec emits for `on-request`."""

    granular: GranularFlags


#: An allowed approval policy. `on-request` is not one: it is what the adapters' built-in legacy
#: modes send, and allowing it would let their turns run (emit/extras.approval_value).
AllowedApproval = Literal["untrusted", "on-failure", "never"] | GranularApproval


class FeatureRequirements(Frozen):
    """`[features]` of the requirements: feature flags no config layer can turn back on."""

    hooks: Literal[False]


class ManagedRequirements(Frozen):
    """The `requirements` format: the keys profilec writes to Codex's managed requirements
    (schemas/requirements.schema.json). Codex itself ignores unknown keys silently, so this
    model forbids them: a misspelt key would protect nothing."""

    default_permissions: Slug
    #: The approval policies profilec's modes use, as emitted: a turn that asks for another
    #: (an adapter's built-in mode sends `on-request` or `never` with full access) is refused.
    allowed_approval_policies: Annotated[list[AllowedApproval], Field(min_length=1)]
    #: The reviewers profilec's modes use (`user`): no model decides an escalation.
    allowed_approvals_reviewers: Annotated[
        list[Literal["user", "auto_review"]], Field(min_length=1)
    ]
    #: Hooks only from the managed layers: no user, project or session hook runs as the parent.
    allow_managed_hooks_only: Literal[True]
    allowed_permission_profiles: Annotated[dict[Slug, Literal[True]], Field(min_length=1)]
    permissions: PermissionsRequirements
    features: FeatureRequirements
    #: The only MCP servers Codex may start (the vouched ones, by exact command line); an empty
    #: table allows none.
    mcp_servers: dict[McpName, McpServerRequirement]
