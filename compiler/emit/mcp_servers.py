"""The vouched MCP servers as every output emits them: each inside `codex sandbox`.

Codex starts an `mcp_servers` entry as the trusted parent, outside the command sandbox. profilec
emits each vouched server as the file's Codex binary running

    codex sandbox -C <cwd> -c permissions.<ro>={...} -P <ro> -- <server>

so the server process itself runs under the read-only mode's profile (every vault, writer lock
and other identity denied, nothing writable, no network), in its daemon-owned cwd, with only
the environment the file names (Codex adds HOME, LC_CTYPE and PATH). The profile travels in the
arguments, so the wrapping needs no config file of its own and holds for every output format.
The wrapper does not take `--include-managed-config`: under profilec's requirements it refuses
to start ("requirements.toml allowed_permission_profiles refers to undefined profile
`profilec-agent`", 0.171.0), its config stack defining only the one profile; the profile's own
denies are the ones the requirements hold.

The managed requirements list the same servers by their whole command line
(`requirement_tables`): Codex starts no server whose name is not listed or whose executable and
arguments do not match exactly, and none at all under an empty table (measured, 0.171.0 and
0.166.0). A Codex identity has no `cwd` or `env`: those two are held by the config layer only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import PolicyError
from .tomltext import inline

if TYPE_CHECKING:
    from ..models.compiled import CompiledBundle


def mcp_server_tables(bundle: CompiledBundle) -> dict[str, dict[str, Any]]:
    """name -> the Codex `mcp_servers` table (sorted by name)."""
    if not bundle.vouched_mcp_servers:
        return {}
    codex = bundle.vouched_mcp_codex
    try:
        profile = bundle.profile_for("read-only")
    except KeyError:
        raise PolicyError(
            "vouched MCP servers run under the read-only mode's profile; the policy has none",
            where="vouched MCP servers",
        ) from None
    if codex is None:  # pragma: no cover - compile sets both or neither
        raise PolicyError("vouched MCP servers without a Codex binary", where="bundle")
    pid = profile.profile_id
    grant = f"permissions.{pid}={inline(profile.codex_table())}"
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(bundle.vouched_mcp_servers):
        server = bundle.vouched_mcp_servers[name]
        cwd = server["cwd"]
        args = ["sandbox", "-C", cwd, "-c", grant, "-P", pid, "--"]
        out[name] = {
            "command": codex,
            "args": [*args, server["command"], *server["args"]],
            "cwd": cwd,
            "env": dict(server["env"]),
        }
    return out


def requirement_tables(bundle: CompiledBundle) -> dict[str, dict[str, Any]]:
    """The managed requirements' `mcp_servers` allow-list: each vouched server by its exact
    command line (empty when there is none: Codex then starts no MCP server at all)."""
    out: dict[str, dict[str, Any]] = {}
    for name, table in mcp_server_tables(bundle).items():
        exact = [{"match": "exact", "value": a} for a in table["args"]]
        out[name] = {"identity": {"command": {"executable": table["command"], "args": exact}}}
    return out
