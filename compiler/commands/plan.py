"""`profilec plan`: the request and its run (the outer sandbox mount plan)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..formats import PLAN_FORMATS
from ..mounts.api import load_and_plan
from ..mounts.render_srt import srt_gaps
from . import Outcome


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """The flags of one `profilec plan` run."""

    roots: Path
    layout: Path
    profiles: Path | None = None
    fmt: str = PLAN_FORMATS.default


def run(request: PlanRequest) -> Outcome:
    """The plan in the backend's format, its warnings, and what `srt` cannot express."""
    render = PLAN_FORMATS.renderer(PLAN_FORMATS.choose(request.fmt).name)
    # The backend catalog is policy: `--profiles DIR` reads DIR/backends.toml.
    catalog = os.path.join(str(request.profiles), "backends.toml") if request.profiles else None
    plan = load_and_plan(str(request.roots), str(request.layout), catalog_path=catalog)
    text = render(plan)  # renders fully before anything is written
    gaps = srt_gaps(plan) if request.fmt == "srt" else ()
    return Outcome(
        text=text,
        warnings=tuple(w.message for w in plan.warnings),
        notes=tuple(f"note: {gap}" for gap in gaps),
    )
