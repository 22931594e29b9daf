"""`profilec lock | diff | explain | audit`: what a security reviewer runs (compiler/audit/).

The flags become a request each; compiler/commands/{lock,diff,explain,audit}.py run them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..formats import AUDIT_FORMATS, DIFF_FORMATS, EXPLAIN_FORMATS
from . import app
from .console import progress
from .options import (
    BundleOpt,
    CanaryOpt,
    ConfigOpt,
    CwdOpt,
    FailOnOpt,
    LockOpt,
    ModeMapOpt,
    OutOpt,
    OverridesOpt,
    compile_flags,
    format_option,
    some_flags,
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
AuditFormatOpt = Annotated[str, format_option(AUDIT_FORMATS)]
DiffFormatOpt = Annotated[str, format_option(DIFF_FORMATS)]
ExplainFormatOpt = Annotated[str, format_option(EXPLAIN_FORMATS)]


@app.command("lock")
@compile_flags(roots_required=False)
def lock_command(
    ctx: typer.Context,
    out: LockOutOpt = Path("profilec.lock"),
    **flags: Any,
) -> int:
    """Compile the bundle and write it as the approved lock file (check --lock compares)."""
    from ..commands.lock import LockRequest, run

    return finish(run(request_of(LockRequest, ctx.params)), out)


@app.command("diff")
@some_flags("workspace_roots")
def diff_command(
    ctx: typer.Context,
    old: OldOpt,
    new: NewOpt,
    mode_map: ModeMapOpt = None,
    fmt: DiffFormatOpt = DIFF_FORMATS.default,
    out: OutOpt = None,
    **flags: Any,
) -> int:
    """Classify every change as widening (first, marked !) or narrowing; exit 1 on widening."""
    from ..commands.diff import DiffRequest, run

    return finish(run(request_of(DiffRequest, ctx.params)), out)


@app.command("explain")
@compile_flags(roots_required=False)
def explain_command(
    ctx: typer.Context,
    path: PathArg,
    mode: ModeOpt = None,
    bundle: BundleOpt = None,
    cwd: CwdOpt = None,
    config: ConfigOpt = None,
    overrides: OverridesOpt = None,
    profile: ProfileOpt = None,
    fmt: ExplainFormatOpt = EXPLAIN_FORMATS.default,
    **flags: Any,
) -> int:
    """Print the effective access of PATH under MODE, the winning entry and what it beat."""
    from ..commands.explain import ExplainRequest, run

    return finish(run(request_of(ExplainRequest, ctx.params)))


@app.command("audit")
@compile_flags(roots_required=False)
def audit_command(
    ctx: typer.Context,
    bundle: BundleOpt = None,
    canary_json: CanaryJsonOpt = None,
    canary: CanaryOpt = False,
    e2e_matrix: E2eMatrixOpt = None,
    now: NowOpt = None,
    fmt: AuditFormatOpt = AUDIT_FORMATS.default,
    out: OutOpt = None,
    fail_on: FailOnOpt = "error",
    lock: LockOpt = None,
    **flags: Any,
) -> int:
    """Render one self-contained reviewer report (Markdown or HTML); exit 1 when it says FAIL."""
    from ..commands.audit import AuditRequest, run

    return finish(run(request_of(AuditRequest, ctx.params), progress), out)
