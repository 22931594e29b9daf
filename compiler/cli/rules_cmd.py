"""`profilec rules`: list every lint rule (id, severity, waivable, summary) from the registry.

The flags become a RulesRequest; compiler/commands/rules.py runs it."""

from __future__ import annotations

import typer

from . import app
from .options import OutOpt, TextJsonOpt
from .output import finish, request_of


@app.command("rules")
def rules_command(ctx: typer.Context, fmt: TextJsonOpt = "text", out: OutOpt = None) -> int:
    """List every lint rule: id, severity, whether a waiver may accept it, and its summary."""
    from ..commands.rules import RulesRequest, run

    return finish(run(request_of(RulesRequest, ctx.params)), out)
