"""`profilec diff`: the request and its run (classify every change between two sides)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..audit.diff import diff_sides, load_side, render_text
from ..check.configstack import load_mode_map
from ..errors import EXIT_CLEAN, EXIT_FOUND
from ..formats import DIFF_FORMATS
from ..inputs import Inputs
from . import Outcome


@dataclass(frozen=True, slots=True)
class DiffRequest:
    """The arguments and flags of one `profilec diff` run."""

    old: Path
    new: Path
    workspace_roots: tuple[str, ...] = ()
    mode_map: Path | None = None
    fmt: str = DIFF_FORMATS.default


def run(request: DiffRequest) -> Outcome:
    """The diff as text or JSON; exit 1 when a change widens access."""
    DIFF_FORMATS.choose(request.fmt)
    edge = Inputs.unrooted()  # diff takes no compile flags: its two sides and --mode-map
    modes = None
    if request.mode_map:
        mfile = str(request.mode_map)
        modes = load_mode_map(mfile, edge.text(mfile, "mode map"))
    ws = request.workspace_roots
    report = diff_sides(
        load_side(str(request.old), edge, mode_map=modes, workspace_roots=ws),
        load_side(str(request.new), edge, mode_map=modes, workspace_roots=ws),
    )
    if request.fmt == "json":
        text = json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    else:
        text = render_text(report)
    return Outcome(text=text, exit_code=EXIT_FOUND if report.widening else EXIT_CLEAN)
