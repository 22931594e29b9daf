"""`requirements`: Codex's managed requirements (`/etc/codex/requirements.toml` on Linux).

Requirements are constraints, not defaults: no client, turn, adapter mode, project layer or `-c`
override can loosen them. The document holds exactly the keys measured to matter on Codex
0.171.0 and 0.166.0 (docs/requirements.md, each with a control that leaks without it):

* `[permissions.filesystem] deny_read`: every vault of the manifest. Held in every mode, the
  adapters' built-in legacy modes included (a legacy `workspace-write` turn got `Permission
  denied`), and whatever a client does to the profiles' own entries with `-c`.
* `[allowed_permission_profiles]` (profilec's mode profiles only) and `default_permissions`
  (the default mode's profile): a session that asks for anything else (a built-in
  `:workspace`, a legacy `sandbox_mode` such as `danger-full-access`) runs under the default
  profile instead ("sandbox: custom permissions"), so the session cwd never becomes a writable
  root through a built-in mode. A Codex whose config does not define these profiles refuses to
  start ("requirements.toml allowed_permission_profiles refers to undefined profile ...").
* `allowed_approval_policies` and `allowed_approvals_reviewers`: exactly what profilec's modes
  run under, `on-request` spelled as its granular equivalent (emit/extras.approval_value). Every
  built-in mode of codex-acp sends `on-request` (or `never` with full access) on each turn, so
  Codex refuses those turns ("invalid value for `approval_policy`: `OnRequest` is not in the
  allowed set [Granular(...)]"), and the built-in `agent` mode's `auto_review` reviewer too:
  no turn runs a legacy workspace-write policy, whose tree (the cwd, /tmp, $TMPDIR, a client's
  additional directories) profilec does not control.
* `[mcp_servers]`: the vouched servers by their exact command line (`codex sandbox ...`,
  compiler/emit/mcp_servers.py), an empty `[mcp_servers]` without any. Codex starts no server whose
  name is not listed or whose executable and arguments differ, silently (no message), and none
  under an empty table. It does not pin a server's `cwd` or `env` (a Codex identity has
  neither): those hold at the config layer only.

Without vouched MCP servers the document is the same for every identity of one manifest (the
vaults of them all; the writer locks and another identity's whole CODEX_HOME and HOME stay
denied by the compiled profiles, which the allowed-profile pin makes the only profiles a session
can run), so one host file serves a daemon's every session. With them it names each server's
command line, which carries the identity's read-only profile: bind it per session (the plan).
`install_requirements` writes it atomically and refuses to replace a file it did not write;
`requirements_problems` says whether an installed file (profilec's or a host's own, merged by
hand) is at least as strict.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from typing import Annotated, Any, Literal

from pydantic import Field

from ..codex.vocabulary import DEFAULT_APPROVAL_POLICY, REQUIREMENTS_FILE, REVIEWER_USER
from ..errors import OutputError, UnsafeRootError
from ..fsio import write_atomic
from ..inputs import Inputs
from ..models import AbsPath, CompiledBundle, Frozen, Slug
from ..paths import is_within
from .extras import approval_value
from .mcp_servers import requirement_tables
from .tomltext import key, value


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
    allowed_permission_profiles: Annotated[dict[Slug, Literal[True]], Field(min_length=1)]
    permissions: PermissionsRequirements
    #: The only MCP servers Codex may start (the vouched ones, by exact command line); an empty
    #: table allows none.
    mcp_servers: dict[McpName, McpServerRequirement]


#: The first line of every document profilec writes; `install_requirements` replaces only a
#: file that starts with it.
HEADER = "# Generated by profilec (Codex managed requirements); do not edit.\n"


def deny_read_paths(bundle: CompiledBundle) -> list[str]:
    """Every vault and credential store of the manifest, canonical, minimal (a vault inside a
    store or another vault folds into it), sorted: the same list for every identity of one
    manifest.

    The writer's lock stays with the compiled profiles (every allowed profile denies it): a
    `deny_read` on another identity's lock sits inside that identity's CODEX_HOME, which the
    profiles deny whole, and Codex then refuses to start every command (measured, 0.171.0 and
    0.166.0: `bwrap: Can't create file at .../auth.lock: Read-only file system`). For the same
    reason a vault inside another identity's denied CODEX_HOME or HOME is refused.
    """
    stores = {f.path for f in bundle.other_identities if f.what == "credential-store"}
    kept: list[str] = []
    for p in sorted({root.vault for root in bundle.roots} | stores):  # parents sort first
        if not any(is_within(p, k) for k in kept):
            kept.append(p)
    for vault in kept:
        if vault in stores:
            continue
        for f in bundle.other_identities:
            if f.what != "credential-store" and is_within(vault, f.path):
                raise UnsafeRootError(
                    f"vault {vault} sits inside identity {f.identity}'s {f.what} {f.path}, "
                    "which this session's profiles deny whole; Codex refuses a managed "
                    "deny_read inside it",
                    where="requirements",
                    hint="put each credential in a 0700 directory of its own (docs/vaults.md)",
                )
    return kept


def allowed_approvals(bundle: CompiledBundle) -> tuple[list[Any], list[str]]:
    """(approval policies, reviewers) profilec's modes run under, as emitted, each once, in
    mode order: a mode without its own keys runs under Codex's defaults (`on-request`, spelled
    granular, and `user`)."""
    policies: list[Any] = []
    reviewers: list[str] = []
    for mode in sorted({p.mode for p in bundle.profiles}):
        keys = bundle.mode_approvals.get(mode, {})
        policy = approval_value(keys.get("approval_policy", DEFAULT_APPROVAL_POLICY))
        reviewer = keys.get("approvals_reviewer", REVIEWER_USER)
        if policy not in policies:
            policies.append(policy)
        if reviewer not in reviewers:
            reviewers.append(reviewer)
    return policies, reviewers


def requirements_data(bundle: CompiledBundle) -> dict[str, Any]:
    """The requirements as TOML data (what `render_requirements` writes)."""
    policies, reviewers = allowed_approvals(bundle)
    return {
        "default_permissions": bundle.default_profile_id,
        "allowed_approval_policies": policies,
        "allowed_approvals_reviewers": reviewers,
        "allowed_permission_profiles": {p.profile_id: True for p in bundle.profiles},
        "permissions": {"filesystem": {"deny_read": deny_read_paths(bundle)}},
        "mcp_servers": requirement_tables(bundle),
    }


def render_requirements(bundle: CompiledBundle) -> str:
    """The document's text: the header, then the keys in a fixed order."""
    data = requirements_data(bundle)
    lines = [
        HEADER.rstrip("\n"),
        f"default_permissions = {value(data['default_permissions'])}",
        f"allowed_approval_policies = {value(data['allowed_approval_policies'])}",
        f"allowed_approvals_reviewers = {value(data['allowed_approvals_reviewers'])}",
        "",
        "[allowed_permission_profiles]",
        *(f"{key(k)} = {value(v)}" for k, v in data["allowed_permission_profiles"].items()),
        "",
        "[permissions.filesystem]",
        "deny_read = [",
        *(f"  {value(p)}," for p in data["permissions"]["filesystem"]["deny_read"]),
        "]",
        "",
        *_mcp_lines(data["mcp_servers"]),
    ]
    return "\n".join(lines) + "\n"


