"""`requirements_verify`: what makes an installed managed requirements file less strict than the
document profilec compiles (emit/requirements.py).

Semantic, not byte equality: a host file that merges profilec's keys into its own (its own
`deny_read` paths, a narrower allow-list) holds; a missing or wider key, a `[permissions.<name>]`
table Codex would read as a managed profile, a default outside profilec's profiles, does not.
`profilec requirements verify`, `check --requirements` and `watch` report these problems.
"""

from __future__ import annotations

import tomllib
from typing import Any

from ..models.compiled import CompiledBundle
from ..paths import is_within
from .requirements import requirements_data
from .tomltext import value

#: Why a `[permissions.<name>]` table other than `filesystem` is refused: Codex reads it as a
#: permission profile of the managed layer (measured on 0.171.0 and 0.166.0, with profilec's
#: codex-home config and requirements): one named like a config profile stops every session
#: ("requirements.toml permissions profile `profilec-agent` conflicts with a config-defined
#: profile of the same name"), under a config without `default_permissions` none starts
#: ("config defines `[permissions]` profiles but does not set `default_permissions`"), and any
#: other is a profile profilec did not compile.
PROFILE_TABLE = (
    "defines a permission profile in the managed layer: Codex refuses to start when a config "
    "profile has that name, and profilec did not compile it (keep only [permissions.filesystem])"
)


def requirements_problems(installed: str, bundle: CompiledBundle) -> list[str]:
    """Why the installed document is less strict than the compiled one (empty: it holds).

    Semantic, not byte equality, so a host file that merges profilec's keys into its own passes:
    every compiled `deny_read` path is denied (by itself or a denied ancestor), the allowed
    profiles are a subset of profilec's, and the default is one of them.
    """
    try:
        data = tomllib.loads(installed)
    except tomllib.TOMLDecodeError as exc:
        return [f"not valid TOML ({exc})"]
    want = requirements_data(bundle)
    problems: list[str] = []
    perms = data.get("permissions")
    fs = perms.get("filesystem") if isinstance(perms, dict) else None
    denied = fs.get("deny_read") if isinstance(fs, dict) else None
    have = [p for p in denied if isinstance(p, str)] if isinstance(denied, list) else []
    for name in sorted(perms) if isinstance(perms, dict) else ():
        if name != "filesystem":
            problems.append(f"[permissions.{name}] {PROFILE_TABLE}")
    for path in want["permissions"]["filesystem"]["deny_read"]:
        if not any(is_within(path, h.rstrip("/") or "/") for h in have if h.startswith("/")):
            problems.append(f"deny_read misses {path}")
    allowed = data.get("allowed_permission_profiles")
    ours = set(want["allowed_permission_profiles"])
    if not isinstance(allowed, dict):
        problems.append("no [allowed_permission_profiles]: a client may pick any built-in mode")
    else:
        extra = sorted(k for k, v in allowed.items() if v is True and k not in ours)
        if extra:
            problems.append(f"allowed_permission_profiles also allows {', '.join(extra)}")
        if not any(v is True for v in allowed.values()):
            problems.append("allowed_permission_profiles allows nothing")
    for name, what in (
        ("allowed_approval_policies", "an adapter's built-in legacy mode may run a turn"),
        ("allowed_approvals_reviewers", "a model may review escalations"),
    ):
        problems += _subset_problems(name, data.get(name), want[name], what)
    if data.get("allow_managed_hooks_only") is not True:
        problems.append("allow_managed_hooks_only is not true: a config layer's hook may run")
    features = data.get("features")
    for name, pinned in want["features"].items():
        flag = features.get(name) if isinstance(features, dict) else None
        if flag is not pinned:
            problems.append(f"features.{name} is not pinned to {value(pinned)}")
    problems += _mcp_problems(data.get("mcp_servers"), want["mcp_servers"])
    default = data.get("default_permissions")
    if default not in ours:
        problems.append(
            f"default_permissions is {default!r}, not one of profilec's profiles"
            if default is not None
            else "no default_permissions"
        )
    return problems


def _subset_problems(name: str, installed: Any, want: list[Any], what: str) -> list[str]:
    """An installed allow-list must be present, allow something, and allow nothing profilec's
    modes do not use."""
    if not isinstance(installed, list):
        return [f"no {name}: {what}"]
    if not installed:
        return [f"{name} allows nothing"]
    extra = [v for v in installed if v not in want]
    return [f"{name} also allows {value(v)}" for v in extra]


def _mcp_problems(installed: Any, want: dict[str, Any]) -> list[str]:
    """The installed allow-list must be present and allow no server profilec did not vouch for,
    each by the same command line."""
    if not isinstance(installed, dict):
        return ["no [mcp_servers]: Codex may start any MCP server a config layer names"]
    problems: list[str] = []
    for name in sorted(installed):
        if name not in want:
            problems.append(f"mcp_servers also allows {name}")
        elif installed[name] != want[name]:
            problems.append(f"mcp_servers.{name} allows another command line")
    return problems
