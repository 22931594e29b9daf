"""Every lint rule's id, written once: one constant per rule of the registry.

The registry (compiler/check/rules.py) holds each rule's metadata; the modules that declare and
emit a rule, and the reports and harnesses that name one, use these constants instead of typing
"PCnnn" again, so a renumbered or retired id is one edit and a typo is a NameError, not a finding
under an undeclared id. A constant's name is its rule's `name`, upper-cased with `_` for `-`
(tests/unit/test_vocabulary_homes.py holds the two to each other and to the registry).

The bottom layer: plain strings, no imports from the package.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------------------------
# Coverage, configuration and version lints (PC000-PC025)

#: a protected root is readable or writable under some spelling in some mode
COVERAGE_READABLE: Final = "PC000"
#: sandbox_mode or sandbox_workspace_write is set in the config stack
LEGACY_SANDBOX_MODE: Final = "PC001"
#: a filesystem entry uses the legacy value `none`
LEGACY_NONE: Final = "PC002"
#: a profile extends, or a mode selects, :danger-full-access
DANGER_FULL_ACCESS: Final = "PC003"
#: a deny key is itself a symlink
DENY_ON_SYMLINK: Final = "PC004"
#: a profile (or its network table) holds a key Codex does not know
UNKNOWN_PROFILE_KEY: Final = "PC005"
#: a filesystem key is an unknown :special
UNKNOWN_SPECIAL: Final = "PC006"
#: a deny path does not exist
DENY_PATH_MISSING: Final = "PC007"
#: a `**` deny glob without filesystem.glob_scan_max_depth
UNBOUNDED_DENY_GLOB: Final = "PC008"
#: [permissions] profiles are defined but default_permissions is not set
NO_DEFAULT_PERMISSIONS: Final = "PC009"
#: CODEX_HOME is denied, which hides $CODEX_HOME/tmp/arg0
CODEX_HOME_DENIED: Final = "PC010"
#: a credential target has extra hard links
HARDLINKED_TARGET: Final = "PC011"
#: session config tries to set permissions*, default_permissions or sandbox_mode*
SESSION_CONFIG_PERMISSIONS: Final = "PC012"
#: an ACP mode has no profile mapping, or maps to a profile no config layer defines
MODE_UNMAPPED: Final = "PC013"
#: a directory holding a link, a target or the private CODEX_HOME is writable
HOLDER_DIR_WRITABLE: Final = "PC014"
#: Codex refuses to load the selected profile
CODEX_REJECTS_PROFILE: Final = "PC015"
#: no entry covers a protected root in some mode; only the lack of a grant hides it
COVERAGE_UNLISTED: Final = "PC016"
#: a deny path crosses a symlink that is writable in that mode
DENY_CROSSES_WRITABLE_SYMLINK: Final = "PC017"
#: the profiles live only in CODEX_CONFIG (thread config), not in a config layer
PROFILE_ONLY_IN_SESSION_CONFIG: Final = "PC018"
#: permission profiles need Codex >= 0.113.0
PROFILES_UNSUPPORTED_VERSION: Final = "PC019"
#: `extends` needs Codex >= 0.133.0
EXTENDS_UNSUPPORTED_VERSION: Final = "PC020"
#: a [permissions.X.filesystem.":workspace_roots"] table under extends = ":workspace"
NESTED_WORKSPACE_ROOTS_TABLE: Final = "PC021"
#: a canary probe failed (leak, decoy, control, trusted, tamper, network, mismatch, ...
CANARY_FAILED: Final = "PC022"
#: a launcher request carries a legacy sandboxPolicy (turn/start) or sandbox (thread/start)
LEGACY_SANDBOX_REQUEST: Final = "PC023"
#: a directory above a vault, a holder directory or CODEX_HOME can be renamed in some mode
ANCESTOR_RENAMABLE: Final = "PC024"
#: a trusted-base directory is writable, or a trusted-base socket not denied, in some mode
TRUSTED_BASE_WRITABLE: Final = "PC025"

# ---------------------------------------------------------------------------------------------
# Sandbox start-up and enforcement (PC030-PC039)

#: a writable root or the session cwd is spelled through a symlink
WRITABLE_ROOT_THROUGH_SYMLINK: Final = "PC030"
#: a `write` entry names a regular file: the sandbox refuses to start
WRITE_ENTRY_ON_FILE: Final = "PC031"
#: a denied directory plus a deny (exact or glob) on an existing path inside it (or on a ...
DENY_FILE_IN_DENIED_DIR: Final = "PC032"
#: a `read` entry is, or passes through, a symlink inside a writable root (or a deny key ...
READ_ENTRY_CROSSES_WRITABLE_SYMLINK: Final = "PC033"
#: two or more entries below the same missing directory inside a writable root
MISSING_NESTED_ENTRIES: Final = "PC034"
#: CODEX_HOME lies under the system temp dir ($TMPDIR or /tmp)
CODEX_HOME_UNDER_TMP: Final = "PC035"
#: a deny in the compiled policy that the sandbox does not enforce
DENY_NOT_ENFORCED: Final = "PC036"
#: a read or deny key is itself a symlink (absolute to an existing path, or relative `.`)
ENTRY_KEY_IS_SYMLINK: Final = "PC037"
#: a deny glob has an unbalanced `{` or `}` after its literal prefix
INVALID_DENY_GLOB: Final = "PC038"
#: the session cwd is spelled through a symlink and its real directory is denied
CWD_THROUGH_SYMLINK_DENIED: Final = "PC039"

# ---------------------------------------------------------------------------------------------
# Agent- and parent-side layers, launchers (PC040-PC055)

#: a workspace's .codex/config.toml sets permissions, a program, a URL or approvals
WORKSPACE_CONFIG_GRANTS: Final = "PC040"
#: a workspace root or its project root holds a .codex/config.toml
WORKSPACE_CONFIG_PRESENT: Final = "PC041"
#: a session config that reaches Codex carries a key outside the reviewed allow-list (or ...
SESSION_CONFIG_NOT_ALLOWED: Final = "PC042"
#: a config layer trusts a workspace root, a directory under one, or its repository root
WORKSPACE_PROJECT_TRUSTED: Final = "PC043"
#: account apps/connectors are not disabled (features.apps is not false)
ACCOUNT_APPS_ENABLED: Final = "PC044"
#: the agent's session config asked for a key outside the allow-list, or gave an allowed ...
SESSION_CONFIG_STRIPPED: Final = "PC045"
#: a setting of the parent policy (profiles/parent.toml) is not in force in the config stack
PARENT_POLICY_MISSING: Final = "PC046"
#: the private CODEX_HOME holds a .env file
CODEX_HOME_DOTENV: Final = "PC047"
#: the trusted parent is started with a network listener (app-server --listen ws:// or tcp)
PARENT_LISTENER: Final = "PC048"
#: a secret sits on the trusted parent's command line
SECRET_ON_PARENT_ARGV: Final = "PC049"
#: the lock file `check --lock` / `watch --lock` reads is writable in some mode
LOCK_WRITABLE: Final = "PC050"
#: a workspace root's AGENTS.md or AGENTS.override.md is a symlink into a vault or the ...
PROJECT_DOC_LINK: Final = "PC051"
#: a scoped table under a path key (absolute, or `~` expanded with HOME) that holds one ...
SCOPED_TABLE_KEY_PATTERN_SYNTAX: Final = "PC055"

# ---------------------------------------------------------------------------------------------
# Waivers (PC090)

#: a waiver has passed its expiry date
WAIVER_EXPIRED: Final = "PC090"
