"""What one compile produces: resolved roots and home, trusted paths, other identities, and the
CompiledBundle every renderer formats (schemas/compiled-bundle.schema.json). Each class is a
`Built`: profilec builds it from values already validated, and reads it back validated in full.
"""

# No `from __future__ import annotations` here: pydantic would have to compile and evaluate
# every field's annotation string when each model class is created (about a quarter of this
# module's import time); the classes are defined before use, so no annotation needs deferring.

from typing import Any, Literal

from pydantic import Field

from ..codex.vocabulary import Access
from ..literal import literal_key
from .base import AbsPath, Built, ModeName, Slug, new_dict
from .policy import FilesystemValue, ParentSetting
from .roots import LaunchLayout

# ---------------------------------------------------------------------------------------------
# Resolved roots (the only data that came from the filesystem; paths only, never contents)


class Hop(Built):
    """One symlink crossed on the way from a root's declared path to its canonical target."""

    index: int
    link: AbsPath  # where the link itself sits, with a canonical parent directory
    value: str  # readlink() text, as stored
    spelling: AbsPath  # the full path that reaches the credential through this link


class ResolvedRoot(Built):
    """A root after its link chain was walked with lstat/readlink only."""

    id: Slug
    path: AbsPath
    backend: Slug | None = None
    kind: Literal["file", "dir", "missing", "other"]
    target: AbsPath
    hops: tuple[Hop, ...] = ()
    nlink: int | None = None
    #: The directory denied as a whole in every mode: the one holding the canonical target
    #: (a directory root is its own vault). The trusted writer's temp file and lock live there,
    #: and a file deny does not survive its rename (docs/vaults.md).
    vault: AbsPath
    #: Directories a model command must not be able to write (hop parents, target parent).
    holder_dirs: tuple[AbsPath, ...] = ()
    hops_under_workspace: tuple[AbsPath, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every name that reaches the credential: declared path, each hop's path, the target."""
        seen: dict[str, None] = {self.path: None}
        for hop in self.hops:
            seen.setdefault(hop.link, None)
            seen.setdefault(hop.spelling, None)
        seen.setdefault(self.target, None)
        return tuple(seen)


class TrustedPath(Built):
    """One trusted-base path after resolution at the edge (canonical, existing)."""

    path: AbsPath
    declared: AbsPath
    access: Literal["read", "deny"]
    #: `missing` only for `input` paths: Codex masks the first missing component of a `read`
    #: entry under a writable root with an empty read-only file or directory, so the name
    #: cannot be created (measured on 0.171.0: `git init` there fails "Read-only file system").
    kind: Literal["file", "dir", "socket", "other", "missing"]
    #: `input`: profilec's own inputs and what the trusted Codex parent reads on the model's
    #: behalf (HOME's login-shell and git config files, the `.git` of enclosing repositories).
    source: Literal["policy", "manifest", "discovered", "input"]
    #: What the path is to the trusted side (input paths: "roots manifest", "HOME git config").
    role: str | None = None


class ForeignDir(Built):
    """A directory of another identity in the manifest (denied whole in every mode)."""

    path: AbsPath
    identity: str
    what: Literal["codex-home", "home", "workspace", "tmpdir", "credential-store"]


class ResolvedHome(Built):
    """The private CODEX_HOME after resolution: canonical path and the dirs holding its links."""

    path: AbsPath
    canonical: AbsPath
    holder_dirs: tuple[AbsPath, ...] = ()
    #: CODEX_HOME/.credentials.json (MCP OAuth tokens) exists (lstat at the edge).
    mcp_tokens: bool = False


# ---------------------------------------------------------------------------------------------
# Compiled output


class Provenance(Built):
    """Why an entry exists: which root (and hop) or which policy key put it there."""

    reason: Literal[
        "target",
        "vault",
        "writer-lock",
        "private-config",
        "holder-dir",
        "codex-home",
        "policy",
        "ancestor",
        "trusted-base",
        "root-split",
        "other-identity",
        "workspace-root",
    ]
    root_id: str | None = None
    hop_index: int | None = None
    detail: str | None = None


class CompiledEntry(Built):
    """One filesystem entry of a compiled profile, with where it came from."""

    path: str
    access: Access
    provenance: tuple[Provenance, ...]


def _entry_key(entry: CompiledEntry) -> str:
    """The Codex key for `entry`: its path, escaped (or refused) when it holds a glob char."""
    path = entry.path
    if "*" not in path and "?" not in path and "[" not in path and "]" not in path:
        return path

    return literal_key(path, entry.access)


class CompiledProfile(Built):
    """One Codex permission profile for one ACP mode."""

    mode: ModeName
    profile_id: Slug
    description: str
    extends: Literal[":read-only", ":workspace"] | None
    workspace_roots: tuple[AbsPath, ...]
    #: The base policy's own filesystem keys (specials, `~/`, scoped tables), unchanged.
    policy_filesystem: dict[str, FilesystemValue]
    #: Entries profilec added from the roots (denies and read-only holder dirs), sorted by path.
    entries: tuple[CompiledEntry, ...]
    glob_scan_max_depth: int | None = None
    network_enabled: bool

    def codex_table(self) -> dict[str, Any]:
        """The `[permissions.<id>]` table in Codex's own shape (no provenance)."""
        filesystem: dict[str, Any] = {}
        if self.glob_scan_max_depth is not None:
            filesystem["glob_scan_max_depth"] = self.glob_scan_max_depth
        for key in sorted(self.policy_filesystem):
            value = self.policy_filesystem[key]
            filesystem[key] = dict(sorted(value.items())) if isinstance(value, dict) else value
        for entry in self.entries:
            # A compiled entry names one literal path; the key is escaped or refused (exit 5)
            # when the path holds a glob character (compiler/literal.py).
            filesystem[_entry_key(entry)] = entry.access
        table: dict[str, Any] = {"description": self.description}
        if self.extends is not None:
            table["extends"] = self.extends
        if self.workspace_roots:
            table["workspace_roots"] = {root: True for root in self.workspace_roots}
        table["filesystem"] = filesystem
        table["network"] = {"enabled": self.network_enabled}
        return table


class Finding(Built):
    """A fact the compiler reports as data for the checker (it does not judge it)."""

    code: str
    message: str
    root_id: str | None = None
    path: str | None = None


class CompiledBundle(Built):
    """Everything one compile produced; renderers only format this."""

    profiles: tuple[CompiledProfile, ...]
    default_mode: ModeName
    roots: tuple[ResolvedRoot, ...]
    layout: LaunchLayout
    codex_home: ResolvedHome | None = None
    findings: tuple[Finding, ...] = ()
    session_config: dict[str, Any] | None = None
    stripped_session_keys: tuple[str, ...] = ()
    #: Stripped key path -> class (runs-program, redirects-credential, widens-access,
    #: changes-approvals, unknown).
    stripped_session_classes: dict[str, str] = Field(default_factory=new_dict)
    #: Mode -> {"approval_policy": ..., "approvals_reviewer": ...} from profiles/modes.toml.
    mode_approvals: dict[str, dict[str, str]] = Field(default_factory=new_dict)
    #: Account apps/connectors on (`features.apps`); from profiles/modes.toml.
    account_apps: bool = False
    #: Paths marked `projects."<path>".trust_level = "untrusted"`: every workspace root as given
    #: and canonical, and the project root (`.git`) above it (Codex 0.171.0 honours a trusted
    #: entry under either spelling, and one for the repository root).
    untrusted_projects: tuple[str, ...] = ()
    #: Launcher-vouched MCP servers (daemon-owned file): name -> the server as it runs inside
    #: `codex sandbox` (command, args, cwd, env; compiler/mcp.py server_tables).
    vouched_mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=new_dict)
    #: The Codex binary whose `codex sandbox` runs every vouched server (the file's `codex`).
    vouched_mcp_codex: AbsPath | None = None
    #: Per vouched server with a per-launch credential: name -> credential (acp-json only).
    vouched_mcp_credentials: dict[str, str] = Field(default_factory=new_dict)
    #: The trusted base every mode leaves read-only or denies (resolved, existing paths).
    trusted_base: tuple[TrustedPath, ...] = ()
    #: profiles/parent.toml: config keys every output sets on the trusted Codex parent.
    parent: tuple[ParentSetting, ...] = ()
    #: Other identities' CODEX_HOME and HOME directories (canonical), denied in every mode.
    other_identities: tuple[ForeignDir, ...] = ()

    @property
    def mode_profiles(self) -> dict[str, str]:
        """ACP mode -> compiled profile id."""
        return {p.mode: p.profile_id for p in self.profiles}

    def profile_for(self, mode: str) -> CompiledProfile:
        """The compiled profile serving `mode` (KeyError when none does)."""
        for profile in self.profiles:
            if profile.mode == mode:
                return profile
        raise KeyError(mode)

    @property
    def default_profile_id(self) -> str:
        """The profile `default_permissions` selects."""
        return self.profile_for(self.default_mode).profile_id
