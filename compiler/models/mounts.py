"""Frozen models of the mount-plan inputs (plan layout, backend catalog) and output (MountPlan).

The layout and the catalog are read at the edge; the plan is what `build_plan` returns and every
renderer formats. `schemas/plan-layout`, `schemas/backends` and `schemas/mount-plan` are generated
from these classes by `profilec.schemagen`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    GetJsonSchemaHandler,
    StringConstraints,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from .base import AbsPath, Frozen, Slug

EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
#: A relative path spelled with `/`; segments are checked by profilec.paths, not by the pattern.
RelPath = Annotated[str, StringConstraints(min_length=1)]

#: System directories the trusted parent needs read-only to run at all (absent ones are skipped).
DEFAULT_READONLY = ("/bin", "/etc", "/lib", "/lib32", "/lib64", "/sbin", "/usr")


# ---------------------------------------------------------------------------------------------
# Layout (daemon-owned TOML)


class RemoteRoots(Frozen):
    """Extra remote roots, each mirrored to its own exact directory under `mirror_base`."""

    mirror_base: AbsPath
    roots: Annotated[tuple[RelPath, ...], Field(min_length=1)]


class HiddenPaths(Frozen):
    """Host paths the sandbox must never show (the daemon root is always hidden too)."""

    host_home: AbsPath | None = None
    sibling_homes: tuple[AbsPath, ...] = ()
    shared_temp: tuple[AbsPath, ...] = ("/tmp", "/var/tmp")
    extra: tuple[AbsPath, ...] = ()


class PlanLayout(Frozen):
    """The launch layout of one candidate: what the trusted parent is granted and what it is not."""

    schema_version: Literal[1]
    daemon_root: AbsPath
    #: The private CODEX_HOME (or the backend's login home): bound read-write.
    agent_home: AbsPath
    workspace_roots: Annotated[tuple[AbsPath, ...], Field(min_length=1)]
    #: Per-candidate state; outside agent_home; created 0700 by the launcher.
    state_dir: AbsPath
    backends: Annotated[tuple[Slug, ...], Field(min_length=1)]
    remote: RemoteRoots | None = None
    hidden: HiddenPaths = Field(default_factory=HiddenPaths)
    readonly_paths: tuple[AbsPath, ...] = DEFAULT_READONLY
    passthrough_env: tuple[EnvName, ...] = ()
    env: dict[EnvName, str] = Field(default_factory=dict)
    network: bool = False
    #: `uid[:gid]` the trusted parent runs as inside the plan (default 65534:65534). Root (0) is
    #: refused: Codex's inner sandbox cannot set up its uid map there (research §7).
    user: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,10}(:[0-9]{1,10})?$")] | None = None
    #: The daemon-owned directory holding this candidate's managed requirements
    #: (`requirements.toml`, `profilec compile --format requirements`), bound read-only over
    #: /etc/codex for a codex backend. Default `<daemon_root>/codex-requirements`: hidden from
    #: the sandbox itself, so no model command can rewrite the bound file in place.
    requirements_dir: AbsPath | None = None
    #: Opt-in: a hidden path inside a granted directory is masked with an empty tmpfs (or
    #: /dev/null for a file) after the grant. Off by default: such a layout is a LayoutError.
    mask_hidden_in_grants: bool = False


# ---------------------------------------------------------------------------------------------
# Backend catalog (profiles/backends.toml, reviewed)

KnobKind = Literal["env", "codex-config"]


class StateKnob(Frozen):
    """The knob that moves a backend's working state without moving its credential."""

    kind: KnobKind
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")]
    #: Relative path under `<state_dir>/<backend>`; absent means that directory itself.
    subpath: RelPath | None = None
    moves: str


class RejectedKnob(Frozen):
    """A knob that looks right and is wrong, with the measured reason."""

    kind: KnobKind
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")]
    reason: str


class Residue(Frozen):
    """State that still crosses candidates because no knob moves it."""

    path: str
    reason: str


class WriterFile(Frozen):
    """A file the backend's trusted writer creates or locks while it saves the credential."""

    #: The name, `X` standing for a random character (e.g. `.auth-XXXXXX`); one path segment.
    name: Annotated[str, StringConstraints(min_length=1, pattern=r"^[^/\x00]+$")]
    #: `vault`: next to the real (link-followed) credential file; `home`: in the login home.
    where: Literal["vault", "home"]
    role: Literal["temp", "lock", "backup"]
    note: str


class WriterPattern(Frozen):
    """How a backend's trusted side saves its credential (login, token refresh)."""

    #: `measured` (seen with the real binary, see evidence) or `unverified` (read or guessed).
    status: Literal["measured", "unverified"]
    #: `rename`: a new file renamed over the real one (the inode changes, links stay);
    #: `in-place`: rewritten through the same inode; `unknown`: not established.
    save: Literal["rename", "in-place", "unknown"]
    #: Whether the writer follows a symlinked credential to the real file's directory.
    follows_links: bool | None = None
    files: tuple[WriterFile, ...] = ()
    evidence: str


