"""`profilec plan`: roots + layout -> the outer sandbox mount plan (json | docker | bwrap | srt)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from . import app


@app.command("plan")
def plan_command(
    roots: Annotated[
        Path, typer.Option("--roots", help="Daemon-owned roots manifest (TOML).", dir_okay=False)
    ],
    layout: Annotated[
        Path, typer.Option("--layout", help="Daemon-owned plan layout (TOML).", dir_okay=False)
    ],
    fmt: Annotated[str, typer.Option("--format", help="json | docker | bwrap | srt")] = "json",
    out: Annotated[Path | None, typer.Option("--out", help="Output file (atomic).")] = None,
) -> None:
    """Compile the sandbox mount plan the trusted Codex parent runs in."""
    from ..errors import UsageError
    from ..mounts.api import load_and_plan
    from ..mounts.render import FORMATS, RENDERERS
    from ..mounts.render_srt import srt_gaps

    if fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
    plan = load_and_plan(str(roots), str(layout))
    text = RENDERERS[fmt](plan)  # renders fully before anything is written
    if out is None:
        sys.stdout.write(text)
    else:
        from ..fsio import write_atomic

        write_atomic(str(out), text.encode("utf-8"))
    for w in plan.warnings:
        print(f"profilec: warning: {w.message}", file=sys.stderr)
    if fmt == "srt":
        for note in srt_gaps(plan):
            print(f"profilec: note: {note}", file=sys.stderr)