def _mcp_lines(servers: dict[str, Any]) -> list[str]:
    """An empty `[mcp_servers]` (no server may start), or one identity table per server."""
    if not servers:
        return ["[mcp_servers]"]
    lines: list[str] = []
    for name, req in servers.items():
        command = req["identity"]["command"]
        lines += [
            f"[mcp_servers.{key(name)}.identity.command]",
            f"executable = {value(command['executable'])}",
            "args = [",
            *(f'  {{ match = "exact", value = {value(a["value"])} }},' for a in command["args"]),
            "]",
            "",
        ]
    return lines[:-1]


def digest(text: str) -> str:
    """sha256 of a document's text, as `sha256:<hex>`."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def read_requirements(edge: Inputs, path: str) -> str | None:
    """The installed document's text through the run's edge, trust-checked like the roots
    manifest (Codex reads it as configuration of every session on the host: a file others can
    write is refused, TrustError); None when there is none."""
    if not os.path.lexists(path):
        return None
    return edge.trusted(path).data.decode("utf-8", errors="replace")


def install_requirements(
    bundle: CompiledBundle, edge: Inputs, path: str = REQUIREMENTS_FILE
) -> bool:
    """Write the document at `path` (0644, atomic); False when it was already current.

    A file there that profilec did not write (no HEADER first line) is never replaced: merge
    profilec's keys into it by hand (`--format requirements` prints them), then `check
    --requirements` verifies the merge.
    """
    text = render_requirements(bundle)
    current = read_requirements(edge, path)
    if current == text:
        return False
    if current is not None and not current.startswith(HEADER):
        raise OutputError(
            "a managed requirements file profilec did not write is in place; merge "
            "`profilec compile --format requirements` into it by hand",
            where=path,
        )
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    write_atomic(path, text.encode("utf-8"), mode=0o644)
    return True
