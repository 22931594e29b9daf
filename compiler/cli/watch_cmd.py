"""`profilec watch`: run beside a session; exit 9 with one JSON line when its profile goes stale.

The flags become a WatchRequest; compiler/commands/watch.py runs it."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ..commands.watch import MAX_INTERVAL, MIN_INTERVAL
from . import app
from .options import LockOpt, compile_flags
from .output import finish, request_of

IntervalOpt = Annotated[
    float,
    typer.Option("--interval", help=f"Seconds between polls ({MIN_INTERVAL}-{MAX_INTERVAL})."),
]


def _started(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


RequirementsOpt = Annotated[
    str | None,
    typer.Option(
        "--requirements",
        help="The managed requirements file the session runs under: at the start it must be in "
        "place and at least as strict as what profilec compiles; replaced, removed or edited "
        "later is drift (exit 9).",
        metavar="FILE",
    ),
]


@app.command("watch")
@compile_flags(roots_required=False)
def watch_command(
    ctx: typer.Context,
    lock: LockOpt = None,
    interval: IntervalOpt = 0.25,
    requirements: RequirementsOpt = None,
    **flags: Any,
) -> int:
    """Watch every hop, vault and the private auth.json; on a change that makes the compiled
    profile stale print one JSON line and exit 9. SIGTERM or SIGINT: exit 0."""
    from ..commands.watch import WatchRequest, run

    return finish(run(request_of(WatchRequest, ctx.params), _started))
