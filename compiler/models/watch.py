"""`profilec watch`'s drift event (schemas/watch-event.schema.json); compiler/watch.py
prints it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from .base import AbsPath, Frozen

Role = Literal[
    "hop",
    "target",
    "vault",
    "holder",
    "codex-home",
    "private-auth",
    "writer-lock",
    "missing-root",
    "trusted-input",
    "project-doc",
    "requirements",
    "project-config",
    "workspace-root",
    "mcp-config",
]
DriftKind = Literal[
    "link-retargeted",
    "link-replaced",
    "removed",
    "replaced",
    "nlink-changed",
    "appeared",
    "private-auth-plain-file",
    "modified",
    "project-doc-link",
    "requirements-less-strict",
    "project-config-planted",
    "scan-incomplete",
    "project-config-link-outside",
]


class WatchEvent(Frozen):
    """`profilec watch`: the one JSON line printed on stdout when a change makes the compiled
    profile stale; the command then exits with `exit_code` (9). Paths and link texts only,
    never a credential byte."""

    # schemas/watch-event.schema.json is generated from this model; Drift.document dumps it.
    schema_version: Literal[1]
    event: Literal["drift"]
    kind: DriftKind
    role: Role
    path: AbsPath
    root_ids: tuple[str, ...]
    expected: str
    observed: str
    message: Annotated[str, StringConstraints(pattern=r"^[^\n\r]+$")]
    exit_code: Literal[9]
