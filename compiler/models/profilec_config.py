"""The model of the project config (`profilec.toml`, `[tool.profilec]`): waivers for `check`.

The one reader of the file: compiler/check/waivers.py validates each table with this model
(`config_waivers`, one InputError line naming the key); schemas/profilec-config.schema.json is
generated from it, and tests/unit/test_schemas.py gives both the same documents.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from .base import Frozen


class WaiverEntry(Frozen):
    """One `[[waiver]]`: the rule it accepts, why, and optionally until when, where, in which
    mode. The rule must be waivable (docs/check.md's catalogue): one that says a protected root
    is reachable or the trusted side writable is refused (exit 2)."""

    rule: Annotated[str, StringConstraints(pattern="^PC[0-9]{3}$")]
    #: Not blank: a waiver without a reason is an input error.
    reason: Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
    #: A TOML date or "YYYY-MM-DD"; after it the waiver is itself a finding (PC090).
    expires: dt.date | SkipJsonSchema[None] = None
    path: Annotated[str, StringConstraints(pattern="^/")] | SkipJsonSchema[None] = None
    mode: str | SkipJsonSchema[None] = None


class ProfilecConfig(Frozen):
    """`profilec.toml` or `[tool.profilec]` in `pyproject.toml` (compiler/check/waivers.py),
    found upward from the working directory and trust-checked as the roots manifest is:
    waivers for `profilec check`."""

    waiver: list[WaiverEntry] = Field(default_factory=list)
