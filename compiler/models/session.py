"""The session config (schemas/session-config.schema.json: any object, as compiler/session.py
reads it) and the session-config allow-list (profiles/session-allowlist.toml,
schemas/session-allowlist.schema.json).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import RootModel, StringConstraints

from .base import Frozen

ValueType = Literal["string", "boolean", "integer", "string-array"]


class SessionConfig(RootModel[dict[str, Any]]):
    """Untrusted agent session config (CODEX_CONFIG). Any JSON object is read; keys starting
    permissions, default_permissions, sandbox_mode or sandbox_workspace_write are stripped."""

    # schemas/session-config.schema.json is generated from this model: any object at all, as
    # `parse_session_bytes` reads it (the allow-list, not a schema, decides what passes).


class AllowedEntry(Frozen):
    """One allowed key: the value type Codex reads, and why it is safe to pass."""

    type: ValueType
    #: One line that is not blank.
    reason: Annotated[str, StringConstraints(pattern=r"^[^\n\r]*[^\s][^\n\r]*$")]


class SessionAllowList(Frozen):
    """profiles/session-allowlist.toml: the session-config keys an agent definition may pass
    to Codex, each with the value type Codex reads and why it cannot run a program, widen
    access, redirect traffic or change approvals. Every other key is stripped."""

    # schemas/session-allowlist.schema.json is generated from this model; compiler/session.py
    # `parse_allowlist` reads the file through it, then checks the keys against KNOWN_KEYS
    # (which no schema states).
    schema_version: Literal[1]
    codex_version: Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")]
    allowed: dict[Annotated[str, StringConstraints(pattern="^[a-z][a-z0-9_]*$")], AllowedEntry]