class Backend(Frozen):
    """One agent CLI: its state knob, rejected knobs, residue, writer pattern."""

    description: str
    state_knob: StateKnob | None = None
    #: Required when state_knob is absent: why this backend is deliberately not relocated.
    not_relocated_reason: str | None = None
    rejected_knobs: tuple[RejectedKnob, ...] = ()
    residue: tuple[Residue, ...] = ()
    writer: WriterPattern | None = None


class BackendCatalog(Frozen):
    """`profiles/backends.toml`."""

    schema_version: Literal[1]
    backends: dict[Slug, Backend]


# ---------------------------------------------------------------------------------------------
# Edge facts the pure builder needs (lstat results of the read-only system paths)


class SystemPath(Frozen):
    """One requested read-only path as the host has it."""

    path: AbsPath
    kind: Literal["dir", "file", "link", "missing"]
    link_value: str | None = None
    #: Canonical path the link resolves to (links only).
    canonical: AbsPath | None = None


class HostFacts(Frozen):
    """What the edge measured about the read-only paths; the builder does no I/O itself."""

    system: tuple[SystemPath, ...] = ()
    #: Hidden paths that exist as regular files (masked with /dev/null rather than a tmpfs).
    hidden: tuple[SystemPath, ...] = ()
    #: Directories holding what the launch runs (the pinned Codex install, the ACP adapters),
    #: canonical and existing: bound read-only unless a read-only path already covers them.
    launch_binaries: tuple[AbsPath, ...] = ()


# ---------------------------------------------------------------------------------------------
# The plan

MountType = Literal["ro-bind", "rw-bind", "tmpfs", "file-mask", "symlink", "proc", "dev"]
Purpose = Literal[
    "system",
    "readonly",
    "workspace",
    "mirror",
    "agent-home",
    "state",
    "credential",
    "hop",
    "private-tmp",
    "mask",
    "requirements",
]


class Mount(Frozen):
    """One mount, applied in plan order (a later mount covers an earlier one)."""

    # The published wire record (schemas/mount-plan.schema.json `$defs/Mount`): every kind
    # carries every column, null or false where the kind has none. The plan itself holds one
    # class per kind (`AnyMount`, below); this class only describes their JSON form.
    type: MountType
    #: Where it appears inside the sandbox; for binds also the host path (bound at its real path).
    path: AbsPath
    source: AbsPath | None = None
    #: Symlinks only: the link text, exactly as the host link holds it.
    link_value: str | None = None
    purpose: Purpose
    #: A system bind that may be absent on this host (bwrap --ro-bind-try).
    optional: bool = False
    reason: str


class _MountKind(Frozen):
    """Columns every mount kind has; each subclass adds its own and fixes `type`."""

    path: AbsPath
    purpose: Purpose
    reason: str

    def _columns(self) -> tuple[str | None, str | None, bool]:
        """The kind's (source, link_value, optional) columns of the wire record."""
        return None, None, False

    @model_serializer(mode="plain")
    def _wire(self) -> dict[str, Any]:
        """The flat wire record (`Mount`), in its column order."""
        source, link_value, optional = self._columns()
        return {
            "type": getattr(self, "type"),  # noqa: B009 (each subclass declares it)
            "path": self.path,
            "source": source,
            "link_value": link_value,
            "purpose": self.purpose,
            "optional": optional,
            "reason": self.reason,
        }


class RoBind(_MountKind):
    """A host path bound read-only at its real path."""

    type: Literal["ro-bind"] = "ro-bind"
    source: AbsPath
    #: A system bind that may be absent on this host (bwrap --ro-bind-try).
    optional: bool = False

    def _columns(self) -> tuple[str | None, str | None, bool]:
        return self.source, None, self.optional


class RwBind(_MountKind):
    """A host path bound read-write at its real path."""

    type: Literal["rw-bind"] = "rw-bind"
    source: AbsPath

    def _columns(self) -> tuple[str | None, str | None, bool]:
        return self.source, None, False


class Tmpfs(_MountKind):
    """An empty private tmpfs (private /tmp, or a mask over a hidden directory)."""

    type: Literal["tmpfs"] = "tmpfs"


class FileMask(_MountKind):
    """A hidden regular file covered with /dev/null (read-only)."""

    type: Literal["file-mask"] = "file-mask"

    def _columns(self) -> tuple[str | None, str | None, bool]:
        return FILE_MASK_SOURCE, None, False


class Symlink(_MountKind):
    """A link recreated with its own text, never bound onto."""

    type: Literal["symlink"] = "symlink"
    #: The link text, exactly as the host link holds it.
    link_value: str

    def _columns(self) -> tuple[str | None, str | None, bool]:
        return None, self.link_value, False


