"""Every lint rule's id, written once: one constant per rule of the registry.

The registry (compiler/check/rules.py) holds each rule's metadata; the modules that declare and
emit a rule, and the reports and harnesses that name one, use these constants instead of typing
"PCnnn" again, so a renumbered or retired id is one edit in the code and a typo is a NameError,
not a finding under an undeclared id. A constant's name is its rule's `name`, upper-cased with
`_` for `-` (tests/unit/test_vocabulary_homes.py holds the two to each other and to the
registry); the message, why and fix live only in the registry, beside the code that fires it.

The bottom layer: plain strings, no imports from the package.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------------------------
# Coverage, configuration and version lints (PC000-PC025)

COVERAGE_READABLE: Final = "PC000"
LEGACY_SANDBOX_MODE: Final = "PC001"
LEGACY_NONE: Final = "PC002"
DANGER_FULL_ACCESS: Final = "PC003"
DENY_ON_SYMLINK: Final = "PC004"
UNKNOWN_PROFILE_KEY: Final = "PC005"
UNKNOWN_SPECIAL: Final = "PC006"
DENY_PATH_MISSING: Final = "PC007"
UNBOUNDED_DENY_GLOB: Final = "PC008"
NO_DEFAULT_PERMISSIONS: Final = "PC009"
CODEX_HOME_DENIED: Final = "PC010"
HARDLINKED_TARGET: Final = "PC011"
SESSION_CONFIG_PERMISSIONS: Final = "PC012"
MODE_UNMAPPED: Final = "PC013"
HOLDER_DIR_WRITABLE: Final = "PC014"
CODEX_REJECTS_PROFILE: Final = "PC015"
COVERAGE_UNLISTED: Final = "PC016"
DENY_CROSSES_WRITABLE_SYMLINK: Final = "PC017"
PROFILE_ONLY_IN_SESSION_CONFIG: Final = "PC018"
PROFILES_UNSUPPORTED_VERSION: Final = "PC019"
EXTENDS_UNSUPPORTED_VERSION: Final = "PC020"
NESTED_WORKSPACE_ROOTS_TABLE: Final = "PC021"
CANARY_FAILED: Final = "PC022"
LEGACY_SANDBOX_REQUEST: Final = "PC023"
ANCESTOR_RENAMABLE: Final = "PC024"
TRUSTED_BASE_WRITABLE: Final = "PC025"

# ---------------------------------------------------------------------------------------------
# Sandbox start-up and enforcement (PC030-PC039)

WRITABLE_ROOT_THROUGH_SYMLINK: Final = "PC030"
WRITE_ENTRY_ON_FILE: Final = "PC031"
DENY_FILE_IN_DENIED_DIR: Final = "PC032"
READ_ENTRY_CROSSES_WRITABLE_SYMLINK: Final = "PC033"
MISSING_NESTED_ENTRIES: Final = "PC034"
CODEX_HOME_UNDER_TMP: Final = "PC035"
DENY_NOT_ENFORCED: Final = "PC036"
ENTRY_KEY_IS_SYMLINK: Final = "PC037"
INVALID_DENY_GLOB: Final = "PC038"
CWD_THROUGH_SYMLINK_DENIED: Final = "PC039"

# ---------------------------------------------------------------------------------------------
# Agent- and parent-side layers, launchers, managed requirements (PC040-PC057)

WORKSPACE_CONFIG_GRANTS: Final = "PC040"
WORKSPACE_CONFIG_PRESENT: Final = "PC041"
SESSION_CONFIG_NOT_ALLOWED: Final = "PC042"
WORKSPACE_PROJECT_TRUSTED: Final = "PC043"
ACCOUNT_APPS_ENABLED: Final = "PC044"
SESSION_CONFIG_STRIPPED: Final = "PC045"
PARENT_POLICY_MISSING: Final = "PC046"
CODEX_HOME_DOTENV: Final = "PC047"
PARENT_LISTENER: Final = "PC048"
SECRET_ON_PARENT_ARGV: Final = "PC049"
LOCK_WRITABLE: Final = "PC050"
PROJECT_DOC_LINK: Final = "PC051"
#: The trusted parent's environment does not turn its git off (GIT_DIR below /dev/null).
PARENT_GIT_ON: Final = "PC052"
SCOPED_TABLE_KEY_PATTERN_SYNTAX: Final = "PC055"
REQUIREMENTS_NOT_IN_FORCE: Final = "PC056"
REQUIREMENTS_UNNAMED: Final = "PC057"

# ---------------------------------------------------------------------------------------------
# The launch's ownership and mode prerequisites for the run-as uid (PC060-PC062)

VAULT_NOT_RUN_AS_WRITABLE: Final = "PC060"
CODEX_HOME_OWNERSHIP: Final = "PC061"
WRITER_LOCK_UNUSABLE: Final = "PC062"
#: A mode's profile makes whatever cwd the client picks writable (`:workspace_roots` = write,
#: `extends = ":workspace"`): the trusted side is writable from a session opened there.
CWD_FOLLOWING_WRITE: Final = "PC063"
#: A `.codex/config.toml` below a workspace root: an adapter that trusts the session cwd loads it
#: above profilec's config in a session opened in its directory.
NESTED_PROJECT_CONFIG: Final = "PC064"
#: A link below a workspace root to a directory outside every root: a session opened there loads
#: the project config at or above its target, which no scan of the roots covers.
PROJECT_LINK_OUTSIDE: Final = "PC065"

# ---------------------------------------------------------------------------------------------
# The trusted side's own state outside the sandbox (PC070-PC071)

#: A vouched MCP server's cwd (its wrapper's CODEX_HOME) or a launch PATH directory that the
#: run-as uid (or anyone but its owner and root) can write or replace outside the sandbox.
TRUSTED_STATE_WRITABLE: Final = "PC070"
#: `[[identities]]` that share the run-as uid without declaring their workspace roots and TMPDIR.
IDENTITY_DIRS_UNDECLARED: Final = "PC071"

# ---------------------------------------------------------------------------------------------
# Waivers (PC090)

WAIVER_EXPIRED: Final = "PC090"
#: A workspace root lies under the temp dir (/tmp, the launch TMPDIR): written whole in agent
#: mode.
WORKSPACE_UNDER_TEMP_DIR: Final = "PC091"
#: The config checked was compiled for another HOME or TMPDIR than the one check judges.
LAUNCH_CONTEXT_DIFFERS: Final = "PC092"
