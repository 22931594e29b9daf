"""`profilec compile`: roots + policy + layout -> toml, overrides, acp-json, codex-home, bundle.

The flags become a CompileRequest; compiler/commands/compile.py runs it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..formats import COMPILE_FORMATS
from . import app
from .options import OutOpt, compile_flags, format_option
from .output import finish, request_of

FormatOpt = Annotated[str, format_option(COMPILE_FORMATS)]


@app.command("compile")
@compile_flags(roots_required=True)
def compile_command(
    ctx: typer.Context,
    fmt: FormatOpt = COMPILE_FORMATS.default,
    out: OutOpt = None,
    **flags: Any,
) -> int:
    """Compile one Codex permission profile per ACP mode, the credential deny always applied."""
    from ..commands.compile import CompileRequest, run

    return finish(run(request_of(CompileRequest, ctx.params)), out)
