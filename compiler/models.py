"""Frozen, typed data models for every format profilec reads or emits.

Inputs: the daemon-owned roots manifest, the policy in `profiles/` (one base profile per ACP
mode plus the mode map), and the launch layout. Outputs: resolved roots and the CompiledBundle
that every renderer formats. `schemas/` holds the JSON Schema of each; tests/unit/test_schemas.py
proves the two agree.
"""

# No `from __future__ import annotations` here: pydantic would have to compile and evaluate
# every field's annotation string when each model class is created (about a quarter of this
# module's import time); the classes are defined before use, so no annotation needs deferring.

from collections.abc import Callable
from typing import Annotated, Any, Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from .codex.vocabulary import Access
from .literal import literal_key

#: The ACP session modes Codex advertises, in the order profilec compiles and reports them.
ACP_MODES: tuple[str, ...] = ("read-only", "agent", "agent-full-access")

PolicyAccess = Literal["read", "write", "deny", "none"]
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
ModeName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
AbsPath = Annotated[str, StringConstraints(pattern=r"^/", min_length=1)]


def _new_list() -> list[Any]:
    """An empty list, the default of a list field. A Python function, not `list`: pydantic reads
    a default factory's signature, and the first builtin's costs a tokenizer pass (~2 ms)."""
    return []


def _new_dict() -> dict[str, Any]:
    """An empty dict, the default of a mapping field (a Python function, as `_new_list`)."""
    return {}


class Frozen(BaseModel):
    """Base for all models: immutable, unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class _Shape(NamedTuple):
    """One Built class's fields: a dict of them in declaration order (the order validation
    fills `__dict__` in) holding each default, the required names, the default factories."""

    template: dict[str, Any]
    required: frozenset[str]
    factories: tuple[tuple[str, Callable[[], Any]], ...]


_SHAPES: dict[type, _Shape] = {}
_set = object.__setattr__


def _shape(cls: type[BaseModel]) -> _Shape:
    """`cls`'s _Shape, computed on first use."""
    template: dict[str, Any] = {}
    required: set[str] = set()
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        template[name] = None if info.is_required() else info.default
        if info.default_factory is not None:
            factories.append((name, cast("Callable[[], Any]", info.default_factory)))
        elif info.is_required():
            required.add(name)
    _SHAPES[cls] = shape = _Shape(template, frozenset(required), tuple(factories))
    return shape


class Built(Frozen):
    """Base of what profilec builds itself from values already validated at the edge: resolved
    roots and home, trusted paths, other identities, compiled entries and profiles, the bundle.

    Calling such a class builds the instance without pydantic's run-time validation. Every
    value in it is already typed: mypy --strict checks each call's field names and types, and
    the strings came from validated inputs or from lstat/readlink at the edge. Validating would
    first build each class's validator, in every process: about 7 ms of a 10-root
    `profilec compile` (docs/performance.md). A name that is no field, or a required field left
    out, is still a TypeError here.

    Reading one back (`model_validate`, `model_validate_json`: a bundle file) validates in full:
    `__pydantic_base_init__` tells pydantic this `__init__` is not a custom one, so its
    validator never calls it. tests/unit/test_built.py proves that a validated copy of every
    model a compile builds equals the original, field order included.
    """

    def __init__(self, **data: Any) -> None:
        shape = _SHAPES.get(type(self)) or _shape(type(self))
        values = shape.template.copy()
        values.update(data)  # a key already there keeps its place: declaration order
        if len(values) != len(shape.template) or not data.keys() >= shape.required:
            name = type(self).__name__
            unknown = sorted(set(data) - set(shape.template))
            if unknown:
                raise TypeError(f"{name}: no field named {', '.join(unknown)}")
            missing = sorted(shape.required - set(data))
            raise TypeError(f"{name}: missing field `{'`, `'.join(missing)}`")
        for key, factory in shape.factories:
            if key not in data:
                values[key] = factory()
        _set(self, "__dict__", values)
        _set(self, "__pydantic_fields_set__", set(data))
        _set(self, "__pydantic_extra__", None)
        _set(self, "__pydantic_private__", None)

    # pydantic's own marker for "not a custom __init__" (BaseModel.__init__ carries it): the
    # validator builds instances itself and never calls this one.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# Inputs


class RootSpec(Frozen):
    """One protected credential root as the daemon declares it."""

    id: Slug
    path: AbsPath
    backend: Slug | None = None
    description: str | None = None
    allow_missing: bool = False


