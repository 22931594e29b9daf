"""The `requirements` format: Codex's managed requirements as profilec writes them
(schemas/requirements.schema.json); compiler/emit/requirements.py renders and checks them.
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


class ManagedRequirements(Frozen):
    """The `requirements` format: the keys profilec writes to Codex's managed requirements
    (schemas/requirements.schema.json). Codex itself ignores unknown keys silently, so this
    model forbids them: a misspelt key would protect nothing."""

    default_permissions: Slug
    allowed_permission_profiles: Annotated[dict[Slug, Literal[True]], Field(min_length=1)]
    permissions: PermissionsRequirements
    #: The only MCP servers Codex may start (the vouched ones, by exact command line); an empty
    #: table allows none.
    mcp_servers: dict[McpName, McpServerRequirement]
