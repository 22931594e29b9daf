"""`profilec compile`: roots + policy + layout -> toml, overrides, acp-json, codex-home, bundle.

The flags become a CompileRequest; compiler/commands/compile.py runs it."""

from __future__ import annotations

from typing import Annotated

import typer

from . import app
from .options import (
    HomeOpt,
    McpOpt,
    OutOpt,
    PlanLayoutOpt,
    ProfilesOpt,
    RootsOpt,
    RunAsOpt,
    SessionOpt,
    TmpdirOpt,
    UserHomeOpt,
    WorkspaceOpt,
)
from .output import finish, request_of

FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        help="toml | overrides | acp-json | session-config | bundle | launch | requirements | "
        "codex-home "
        "(--out is the directory it writes)",
        metavar="FORMAT",
    ),
]


@app.command("compile")
def compile_command(
    ctx: typer.Context,
    roots: RootsOpt,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    vouched_mcp: McpOpt = None,
    run_as: RunAsOpt = None,
    fmt: FormatOpt = "toml",
    out: OutOpt = None,
    plan_layout: PlanLayoutOpt = None,
) -> int:
    """Compile one Codex permission profile per ACP mode, the credential deny always applied."""
    from ..commands.compile import CompileRequest, run

    return finish(run(request_of(CompileRequest, ctx.params)), out)
