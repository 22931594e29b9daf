"""`json`: the CheckReport document (schemas/check-report.schema.json), sorted, no timestamp."""

from __future__ import annotations

import json
from datetime import datetime

from ..models.check import CheckReport


def render(report: CheckReport, now: datetime) -> str:
    """The report as indented JSON with sorted keys."""
    del now  # deterministic: the JSON report carries no time
    doc = report.model_dump(mode="json")
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
