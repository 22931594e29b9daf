"""`profilec requirements install|verify`: Codex's managed requirements on this host.

The flags become a RequirementsRequest; compiler/commands/requirements.py runs it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..codex.vocabulary import REQUIREMENTS_FILE
from . import app
from .options import compile_flags
from .output import finish, request_of

ActionArg = Annotated[
    str,
    typer.Argument(
        help="install: write the compiled document, its header naming the manifest (atomic; "
        "never over a file profilec did not write, nor one compiled from another manifest). "
        "verify: exit 1 unless the file in place is at least as strict.",
    ),
]
PathOpt = Annotated[
    str,
    typer.Option("--path", help="The requirements file Codex reads.", metavar="FILE"),
]


@app.command("requirements")
@compile_flags(roots_required=True)
def requirements_command(
    ctx: typer.Context,
    action: ActionArg,
    path: PathOpt = REQUIREMENTS_FILE,
    **flags: Any,
) -> int:
    """Install or verify Codex's managed requirements: a deny on every vault and profilec's
    profiles as the only ones a session may run, whatever mode, cwd or adapter it takes."""
    from ..commands.requirements import RequirementsRequest, run

    return finish(run(request_of(RequirementsRequest, ctx.params)), None)
