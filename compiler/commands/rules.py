"""`profilec rules`: the request and its run (list the lint rule registry)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..check.rules import catalogue_document, catalogue_text
from ..formats import RULES_FORMATS
from . import Outcome


@dataclass(frozen=True, slots=True)
class RulesRequest:
    """The flags of one `profilec rules` run."""

    fmt: str = RULES_FORMATS.default


def run(request: RulesRequest) -> Outcome:
    """Every declared rule: one line each (text), or the `rules.schema.json` document (json)."""
    RULES_FORMATS.choose(request.fmt)
    if request.fmt == "json":
        doc = catalogue_document().model_dump(mode="json")
        return Outcome(text=json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return Outcome(text=catalogue_text())
