"""The launcher config profilec emits beside the permission profiles, in every route.

* the parent policy (profiles/parent.toml): the keys that stop the trusted Codex parent from
  reading, running or passing on something because of the model (shell snapshot off,
  multi-agent off, the command environment filtered; docs/parent.md);
* `features.apps = false` unless profiles/modes.toml turns account apps on (Codex 0.171.0's
  `apps` feature, stable and on by default, is what surfaces account apps/connectors);
* the default mode's `approval_policy` and `approvals_reviewer` (one global value: Codex has no
  per-permission-profile approval key; `--format launch` says per adapter whether each mode's
  own value holds), `on-request` spelled as the equivalent granular policy (`approval_value`);
* the launcher-vouched MCP servers (the only `mcp_servers` profilec ever emits), each inside
  `codex sandbox` (compiler/emit/mcp_servers.py);
* `projects."<root>".trust_level = "untrusted"` for every workspace root, so Codex never loads a
  workspace's own `.codex/config.toml` (measured on 0.171.0: a trusted project's file sits above
  CODEX_HOME/config.toml and re-granted read on the credential; an untrusted entry, or one given
  as `-c projects=...` above a trusted one, kept it unloaded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..codex.vocabulary import APPROVAL_ON_REQUEST, GRANULAR_ASK_ALL, TRUST_UNTRUSTED
from .mcp_servers import mcp_server_tables

if TYPE_CHECKING:
    from ..models.compiled import CompiledBundle


def approval_value(policy: str) -> str | dict[str, Any]:
    """What profilec emits for a mode's `approval_policy` (config, `-c`, app-server
    `approvalPolicy`): `on-request` as its granular spelling (vocabulary.GRANULAR_ASK_ALL), which
    asks the same questions but is no value an adapter's built-in mode sends, so the managed
    requirements can allow it alone; any other policy as written."""
    if policy == APPROVAL_ON_REQUEST:
        return {k: dict(v) for k, v in GRANULAR_ASK_ALL.items()}
    return policy


def emitted_approvals(bundle: CompiledBundle, mode: str) -> dict[str, Any]:
    """One mode's approval keys as emitted (empty when modes.toml gives none)."""
    keys: dict[str, Any] = dict(bundle.mode_approvals.get(mode, {}))
    if "approval_policy" in keys:
        keys["approval_policy"] = approval_value(keys["approval_policy"])
    return keys


def default_approvals(bundle: CompiledBundle) -> dict[str, Any]:
    """The default mode's approval keys as emitted (empty when modes.toml gives none)."""
    return emitted_approvals(bundle, bundle.default_mode)


def untrusted_projects(bundle: CompiledBundle) -> dict[str, dict[str, str]]:
    """`projects` entries marking every workspace root untrusted, under the spelling given and
    the canonical one (measured: a trusted entry under the real path loaded the project's config
    for a cwd spelled through a symlink, and an untrusted entry under the link alone did not
    stop it)."""
    paths = set(bundle.untrusted_projects) | set(bundle.layout.workspace_roots)
    return {r: {"trust_level": TRUST_UNTRUSTED} for r in sorted(paths)}


def extra_top(bundle: CompiledBundle) -> dict[str, Any]:
    """Top-level keys (approvals), in emission order."""
    return default_approvals(bundle)


#: Tables whose keys are names or paths (one sub-table each), emitted after the profiles.
KEYED_TABLES = ("mcp_servers", "projects")


def parent_tables(bundle: CompiledBundle) -> dict[str, dict[str, Any]]:
    """The parent policy as tables (`features`, `shell_environment_policy`, ...), in policy
    order; with `features.apps = false` unless account apps are on."""
    out: dict[str, dict[str, Any]] = {}
    if not bundle.account_apps:
        out["features"] = {"apps": False}
    for setting in bundle.parent:
        table, name = setting.key.split(".", 1)
        value = list(setting.value) if isinstance(setting.value, list) else setting.value
        out.setdefault(table, {})[name] = value
    return out


def extra_tables(bundle: CompiledBundle) -> dict[str, dict[str, Any]]:
    """Table-valued keys, in emission order: the parent tables (features first), then
    mcp_servers and projects."""
    out = parent_tables(bundle)
    servers = mcp_server_tables(bundle)
    if servers:
        out["mcp_servers"] = servers
    projects = untrusted_projects(bundle)
    if projects:
        out["projects"] = projects
    return out
