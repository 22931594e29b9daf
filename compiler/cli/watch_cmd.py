"""`profilec watch`: run beside a session; exit 9 with one JSON line when its profile goes stale.

The flags become a WatchRequest; compiler/commands/watch.py runs it."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..commands.watch import MAX_INTERVAL, MIN_INTERVAL
from . import app
from .options import (
    HomeOpt,
    LockOpt,
    McpOpt,
    OptRootsOpt,
    ProfilesOpt,
    RunAsOpt,
    SessionOpt,
    TmpdirOpt,
    UserHomeOpt,
    WorkspaceOpt,
)
from .output import finish, request_of

IntervalOpt = Annotated[
    float,
    typer.Option("--interval", help=f"Seconds between polls ({MIN_INTERVAL}-{MAX_INTERVAL})."),
]


def _started(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@app.command("watch")
def watch_command(
    ctx: typer.Context,
    roots: OptRootsOpt = None,
    lock: LockOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    vouched_mcp: McpOpt = None,
    run_as: RunAsOpt = None,
    interval: IntervalOpt = 0.25,
) -> int:
    """Watch every hop, vault and the private auth.json; on a change that makes the compiled
    profile stale print one JSON line and exit 9. SIGTERM or SIGINT: exit 0."""
    from ..commands.watch import WatchRequest, run

    return finish(run(request_of(WatchRequest, ctx.params), _started))
