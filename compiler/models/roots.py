"""The daemon's declarations: the roots manifest (schemas/roots-manifest.schema.json) and the
launch layout the CLI flags give (a member of the compiled bundle).
"""

# No `from __future__ import annotations` here: pydantic would have to compile and evaluate
# every field's annotation string when each model class is created (on every compile, which
# validates these); the classes are defined before use, so no annotation needs deferring.

from typing import Annotated, Literal

from pydantic import Field

from .base import AbsPath, Frozen, Slug, new_list


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

    read_only: list[AbsPath] = Field(default_factory=new_list)
    deny: list[AbsPath] = Field(default_factory=new_list)


class IdentitySpec(Frozen):
    """One agent identity a daemon runs from this manifest: its private CODEX_HOME and HOME,
    and the directories its sessions work in.

    A session compiled for one identity (`--codex-home`) denies every other identity's
    CODEX_HOME, HOME, workspace directories and TMPDIR whole (transcripts, shell snapshots, the
    writer's lock, login files, its files in progress). A codex root's link directory is an
    identity's CODEX_HOME without being declared here; declare an identity to name the rest.
    Identities that share a run-as uid must declare `workspace_roots` and `tmpdir`: the uid's
    file permissions separate nothing between them (`check` PC073).
    """

    id: Slug
    codex_home: AbsPath
    home: AbsPath | None = None
    #: Each of the identity's workspace roots, or the directory that holds them (one per
    #: session): denied whole to every other identity's sessions.
    workspace_roots: list[AbsPath] = Field(default_factory=new_list)
    #: The identity's TMPDIR (its sessions' `--tmpdir`): denied whole to every other identity.
    tmpdir: AbsPath | None = None


class RootsManifest(Frozen):
    """The daemon-owned roots manifest (TOML)."""

    schema_version: Literal[1]
    roots: Annotated[list[RootSpec], Field(min_length=1)]
    trusted_base: TrustedBaseSpec | None = None
    identities: list[IdentitySpec] = Field(default_factory=new_list)
    #: Directories the daemon keeps every identity's credential vault in, today's and those it
    #: provisions later: every mode and the managed requirements deny each whole, so a vault
    #: created while a session runs is denied from its first byte (no recompile needed).
    credential_stores: list[AbsPath] = Field(default_factory=new_list)


class LaunchLayout(Frozen):
    """Launch paths from CLI flags: workspace roots and the private CODEX_HOME."""

    workspace_roots: tuple[AbsPath, ...] = ()
    codex_home: AbsPath | None = None
    #: HOME of the session's commands, when the launcher names it (a vault must not hold it).
    home: AbsPath | None = None
    #: TMPDIR of the Codex parent, when the launcher names it: `:tmpdir` is writable in agent
    #: mode, so protected paths below it get their ancestors pinned too (canonical).
    tmpdir: AbsPath | None = None
