"""`profilec plan`: roots + layout -> the outer sandbox mount plan (json | docker | bwrap | srt)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import app
from .compile_cmd import ProfilesOpt, RootsOpt, emit
from .console import note, warn


@app.command("plan")
def plan_command(
    roots: RootsOpt,
    layout: Annotated[
        Path,
        typer.Option(
            "--layout", help="Daemon-owned plan layout (TOML).", dir_okay=False, metavar="FILE"
        ),
    ],
    profiles: ProfilesOpt = None,
    fmt: Annotated[
        str, typer.Option("--format", help="json | docker | bwrap | srt", metavar="FORMAT")
    ] = "json",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output file (atomic); - or none: stdout.", metavar="FILE"),
    ] = None,
) -> None:
    """Compile the sandbox mount plan the trusted Codex parent runs in."""
    import os

    from ..errors import UsageError
    from ..mounts.api import load_and_plan
    from ..mounts.render import FORMATS, RENDERERS
    from ..mounts.render_srt import srt_gaps

    if fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
    # The backend catalog is policy: `--profiles DIR` reads DIR/backends.toml.
    catalog = os.path.join(str(profiles), "backends.toml") if profiles else None
    plan = load_and_plan(str(roots), str(layout), catalog_path=catalog)
    emit(RENDERERS[fmt](plan), out)  # renders fully before anything is written
    for w in plan.warnings:
        warn(w.message)
    if fmt == "srt":
        for gap in srt_gaps(plan):
            note(f"note: {gap}")
