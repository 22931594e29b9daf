"""`profilec rules`: list every lint rule (id, severity, waivable, summary) from the registry.

The flags become a RulesRequest; compiler/commands/rules.py runs it."""

from __future__ import annotations

from typing import Annotated

import typer

from ..formats import RULES_FORMATS
from . import app
from .options import OutOpt, format_option
from .output import finish, request_of

FormatOpt = Annotated[str, format_option(RULES_FORMATS)]


@app.command("rules")
def rules_command(
    ctx: typer.Context, fmt: FormatOpt = RULES_FORMATS.default, out: OutOpt = None
) -> int:
    """List every lint rule: id, severity, whether a waiver may accept it, and its summary."""
    from ..commands.rules import RulesRequest, run

    return finish(run(request_of(RulesRequest, ctx.params)), out)
