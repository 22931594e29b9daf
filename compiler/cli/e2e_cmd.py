"""`profilec e2e`: run real Codex sessions (app-server, ACP adapters) and print the matrix.

The flags become an E2eRequest; compiler/commands/e2e.py runs it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..formats import E2E_FORMATS
from . import app
from .console import progress
from .options import OutOpt, format_option, some_flags
from .output import finish, request_of

FormatOpt = Annotated[str, format_option(E2E_FORMATS)]
OnlyOpt = Annotated[str, typer.Option("--only", help="all | acp | appserver", metavar="WHICH")]
CheckCatalogOpt = Annotated[
    bool,
    typer.Option(
        "--check-catalog",
        help="Exit 1 when profiles/adapters.toml disagrees with what was observed.",
    ),
]


@app.command("e2e")
@some_flags("profiles")
def e2e_command(
    ctx: typer.Context,
    out: OutOpt = None,
    fmt: FormatOpt = E2E_FORMATS.default,
    only: OnlyOpt = "all",
    check_catalog: CheckCatalogOpt = False,
    **flags: Any,
) -> int:
    """Drive codex app-server and the pinned ACP adapters against a scripted local model and
    record, per adapter x version x launch method x session event, whether the deny held."""
    from ..commands.e2e import E2eRequest, run

    return finish(run(request_of(E2eRequest, ctx.params), progress), out)
