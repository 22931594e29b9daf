"""Codex's vocabulary, written once: specials, built-in profiles, keys, carve-outs, policies.

Everything here is a fact about the real Codex (measured on 0.171.0, docs/codex-semantics.md and
shared/research/codex-enforcement.md), not a policy choice. The policy loader, the evaluator, the
lints, the session sanitizer and the e2e harness import these names instead of spelling the
literals again, so they cannot disagree (tests/unit/test_vocabulary_homes.py bans the literals
elsewhere). Pure data and two pure functions: no I/O, no pydantic.
"""

from __future__ import annotations

import re
from typing import Literal

#: The access a filesystem entry grants (Codex's FileSystemAccessMode; "none" is the legacy
#: spelling of "deny" that policy files may use, models.PolicyAccess).
Access = Literal["read", "write", "deny"]

# ---------------------------------------------------------------------------------------------
# Versions

#: The Codex release profilec targets by default (`PROFILEC_CODEX_VERSION` overrides it).
DEFAULT_CODEX_VERSION = "0.171.0"
#: The release the enforcement model (evaluate.enforce, the PC030-PC039 lints) was measured on.
ENFORCEMENT_VERSION = "0.171.0"
#: The releases the enforcement lints were measured on (0.165.0 by the differential tester).
MEASURED_RANGE = ">=0.165.0,<=0.171.0"
#: `[permissions]` and `default_permissions` exist from this release on (PC019).
PROFILES_RANGE = "<0.113.0"
#: `extends` exists from this release on (PC020).
EXTENDS_RANGE = "<0.133.0"
#: The releases that reject a nested `:workspace_roots` table under `extends` (PC021).
NESTED_WORKSPACE_ROOTS_RANGE = ">=0.148.0-alpha.0,<0.149.0"
#: Before this release a deny glob's pattern part matches each file's name below its literal
#: prefix, not the path (codex.enforced.EnforcementModel; measured on 0.166.0).
NAME_GLOB_FIXED = (0, 171, 0)


