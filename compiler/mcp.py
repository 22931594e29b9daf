"""Launcher-vouched MCP servers: a daemon-owned TOML file, trust-checked like the roots manifest.

Codex starts every server in `mcp_servers` itself, as the trusted parent, outside the command
sandbox; so a server may come only from the launcher, never from agent config (the session
allow-list strips `mcp_servers`). The file names each server's stdio command, arguments and
environment, and optionally a per-launch `credential` that the AgentConnect fork of codex-acp
checks (`trustedMcpServers: [{name, credential}]`, the server carrying the same value in its
`CODEX_ACP_MCP_SERVER_CREDENTIAL` environment entry).

    schema_version = 1
    [servers.bridge]
    command = "/usr/local/bin/agentconnect-mcp-bridge"
    args = ["--stdio"]
    env = { BRIDGE_MODE = "session" }
    credential = "per-launch-secret"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from .errors import InputError
from .models import Frozen

#: The env entry the AgentConnect fork reads to prove the launcher injected a server.
CREDENTIAL_ENV = "CODEX_ACP_MCP_SERVER_CREDENTIAL"
#: A bare TOML key, so a `-c mcp_servers.<name>=...` key needs no quoting (Codex splits on `.`).
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_SERVER_KEYS = frozenset({"command", "args", "env", "credential"})


class VouchedServer(Frozen):
    """One server: its stdio command (absolute), arguments, environment, per-launch credential."""

    command: Annotated[str, StringConstraints(pattern="^/")]
    args: tuple[str, ...] = ()
    env: dict[Annotated[str, StringConstraints(pattern=f"^{_ENV_NAME.pattern}$")], str] = Field(
        default_factory=dict
    )
    credential: Annotated[str, StringConstraints(min_length=1)] | SkipJsonSchema[None] = None


class VouchedMcpServers(Frozen):
    """A daemon-owned file naming the MCP servers the launcher injects (stdio command,
    arguments, environment, optional per-launch credential). profilec emits them in the
    overrides, the codex-home config and acp-json trustedMcpServers."""

    # schemas/vouched-mcp.schema.json is generated from this model. `parse_vouched` (below)
    # reads the file by hand, so that a compile loads no validator; tests/unit/test_schemas.py
    # gives both the same documents.

    schema_version: Literal[1]
    servers: dict[Annotated[str, StringConstraints(pattern=f"^{_NAME.pattern}$")], VouchedServer]


def _one_line(value: str) -> bool:
    return "\n" not in value and "\r" not in value and "\x00" not in value


def parse_vouched(
    data: Mapping[str, Any], *, where: str
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Validate the parsed file: (name -> Codex mcp_servers table, name -> credential)."""
    extra = set(data) - {"schema_version", "servers"}
    if extra:
        raise InputError(f"unknown key {sorted(extra)[0]!r}", where=where)
    if data.get("schema_version") != 1:
        raise InputError("schema_version must be 1", where=where)
    servers = data.get("servers")
    if not isinstance(servers, dict):
        raise InputError("[servers] must be a table", where=where)
    tables: dict[str, dict[str, Any]] = {}
    creds: dict[str, str] = {}
    for name in sorted(servers):
        spec = servers[name]
        at = f"{where}: servers.{name}"
        if _NAME.fullmatch(name) is None:
            raise InputError("server name must be 1-64 of A-Z a-z 0-9 _ -", where=at)
        if not isinstance(spec, dict):
            raise InputError("must be a table", where=at)
        unknown = set(spec) - _SERVER_KEYS
        if unknown:
            raise InputError(f"unknown key {sorted(unknown)[0]!r}", where=at)
        command = spec.get("command")
        if not isinstance(command, str) or not command.startswith("/") or not _one_line(command):
            raise InputError("command must be an absolute path", where=at)
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) and _one_line(a) for a in args):
            raise InputError("args must be a list of one-line strings", where=at)
        env = spec.get("env", {})
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and _ENV_NAME.fullmatch(k) and isinstance(v, str) and _one_line(v)
            for k, v in env.items()
        ):
            raise InputError("env must map variable names to one-line strings", where=at)
        if CREDENTIAL_ENV in env:
            raise InputError(f"set credential, not env.{CREDENTIAL_ENV}", where=at)
        table: dict[str, Any] = {"command": command}
        if args:
            table["args"] = list(args)
        merged = {k: env[k] for k in sorted(env)}
        if "credential" in spec:
            cred = spec["credential"]
            if not isinstance(cred, str) or not cred or not _one_line(cred):
                raise InputError("credential must be a non-empty one-line string", where=at)
            creds[name] = cred
            merged[CREDENTIAL_ENV] = cred
        if merged:
            table["env"] = merged
        tables[name] = table
    return tables, creds
