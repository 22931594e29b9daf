"""The compatibility matrix (`profilec e2e`'s output, schemas/compat-matrix.schema.json):
adapter x version x launch method x session event -> deny held or not. compiler/compat_matrix.py
renders, merges and reads it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from .base import Frozen

Result = Literal["held", "lost", "not-supported", "error"]
Label = Annotated[str, StringConstraints(min_length=1, max_length=120, pattern=r"^[^\n\r|]+$")]
_EVENT = r"^[A-Za-z0-9][A-Za-z0-9:_./@+-]*$"
EventName = Annotated[str, StringConstraints(min_length=1, max_length=120, pattern=_EVENT)]
LintId = Annotated[str, StringConstraints(pattern=r"^PC[0-9]{3}$")]
Evidence = Annotated[str, StringConstraints(max_length=600, pattern=r"^[^\n\r]*$")]


class MatrixRow(Frozen):
    """One observation: did the deny hold for this adapter, launch method and session event."""

    adapter: Label
    adapter_version: Label
    codex_version: Label
    launch_method: Label
    session_event: EventName
    result: Result
    evidence: Evidence
    lint: LintId | None = None

    def key(self) -> tuple[str, str, str, str, str]:
        """The identity of a row: everything but the outcome."""
        return (
            self.adapter,
            self.adapter_version,
            self.codex_version,
            self.launch_method,
            self.session_event,
        )


class CompatibilityMatrix(Frozen):
    """The whole matrix (rows in any order; renderers sort them)."""

    schema_version: Literal[1] = 1
    rows: Annotated[list[MatrixRow], Field(default_factory=list)]
