"""The reviewed policy in `profiles/`: one base profile per ACP mode
(schemas/policy-profile.schema.json), the mode map (mode-map), the trusted base (trusted-base)
and the parent policy (parent-policy).
"""

# No `from __future__ import annotations` here: pydantic would have to compile and evaluate
# every field's annotation string when each model class is created (on every compile, which
# validates these); the classes are defined before use, so no annotation needs deferring.

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from .base import AbsPath, Frozen, ModeName, Slug, new_dict, new_list

#: The ACP session modes Codex advertises, in the order profilec compiles and reports them.
ACP_MODES: tuple[str, ...] = ("read-only", "agent", "agent-full-access")
PolicyAccess = Literal["read", "write", "deny", "none"]


class TrustedBasePolicy(Frozen):
    """`profiles/trusted-base.toml`: what no mode may write and which sockets every mode denies."""

    schema_version: Literal[1]
    rationale: str
    #: Directories every mode leaves read-only (an entry is added only where a mode could write).
    read_only: list[AbsPath] = Field(default_factory=new_list)
    #: Paths every mode denies (container-engine and control sockets): read-only is not enough,
    #: a `connect()` needs no write access to the socket file (measured, docs/paths.md).
    deny: list[AbsPath] = Field(default_factory=new_list)
    #: Paths found on the compiling host: `python-site-packages` = this interpreter's
    #: site-packages (profilec and an embedding daemon import from there).
    #: `profilec-installation` = sys.prefix, sys.base_prefix and the profilec package itself
    #: (bin/ included); `codex-binary` = the directory of the pinned Codex install and of the
    #: `codex` on PATH.
    discover: list[Literal["python-site-packages", "profilec-installation", "codex-binary"]] = (
        Field(default_factory=new_list)
    )


ParentValue = bool | str | list[str]


class ParentSetting(Frozen):
    """One config key every compiled output sets on the trusted Codex parent, with its road."""

    #: `table.key`, two bare segments (a `-c` key: no path, no quoting).
    key: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")]
    value: ParentValue
    #: The parent road it closes (docs/parent.md).
    road: Slug
    #: The Codex versions it was measured on (`>=x.y.z,<=x.y.z`).
    codex_versions: Annotated[str, StringConstraints(pattern=r"^[<>=]=?[0-9.]+(,[<>=]=?[0-9.]+)*$")]
    rationale: str


class ParentPolicy(Frozen):
    """`profiles/parent.toml`: what every compiled output sets on the trusted Codex parent."""

    schema_version: Literal[1]
    rationale: str
    settings: Annotated[list[ParentSetting], Field(min_length=1)]


FilesystemValue = PolicyAccess | dict[str, PolicyAccess]


class NetworkPolicy(Frozen):
    """The network part of a base profile; only `enabled` is policy here."""

    enabled: bool = False


class ModeProfilePolicy(Frozen):
    """A reviewed base profile for one ACP mode (`profiles/<mode>.toml`)."""

    schema_version: Literal[1]
    mode: ModeName
    description: str
    rationale: str
    extends: Literal[":read-only", ":workspace"] | None = None
    #: Compile adds a `write` entry on each compiled (canonical) workspace root (provenance
    #: `workspace-root`). Never the session cwd: `:workspace` (`:workspace_roots` = write)
    #: makes whatever directory the client starts the session in writable.
    write_workspace_roots: bool = False
    filesystem: dict[str, FilesystemValue] = Field(default_factory=new_dict)
    glob_scan_max_depth: Annotated[int, Field(ge=1)] | None = None
    network: NetworkPolicy = Field(default_factory=NetworkPolicy)


ApprovalPolicy = Literal["untrusted", "on-failure", "on-request", "never"]
ApprovalsReviewer = Literal["user", "auto_review"]


class ModeMapEntry(Frozen):
    """Which base profile serves an ACP mode, the compiled profile's id, and the approval
    behaviour the mode advertises (Codex `approval_policy` and `approvals_reviewer`)."""

    profile_id: Slug
    base: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}\.toml$")]
    approval_policy: ApprovalPolicy | None = None
    approvals_reviewer: ApprovalsReviewer | None = None


class ModeMap(Frozen):
    """`profiles/modes.toml`: ACP mode -> base profile; default_mode picks default_permissions."""

    schema_version: Literal[1]
    default_mode: ModeName
    modes: dict[ModeName, ModeMapEntry]
    #: Account apps/connectors (Codex 0.171.0 `features.apps`); policy keeps them off.
    account_apps: bool = False
