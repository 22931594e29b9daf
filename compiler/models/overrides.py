"""The `overrides` format (schemas/overrides.schema.json): LF-separated `codex -c` values.

compiler/emit/overrides.py writes the lines directly and validates nothing through this model,
and no compile imports this module: a RootModel class builds its validator as it is defined, so
only schema generation and the tests pay for it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, RootModel

from .base import OverrideLine


class CodexOverrideLines(RootModel[Annotated[list[OverrideLine], Field(min_length=1)]]):
    """The `overrides` format: LF-separated `codex -c` values, shown as the array of its lines.
    Keys hold no path or :token (those sit inside inline-table values)."""

    # schemas/overrides.schema.json is generated from this model.
