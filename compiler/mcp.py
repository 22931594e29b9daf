"""Launcher-vouched MCP servers: a daemon-owned TOML file, trust-checked like the roots manifest.

Codex starts every server in `mcp_servers` itself, as the trusted parent, outside the command
sandbox (measured, 0.171.0 and 0.166.0): in the session's cwd unless `cwd` is set, with only
HOME, LC_CTYPE and PATH of the parent's environment plus the table's `env`. So a server may come
only from the launcher, never from agent config (the session allow-list strips `mcp_servers`),
and profilec runs each one *inside the boundary*: the emitted command is the file's Codex binary
running `codex sandbox` with profilec's read-only profile (it writes nothing, the vaults are
denied), in the server's daemon-owned `cwd`; a Python command gets `-s -P` (no user site, no script
directory or cwd on `sys.path`). Measured: a file-serving
server asked for a model-planted link to the credential got `Permission denied` wrapped and the
marker unwrapped (tests/integration/test_mcp_boundary_codex.py).

    schema_version = 2
    codex = "/opt/codex/bin/codex"            # whose `codex sandbox` runs every server
    [servers.bridge]
    command = "/usr/local/bin/agentconnect-mcp-bridge"
    args = ["--stdio"]
    cwd = "/srv/agentd/mcp/bridge"             # daemon-owned, outside every workspace
    env = { BRIDGE_MODE = "session" }
    credential = "per-launch-secret"

The per-launch `credential` is for the AgentConnect fork of codex-acp
(`trustedMcpServers: [{name, credential}]`, the server carrying the same value in its
`CODEX_ACP_MCP_SERVER_CREDENTIAL` environment entry). The model, and each server as it runs
(`VouchedMcpServers.server_tables`), are in compiler/models/mcp.py.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .errors import InputError
from .models.mcp import VouchedMcpServers


def load_vouched(data: dict[str, Any], *, where: str) -> VouchedMcpServers:
    """Validate the parsed file (one model; one error line naming the file and the key)."""
    try:
        return VouchedMcpServers.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        msg = "unknown key" if first.get("type") == "extra_forbidden" else first["msg"]
        more = len(exc.errors()) - 1
        tail = f" (and {more} more)" if more else ""
        raise InputError(f"{loc}: {msg}{tail}", where=where) from None
