"""Planted project-doc links: `AGENTS.md` or `AGENTS.override.md` in a workspace root that is a
symlink resolving into a vault, the private CODEX_HOME or another identity's directory.

Codex 0.171.0 reads the project docs of the session cwd at session start, through its sandboxed
file helper, under the session's profile. A model command can plant such a link (the workspace
is writable); measured on 0.171.0 with a link to the credential (directly or through
CODEX_HOME/auth.json), every later session whose cwd holds it fails to start:

    codex exec:  Error: thread/start: thread/start failed: error creating thread: failed to load
                 AGENTS.md instructions for environment `local`: Permission denied (os error 13)
                 (code -32603)   [exit 1]
    codex debug prompt-input:  Error: failed to load AGENTS.md instructions for environment
                 `local`: Permission denied (os error 13)   [exit 1]

It is not a leak (the helper is denied the target), but nothing else names it. Measured too,
with the cwd at the workspace root: with the `projects` entry profilec's outputs carry (the
workspace root untrusted), 0.171.0 loads no project doc there, so a root's link breaks a launch
that lacks that entry. The entry names the root only: a session whose cwd is a subdirectory
still loads that subdirectory's AGENTS.md (this module looks at each root's own docs).

One helper for `profilec watch` (drift `project-doc-link`), `profilec check` (PC051) and the
canary run's static pre-check. lstat/readlink only: a doc is never opened, a target never read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import RootChainError
from .roots import walk_chain

if TYPE_CHECKING:
    from .models.compiled import CompiledBundle

#: Files Codex 0.171.0 loads from the session cwd at session start (project docs).
PROJECT_DOCS = ("AGENTS.md", "AGENTS.override.md")


@dataclass(frozen=True, slots=True)
class PlantedDoc:
    """A project doc that is a link into a protected directory."""

    path: str
    link: str
    target: str

    @property
    def message(self) -> str:
        return (
            f"{self.path} is a symlink -> {self.link} (reaches {self.target}), into a vault or "
            "the private CODEX_HOME: every later session whose cwd holds it fails to start"
        )


def doc_paths(workspace_roots: Iterable[str]) -> tuple[str, ...]:
    """Each workspace root's project docs, in order."""
    return tuple(
        f"{ws.rstrip('/')}/{name}" for ws in dict.fromkeys(workspace_roots) for name in PROJECT_DOCS
    )


def protected_dirs(
    vaults: Iterable[str], homes: Iterable[str | None], others: Iterable[str] = ()
) -> tuple[str, ...]:
    """The directories a project doc must not lead into: vaults, CODEX_HOME spellings, and other
    identities' directories."""
    return tuple(sorted({*vaults, *(h for h in homes if h), *others}))


def bundle_protected_dirs(bundle: CompiledBundle) -> tuple[str, ...]:
    """`protected_dirs` of a compiled bundle: its vaults, both spellings of its private
    CODEX_HOME and the other identities' directories."""
    home = bundle.codex_home
    return protected_dirs(
        (r.vault for r in bundle.roots),
        (home.canonical, home.path) if home is not None else (),
        (f.path for f in bundle.other_identities),
    )


def bundle_planted_docs(bundle: CompiledBundle) -> tuple[PlantedDoc, ...]:
    """`planted_docs` over a compiled bundle's workspace roots."""
    return planted_docs(bundle.layout.workspace_roots, bundle_protected_dirs(bundle))


def link_target(path: str) -> str | None:
    """Where a project-doc link leads (lstat/readlink only), or None (not a link, or a broken or
    looping chain)."""
    try:
        target, hops, _, _ = walk_chain(path, allow_missing=True, what="project doc")
    except RootChainError:
        return None
    return target if hops else None


def reaches(target: str, protected: Iterable[str]) -> bool:
    """Whether `target` is one of `protected` or lies under one."""
    return any(target == d or target.startswith(d.rstrip("/") + "/") for d in protected)


def planted_doc(path: str, protected: Iterable[str]) -> PlantedDoc | None:
    """The planted link at `path`, or None."""
    try:
        link = os.readlink(path)
    except OSError:
        return None  # absent, or not a link
    target = link_target(path)
    if target is None or not reaches(target, protected):
        return None
    return PlantedDoc(path, link, target)


def planted_docs(
    workspace_roots: Iterable[str], protected: Iterable[str]
) -> tuple[PlantedDoc, ...]:
    """Every workspace root's project doc that is a link into a protected directory."""
    dirs = tuple(protected)
    found = (planted_doc(p, dirs) for p in doc_paths(workspace_roots))
    return tuple(f for f in found if f is not None)
