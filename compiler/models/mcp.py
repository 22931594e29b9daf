"""The vouched MCP servers file (schemas/vouched-mcp.schema.json): the servers a launcher
injects and the Codex binary whose `codex sandbox` runs them, and each server as it runs
(`server_tables`: its command line, refused cwds). compiler/mcp.py reads the file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

from ..errors import InputError, UnsafeRootError
from ..paths import is_within
from .base import Frozen

if TYPE_CHECKING:
    from .roots import LaunchLayout

#: The env entry the AgentConnect fork reads to prove the launcher injected a server.
CREDENTIAL_ENV = "CODEX_ACP_MCP_SERVER_CREDENTIAL"
_OneLine = Annotated[str, StringConstraints(pattern=r"^[^\n\r\x00]*$")]
_Abs = Annotated[str, StringConstraints(pattern=r"^/[^\n\r\x00]*$")]
#: A bare TOML key, so a `-c mcp_servers.<name>=...` key needs no quoting (Codex splits on `.`).
_Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
_EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]


class VouchedServer(Frozen):
    """One server: its stdio command (absolute), arguments, daemon-owned cwd, environment and
    per-launch credential."""

    command: _Abs
    args: list[_OneLine] = Field(default_factory=list)
    cwd: _Abs = Field(
        description="Daemon-owned working directory, outside every workspace root and vault "
        "(also the CODEX_HOME of the `codex sandbox` that runs the server)."
    )
    env: dict[_EnvName, _OneLine] = Field(default_factory=dict)
    credential: Annotated[_OneLine, StringConstraints(min_length=1)] | SkipJsonSchema[None] = None

    @model_validator(mode="after")
    def _credential_not_in_env(self) -> VouchedServer:
        if CREDENTIAL_ENV in self.env:
            raise ValueError(f"set credential, not env.{CREDENTIAL_ENV}")
        return self


class VouchedMcpServers(Frozen):
    """A daemon-owned file naming the MCP servers the launcher injects and the Codex binary
    whose `codex sandbox` runs each of them inside the boundary. profilec emits them in the
    overrides, the codex-home config, acp-json trustedMcpServers and the managed requirements'
    `mcp_servers` allow-list."""

    schema_version: Literal[2]
    codex: _Abs = Field(description="The Codex binary whose `codex sandbox` runs every server.")
    servers: dict[_Name, VouchedServer]

    def server_tables(self, layout: LaunchLayout, vaults: list[str]) -> dict[str, dict[str, Any]]:
        """name -> the server as it runs inside `codex sandbox`: `command`, `args` (a Python
        interpreter's with PYTHON_FLAGS first), the daemon-owned `cwd` (refused when it overlaps a
        workspace root or a vault, or lies under /tmp) and `env` (the file's, the per-launch
        credential, and CODEX_HOME = cwd so that `codex sandbox` reads no session HOME's `.codex`:
        Codex passes HOME to every server).
        compiler/emit/mcp_servers.py wraps each in `codex sandbox` under the read-only profile."""
        out: dict[str, dict[str, Any]] = {}
        for name in sorted(self.servers):
            server = self.servers[name]
            _check_cwd(name, server.cwd, layout, vaults)
            argv = server_argv(server)
            env = dict(server.env)
            env["CODEX_HOME"] = server.cwd
            if server.credential is not None:
                env[CREDENTIAL_ENV] = server.credential
            out[name] = {
                "command": argv[0],
                "args": argv[1:],
                "cwd": server.cwd,
                "env": dict(sorted(env.items())),
            }
        return out

    def credentials(self) -> dict[str, str]:
        """name -> per-launch credential, for the servers that carry one."""
        return {
            name: s.credential
            for name, s in sorted(self.servers.items())
            if s.credential is not None
        }


def _is_python(command: str) -> bool:
    name = os.path.basename(command)
    return name.startswith("python") and all(c.isdigit() or c == "." for c in name[6:])


#: What a Python interpreter gets first: no user site (`-s`: HOME is the session's) and no
#: unsafe path (`-P`: neither the cwd for `-m` nor the script's directory on `sys.path`).
#: PYTHONPATH stays the file's own: Codex passes a server no parent variable but HOME,
#: LC_CTYPE and PATH (measured, 0.171.0 and 0.166.0).
PYTHON_FLAGS = ("-s", "-P")


def server_argv(server: VouchedServer) -> list[str]:
    """The server's own command line; a Python interpreter gets PYTHON_FLAGS first."""
    args = list(server.args)
    if _is_python(server.command) and tuple(args[:2]) != PYTHON_FLAGS:
        args[:0] = PYTHON_FLAGS
    return [server.command, *args]


def _check_cwd(name: str, cwd: str, layout: LaunchLayout, vaults: list[str]) -> None:
    canonical = os.path.realpath(cwd)
    for root in layout.workspace_roots:
        for spelled in {root, os.path.realpath(root)}:
            for c in {cwd, canonical}:
                if is_within(c, spelled) or is_within(spelled, c):
                    raise UnsafeRootError(
                        f"vouched MCP server {name}: cwd {cwd} overlaps workspace root {root}",
                        where="vouched MCP servers",
                        hint="give each server a daemon-owned directory outside every workspace",
                    )
    if is_within(canonical, "/tmp") or is_within(cwd, "/tmp"):
        # The cwd is also the CODEX_HOME of the wrapping `codex sandbox`, and Codex refuses to
        # keep its sandbox helper there ("Refusing to create helper binaries under temporary
        # dir"; the sandbox then fails: "bwrap: execvp codex-linux-sandbox"; 0.171.0).
        raise InputError(
            f"vouched MCP server {name}: cwd {cwd} is under /tmp, where Codex keeps no sandbox "
            "helper",
            where="vouched MCP servers",
        )
    for vault in vaults:
        if is_within(canonical, vault) or is_within(vault, canonical):
            raise UnsafeRootError(
                f"vouched MCP server {name}: cwd {cwd} overlaps vault {vault}",
                where="vouched MCP servers",
                hint="give each server a daemon-owned directory outside every vault",
            )
