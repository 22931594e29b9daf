"""`profilec lock | diff | explain | audit`: what a security reviewer runs (compiler/audit/).

The flags become a request each; compiler/commands/{lock,diff,explain,audit}.py run them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import app
from .console import progress
from .options import (
    BundleOpt,
    CanaryOpt,
    ConfigOpt,
    CwdOpt,
    FailOnOpt,
    HomeOpt,
    LockOpt,
    McpOpt,
    ModeMapOpt,
    OptRootsOpt,
    OutOpt,
    OverridesOpt,
    PlanLayoutOpt,
    ProfilesOpt,
    RunAsOpt,
    SessionOpt,
    TextJsonOpt,
    TmpdirOpt,
    UserHomeOpt,
    WorkspaceOpt,
)
from .output import finish, request_of

LockOutOpt = Annotated[
    Path, typer.Option("--out", help="Lock file to write (atomic); -: stdout.", metavar="FILE")
]
OldOpt = Annotated[Path, typer.Argument(help="Old bundle, lock, config.toml or -c list.")]
NewOpt = Annotated[Path, typer.Argument(help="New bundle, lock, config.toml or -c list.")]
PathArg = Annotated[str, typer.Argument(help="Absolute path to explain.")]
ModeOpt = Annotated[str | None, typer.Option("--mode", help="ACP mode (read-only, agent, ...).")]
ProfileOpt = Annotated[
    str | None,
    typer.Option("--profile", help="Profile id (foreign config; default: default_permissions)."),
]
CanaryJsonOpt = Annotated[
    Path | None,
    typer.Option(
        "--canary-json", help="Canary results (`profilec canary --format json`).", dir_okay=False
    ),
]
E2eMatrixOpt = Annotated[
    Path | None,
    typer.Option(
        "--e2e-matrix",
        help="Compatibility matrix (`profilec e2e --out FILE`): the launchers section.",
        dir_okay=False,
    ),
]
NowOpt = Annotated[
    str | None,
    typer.Option(
        "--now", help="Report time (epoch seconds or 'none'); default SOURCE_DATE_EPOCH, else now."
    ),
]
AuditFormatOpt = Annotated[str, typer.Option("--format", help="md | html")]


@app.command("lock")
def lock_command(
    ctx: typer.Context,
    roots: OptRootsOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    plan_layout: PlanLayoutOpt = None,
    vouched_mcp: McpOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    run_as: RunAsOpt = None,
    out: LockOutOpt = Path("profilec.lock"),
) -> int:
    """Compile the bundle and write it as the approved lock file (check --lock compares)."""
    from ..commands.lock import LockRequest, run

    return finish(run(request_of(LockRequest, ctx.params)), out)


@app.command("diff")
def diff_command(
    ctx: typer.Context,
    old: OldOpt,
    new: NewOpt,
    workspace_root: WorkspaceOpt = None,
    mode_map: ModeMapOpt = None,
    fmt: TextJsonOpt = "text",
    out: OutOpt = None,
) -> int:
    """Classify every change as widening (first, marked !) or narrowing; exit 1 on widening."""
    from ..commands.diff import DiffRequest, run

    return finish(run(request_of(DiffRequest, ctx.params)), out)


@app.command("explain")
def explain_command(
    ctx: typer.Context,
    path: PathArg,
    mode: ModeOpt = None,
    roots: OptRootsOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    vouched_mcp: McpOpt = None,
    run_as: RunAsOpt = None,
    bundle: BundleOpt = None,
    cwd: CwdOpt = None,
    home: UserHomeOpt = None,
    tmpdir: TmpdirOpt = None,
    config: ConfigOpt = None,
    overrides: OverridesOpt = None,
    profile: ProfileOpt = None,
    fmt: TextJsonOpt = "text",
) -> int:
    """Print the effective access of PATH under MODE, the winning entry and what it beat."""
    from ..commands.explain import ExplainRequest, run

    return finish(run(request_of(ExplainRequest, ctx.params)))


@app.command("audit")
def audit_command(
    ctx: typer.Context,
    roots: OptRootsOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    plan_layout: PlanLayoutOpt = None,
    vouched_mcp: McpOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    run_as: RunAsOpt = None,
    bundle: BundleOpt = None,
    canary_json: CanaryJsonOpt = None,
    canary: CanaryOpt = False,
    e2e_matrix: E2eMatrixOpt = None,
    now: NowOpt = None,
    fmt: AuditFormatOpt = "md",
    out: OutOpt = None,
    fail_on: FailOnOpt = "error",
    lock: LockOpt = None,
) -> int:
    """Render one self-contained reviewer report (Markdown or HTML); exit 1 when it says FAIL."""
    from ..commands.audit import AuditRequest, run

    return finish(run(request_of(AuditRequest, ctx.params), progress), out)