def parse_version(v: str) -> tuple[int, int, int, int, str]:
    """`x.y.z[-pre]` as a sortable tuple; a pre-release sorts before its release."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?", v.strip())
    if not m:
        return (0, 0, 0, 0, v)
    pre = m.group(4)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), 0 if pre else 1, pre or "")


def in_range(version: str, spec: str | None) -> bool:
    """True when `version` satisfies every comparator of `spec` (e.g. ">=0.148.0,<0.149.0")."""
    if spec is None:
        return True
    v = parse_version(version)
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(<=|>=|<|>|==)\s*(\S+)\s*", part)
        if not m:
            raise ValueError(f"bad version range {spec!r}")
        op, other = m.group(1), parse_version(m.group(2))
        ok = {
            "<": v < other,
            "<=": v <= other,
            ">": v > other,
            ">=": v >= other,
            "==": v == other,
        }[op]
        if not ok:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Profiles

BUILTIN_READ_ONLY = ":read-only"
BUILTIN_WORKSPACE = ":workspace"
BUILTIN_FULL = ":danger-full-access"
#: The built-in profiles; none of them hides a credential.
BUILTIN_PROFILES: tuple[str, ...] = (BUILTIN_READ_ONLY, BUILTIN_WORKSPACE, BUILTIN_FULL)
#: The built-ins a user profile may `extend` (extending :danger-full-access is rejected).
EXTENSIBLE_BUILTINS: tuple[str, ...] = (BUILTIN_READ_ONLY, BUILTIN_WORKSPACE)
#: The keys Codex reads inside `[permissions.<id>]`; any other is dropped silently.
PROFILE_KEYS = frozenset({"description", "extends", "workspace_roots", "filesystem", "network"})
#: The keys Codex reads inside a profile's `network` table.
NETWORK_KEYS = frozenset(
    {
        "enabled",
        "proxy_url",
        "enable_socks5",
        "socks_url",
        "enable_socks5_udp",
        "allow_upstream_proxy",
        "dangerously_allow_non_loopback_proxy",
        "dangerously_allow_all_unix_sockets",
        "mode",
        "domains",
        "unix_sockets",
        "allow_local_binding",
        "mitm",
    }
)

# ---------------------------------------------------------------------------------------------
# Filesystem keys

#: The whole filesystem, `/`.
SPECIAL_ROOT = ":root"
#: The platform's minimal read set (`MINIMAL_LINUX` on Linux).
SPECIAL_MINIMAL = ":minimal"
#: The workspace roots (the session cwd and any extra roots); takes a scoped table.
SPECIAL_WORKSPACE_ROOTS = ":workspace_roots"
#: `:project_roots` is the older spelling of `:workspace_roots`; Codex 0.171.0 still accepts it.
SPECIAL_PROJECT_ROOTS = ":project_roots"
#: `$TMPDIR` (covers nothing when TMPDIR is unset).
SPECIAL_TMPDIR = ":tmpdir"
#: `/tmp`.
SPECIAL_SLASH_TMP = ":slash_tmp"
SPECIAL_ALIASES: dict[str, str] = {SPECIAL_PROJECT_ROOTS: SPECIAL_WORKSPACE_ROOTS}
#: Every `:special` Codex knows; an unknown one is accepted silently and grants nothing.
SPECIALS = frozenset(
    {
        SPECIAL_ROOT,
        SPECIAL_MINIMAL,
        SPECIAL_WORKSPACE_ROOTS,
        SPECIAL_TMPDIR,
        SPECIAL_SLASH_TMP,
        *SPECIAL_ALIASES,
    }
)
#: The specials that take a scoped table of sub-paths.
SCOPABLE_SPECIALS = frozenset({SPECIAL_WORKSPACE_ROOTS, SPECIAL_PROJECT_ROOTS})
#: `:minimal` on Linux (`LINUX_PLATFORM_DEFAULT_READ_ROOTS` in codex-rs/linux-sandbox).
MINIMAL_LINUX: tuple[str, ...] = (
    "/bin",
    "/sbin",
    "/usr",
    "/etc",
    "/lib",
    "/lib64",
    "/nix/store",
    "/run/current-system/sw",
)
#: Names the sandbox keeps read-only inside every writable root.
CARVE_OUTS: tuple[str, ...] = (".git", ".agents", ".codex", ".aws")

# ---------------------------------------------------------------------------------------------
# Config keys

#: The legacy sandbox settings: in a higher layer or a later turn they replace the profile.
LEGACY_SANDBOX_KEYS: tuple[str, ...] = ("sandbox_mode", "sandbox_workspace_write")
#: Top-level config tables a parent setting (profiles/parent.toml) may not touch: the compiled
#: profiles, their selection and the legacy sandbox keys belong to compile, trust to extras.
PARENT_FORBIDDEN_PREFIXES: frozenset[str] = frozenset(
    {
        "permissions",
        "default_permissions",
        "profiles",
        "profile",
        "projects",
        "mcp_servers",
        "sandbox_mode",
        "sandbox_workspace_write",
    }
)
#: What agent config (a session config) must never set: the profile and its selection.
SESSION_FORBIDDEN_KEYS: tuple[str, ...] = (
    "permissions",
    "default_permissions",
    *LEGACY_SANDBOX_KEYS,
)

# ---------------------------------------------------------------------------------------------
# CODEX_HOME

#: The lock Codex's credential writer takes in CODEX_HOME itself (not in the vault) before every
#: save; a model command that can open it can flock it and stall the save (measured on 0.171.0:
#: `codex login --with-api-key` took 10.09 s with the lock held, 0.05 s with a deny on it). Codex
#: leaves the file in place, so a deny on it is a lasting mask once the file exists.
WRITER_LOCK = "auth.lock"

# ---------------------------------------------------------------------------------------------
# Managed requirements

#: Where Codex reads managed requirements on Linux: constraints no client, turn, mode, project
#: layer or `-c` override can loosen (shared/research/codex-requirements.md, docs/requirements.md).
REQUIREMENTS_FILE = "/etc/codex/requirements.toml"

# ---------------------------------------------------------------------------------------------
# Approvals, legacy sandbox modes, project trust

#: `approval_policy` (config) / `approvalPolicy` (app-server turn/start) values.
APPROVAL_UNTRUSTED = "untrusted"
APPROVAL_ON_FAILURE = "on-failure"
APPROVAL_ON_REQUEST = "on-request"
APPROVAL_NEVER = "never"
APPROVAL_POLICIES: tuple[str, ...] = (
    APPROVAL_UNTRUSTED,
    APPROVAL_ON_FAILURE,
    APPROVAL_ON_REQUEST,
    APPROVAL_NEVER,
)
#: `AskForApproval`'s default in codex-rs: what a mode that sets no `approval_policy` runs under.
DEFAULT_APPROVAL_POLICY = APPROVAL_ON_REQUEST
#: `on-request` spelled as Codex's `granular` policy with every kind of prompt allowed: the
#: same questions reach the user, but it is a value no ACP adapter's built-in mode sends (they
#: send `on-request` or `never`), so managed requirements that allow only it refuse every
#: built-in legacy mode's turn (measured on 0.171.0 and 0.166.0, docs/requirements.md). The
#: config spelling (TOML) and the app-server's (JSON) are the same table.
GRANULAR_ASK_ALL: dict[str, dict[str, bool]] = {
    "granular": {
        "sandbox_approval": True,
        "rules": True,
        "skill_approval": True,
        "request_permissions": True,
        "mcp_elicitations": True,
    }
}
#: `approvals_reviewer` values: `auto_review` lets a model decide escalations (the built-in
#: `agent` mode of codex-acp sends it).
REVIEWER_USER = "user"

#: Legacy `sandbox_mode` (config) / `sandbox` (app-server thread/start, fork, resume) values.
SANDBOX_READ_ONLY = "read-only"
SANDBOX_WORKSPACE_WRITE = "workspace-write"
SANDBOX_DANGER_FULL_ACCESS = "danger-full-access"
SANDBOX_MODES: tuple[str, ...] = (
    SANDBOX_READ_ONLY,
    SANDBOX_WORKSPACE_WRITE,
    SANDBOX_DANGER_FULL_ACCESS,
)
#: The `type` tags of a legacy app-server `sandboxPolicy` (turn/start, command/exec).
SANDBOX_POLICY_READ_ONLY = "readOnly"
SANDBOX_POLICY_WORKSPACE_WRITE = "workspaceWrite"
SANDBOX_POLICY_DANGER_FULL_ACCESS = "dangerFullAccess"
SANDBOX_POLICY_EXTERNAL = "externalSandbox"
#: The legacy values that run model commands with no Codex sandbox at all.
UNSANDBOXED: tuple[str, ...] = (
    SANDBOX_POLICY_DANGER_FULL_ACCESS,
    SANDBOX_DANGER_FULL_ACCESS,
    SANDBOX_POLICY_EXTERNAL,
)

#: `projects."<path>".trust_level` values: a trusted project's `.codex/` config layer loads.
TRUST_TRUSTED = "trusted"
TRUST_UNTRUSTED = "untrusted"