class Proc(_MountKind):
    """A fresh procfs of the sandbox."""

    type: Literal["proc"] = "proc"


class Dev(_MountKind):
    """A minimal private /dev."""

    type: Literal["dev"] = "dev"


#: What a file mask shows (and its wire `source`).
FILE_MASK_SOURCE = "/dev/null"


class _AsWireRecord:
    """JSON Schema of a plan mount: the flat `Mount` record its serializer writes."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # The generator itself (not `handler`, which would inline the record) so that the
        # record stays `$defs/Mount`, as published; tests/unit/test_schemas.py pins the bytes.
        Mount.model_rebuild()  # defer_build: its core schema carries the `Mount` ref
        generator = handler.generate_json_schema  # type: ignore[attr-defined]
        return generator.generate_inner(Mount.__pydantic_core_schema__)  # type: ignore[no-any-return]


#: One mount of a plan: one class per kind, no field that another kind needs. Renderers
#: dispatch on the class (`match m: case RoBind(): ...`).
PlanMount = RoBind | RwBind | Tmpfs | FileMask | Symlink | Proc | Dev
#: A plan member: read by its `type`, published as the flat `Mount` record.
AnyMount = Annotated[PlanMount, Field(discriminator="type"), _AsWireRecord]


class EnvSetting(Frozen):
    """One environment variable the sandbox sets, and who asked for it."""

    name: EnvName
    value: str
    source: str


class Directory(Frozen):
    """A host directory the launcher creates before starting the sandbox.

    `home` is the HOME the plan sets, `tmp` the TMPDIR it sets when the private CODEX_HOME lies
    under /tmp (both inside the per-candidate state dir, docs/mounts.md "Environment").
    """

    path: AbsPath
    mode: Literal["0700", "0755"]
    purpose: Literal["state", "mirror", "home", "tmp", "requirements"]


class HiddenPath(Frozen):
    """A host path the sandbox must not show, and why."""

    path: AbsPath
    reason: Literal["daemon-root", "host-home", "sibling-home", "shared-temp", "extra"]
    #: How: `absent` (nothing mounts it) or `masked` (a mask after a covering grant).
    how: Literal["absent", "masked"]


class CredentialAccess(Frozen):
    """How the trusted parent reaches one protected canonical target (read-write)."""

    target: AbsPath
    root_ids: tuple[str, ...]
    kind: Literal["file", "dir", "missing", "other"]
    #: The directory bound read-write for the save: the one holding the target (a directory
    #: root is its own vault). Never the file alone: a rename-based save needs the directory.
    #: None for a missing root (nothing is mounted).
    vault: AbsPath | None = None
    #: Every link on the way (declared path and hops), each `bind` (present through a bound
    #: directory) or `symlink` (recreated with the same text).
    links: tuple[LinkPresentation, ...] = ()
    #: `bind` (the vault has its own rw bind), `covered` (the vault is inside an rw grant), or
    #: `absent` (missing root).
    how: Literal["bind", "covered", "absent"]


class LinkPresentation(Frozen):
    """One link of a credential chain as the sandbox shows it."""

    link: AbsPath
    value: str
    how: Literal["bind", "symlink"]


class PlanWarning(Frozen):
    """A warning as data: the CLI prints it, the plan keeps it."""

    backend: str
    knob: str | None = None
    source: str
    message: str


class ResidueNote(Frozen):
    """State that still crosses candidates for a selected backend."""

    backend: str
    path: str
    reason: str


class RunAs(Frozen):
    """The uid/gid the trusted parent must run as inside the plan (never root)."""

    uid: Annotated[int, Field(ge=1)]
    gid: Annotated[int, Field(ge=0)]
    source: Literal["layout", "default"]
    reason: str


class MountPlan(Frozen):
    """The outer sandbox for the trusted parent; renderers only format this."""

    schema_version: Literal[1]
    backends: tuple[str, ...]
    network: bool
    user: str | None = None
    run_as: RunAs
    workdir: AbsPath
    mounts: tuple[AnyMount, ...]
    env: tuple[EnvSetting, ...]
    passthrough_env: tuple[str, ...] = ()
    codex_args: tuple[str, ...] = ()
    directories: tuple[Directory, ...] = ()
    hidden: tuple[HiddenPath, ...]
    credentials: tuple[CredentialAccess, ...]
    warnings: tuple[PlanWarning, ...] = ()
    residue: tuple[ResidueNote, ...] = ()

    @property
    def protected_targets(self) -> tuple[str, ...]:
        """Canonical credential targets, a target inside a dir root folded into it (sorted)."""
        return tuple(sorted(c.target for c in self.credentials))


CredentialAccess.model_rebuild()