class TrustedBaseSpec(Frozen):
    """The manifest's optional `[trusted_base]`: the launcher's own binaries and sockets.

    `read_only`: directories no mode may write (the codex binary's directory, node, the adapter
    install); `deny`: paths every mode denies (the daemon's control sockets). They add to the
    reviewed `profiles/trusted-base.toml`; each must exist when compile runs.
    """

    read_only: list[AbsPath] = Field(default_factory=_new_list)
    deny: list[AbsPath] = Field(default_factory=_new_list)


class IdentitySpec(Frozen):
    """One agent identity a daemon runs from this manifest: its private CODEX_HOME and HOME.

    A session compiled for one identity (`--codex-home`) denies every other identity's
    CODEX_HOME and HOME whole (transcripts, shell snapshots, the writer's lock, login files).
    A codex root's link directory is an identity's CODEX_HOME without being declared here;
    declare an identity to name its HOME too.
    """

    id: Slug
    codex_home: AbsPath
    home: AbsPath | None = None


class RootsManifest(Frozen):
    """The daemon-owned roots manifest (TOML)."""

    schema_version: Literal[1]
    roots: Annotated[list[RootSpec], Field(min_length=1)]
    trusted_base: TrustedBaseSpec | None = None
    identities: list[IdentitySpec] = Field(default_factory=_new_list)
    #: Directories the daemon keeps every identity's credential vault in, today's and those it
    #: provisions later: every mode and the managed requirements deny each whole, so a vault
    #: created while a session runs is denied from its first byte (no recompile needed).
    credential_stores: list[AbsPath] = Field(default_factory=_new_list)


class TrustedBasePolicy(Frozen):
    """`profiles/trusted-base.toml`: what no mode may write and which sockets every mode denies."""

    schema_version: Literal[1]
    rationale: str
    #: Directories every mode leaves read-only (an entry is added only where a mode could write).
    read_only: list[AbsPath] = Field(default_factory=_new_list)
    #: Paths every mode denies (container-engine and control sockets): read-only is not enough,
    #: a `connect()` needs no write access to the socket file (measured, docs/paths.md).
    deny: list[AbsPath] = Field(default_factory=_new_list)
    #: Paths found on the compiling host: `python-site-packages` = this interpreter's
    #: site-packages (profilec and an embedding daemon import from there).
    #: `profilec-installation` = sys.prefix, sys.base_prefix and the profilec package itself
    #: (bin/ included); `codex-binary` = the directory of the pinned Codex install and of the
    #: `codex` on PATH.
    discover: list[Literal["python-site-packages", "profilec-installation", "codex-binary"]] = (
        Field(default_factory=_new_list)
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
    filesystem: dict[str, FilesystemValue] = Field(default_factory=_new_dict)
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


class LaunchLayout(Frozen):
    """Launch paths from CLI flags: workspace roots and the private CODEX_HOME."""

    workspace_roots: tuple[AbsPath, ...] = ()
    codex_home: AbsPath | None = None
    #: HOME of the session's commands, when the launcher names it (a vault must not hold it).
    home: AbsPath | None = None
    #: TMPDIR of the Codex parent, when the launcher names it: `:tmpdir` is writable in agent
    #: mode, so protected paths below it get their ancestors pinned too (canonical).
    tmpdir: AbsPath | None = None


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
    what: Literal["codex-home", "home", "credential-store"]


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
    stripped_session_classes: dict[str, str] = Field(default_factory=_new_dict)
    #: Mode -> {"approval_policy": ..., "approvals_reviewer": ...} from profiles/modes.toml.
    mode_approvals: dict[str, dict[str, str]] = Field(default_factory=_new_dict)
    #: Account apps/connectors on (`features.apps`); from profiles/modes.toml.
    account_apps: bool = False
    #: Paths marked `projects."<path>".trust_level = "untrusted"`: every workspace root as given
    #: and canonical, and the project root (`.git`) above it (Codex 0.171.0 honours a trusted
    #: entry under either spelling, and one for the repository root).
    untrusted_projects: tuple[str, ...] = ()
    #: Launcher-vouched MCP servers (daemon-owned file): name -> the server as it runs inside
    #: `codex sandbox` (command, args, cwd, env; compiler/mcp.py server_tables).
    vouched_mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=_new_dict)
    #: The Codex binary whose `codex sandbox` runs every vouched server (the file's `codex`).
    vouched_mcp_codex: AbsPath | None = None
    #: Per vouched server with a per-launch credential: name -> credential (acp-json only).
    vouched_mcp_credentials: dict[str, str] = Field(default_factory=_new_dict)
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
