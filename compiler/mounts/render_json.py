"""`--format json`: the plan itself, deterministic bytes."""

from __future__ import annotations

import json

from ..models.mounts import MountPlan


def render_json(plan: MountPlan) -> str:
    """The plan as sorted, indented JSON with a final newline."""
    return json.dumps(plan.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
