"""`profilec plan`: roots + layout -> the outer sandbox mount plan (json | docker | bwrap | srt).

The flags become a PlanRequest; compiler/commands/plan.py runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..formats import PLAN_FORMATS
from . import app
from .options import OutOpt, format_option, some_flags
from .output import finish, request_of

LayoutOpt = Annotated[
    Path,
    typer.Option(
        "--layout", help="Daemon-owned plan layout (TOML).", dir_okay=False, metavar="FILE"
    ),
]
FormatOpt = Annotated[str, format_option(PLAN_FORMATS)]


@app.command("plan")
@some_flags("roots", "profiles", required=("roots",))
def plan_command(
    ctx: typer.Context,
    layout: LayoutOpt,
    fmt: FormatOpt = PLAN_FORMATS.default,
    out: OutOpt = None,
    **flags: Any,
) -> int:
    """Compile the sandbox mount plan the trusted Codex parent runs in."""
    from ..commands.plan import PlanRequest, run

    return finish(run(request_of(PlanRequest, ctx.params)), out)
