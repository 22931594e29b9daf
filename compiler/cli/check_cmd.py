"""`profilec check`: coverage proof + lints over what profilec compiles, or a foreign config.

The flags become a CheckRequest; compiler/commands/check.py runs it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..formats import CHECK_FORMATS
from ..report.github import write_step_summary
from . import app, console
from .console import progress
from .options import (
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
)
from .output import exit_with, request_of, show

if TYPE_CHECKING:
    from ..commands.check import CheckOutcome

AcpJsonOpt = Annotated[
    Path | None,
    typer.Option(
        "--acp-json", help="Check this acp-json launch document (overrides sent as CODEX_CONFIG)."
    ),
]
LaunchRequestsOpt = Annotated[
    Path | None,
    typer.Option(
        "--launch-requests",
        help="JSON Lines of the requests a launcher sends to codex app-server (PC023).",
    ),
]
LaunchArgvOpt = Annotated[
    Path | None,
    typer.Option(
        "--launch-argv",
        help="The parent's command line (JSON array) or a compiled launch document: "
        "PC048 (a network listener), PC049 (a secret on the argv); PC052 unless the "
        "document, or --launch-env, shows the parent's GIT_DIR.",
    ),
]
LaunchEnvOpt = Annotated[
    Path | None,
    typer.Option(
        "--launch-env",
        help="The parent's environment as the launcher sets it (JSON object of strings) or a "
        "compiled launch document: PC052 (the parent's git on: no GIT_DIR below /dev/null).",
    ),
]
FormatOpt = Annotated[str, format_option(CHECK_FORMATS)]
IgnoreOpt = Annotated[
    list[str] | None, typer.Option("--ignore", metavar="PCxxx", help="Waive a rule (repeatable).")
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="A previous `check --format json` report: only new findings count.",
        dir_okay=False,
    ),
]
ProjectConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--project-config",
        help="Waivers file (default: profilec.toml or pyproject.toml [tool.profilec], "
        "found upward from the cwd).",
        dir_okay=False,
    ),
]
NoProjectConfigOpt = Annotated[
    bool, typer.Option("--no-project-config", help="Do not look for a project config.")
]
ExitZeroOpt = Annotated[
    bool,
    typer.Option(
        "--exit-zero",
        help="Exit 0 even when findings fail (the report is the same); usage and input errors "
        "keep their codes.",
    ),
]
GroupOpt = Annotated[
    bool,
    typer.Option(
        "--group/--no-group", help="One finding per root cause (default) or one per cell."
    ),
]


RequirementsOpt = Annotated[
    str | None,
    typer.Option(
        "--requirements",
        help="The managed requirements file the launch runs under (/etc/codex/requirements.toml "
        "or the per-session file the mount plan binds there): fails (PC056) unless it is at "
        "least as strict as what profilec compiles.",
        metavar="FILE",
    ),
]


@app.command("check")
@compile_flags(roots_required=True)
def check_command(
    ctx: typer.Context,
    config: ConfigOpt = None,
    overrides: OverridesOpt = None,
    acp_json: AcpJsonOpt = None,
    mode_map: ModeMapOpt = None,
    launch_requests: LaunchRequestsOpt = None,
    launch_argv: LaunchArgvOpt = None,
    launch_env: LaunchEnvOpt = None,
    fmt: FormatOpt = CHECK_FORMATS.default,
    out: OutOpt = None,
    fail_on: FailOnOpt = "error",
    canary: CanaryOpt = False,
    lock: LockOpt = None,
    cwd: CwdOpt = None,
    ignore: IgnoreOpt = None,
    baseline: BaselineOpt = None,
    project_config: ProjectConfigOpt = None,
    no_project_config: NoProjectConfigOpt = False,
    group: GroupOpt = True,
    exit_zero: ExitZeroOpt = False,
    requirements: RequirementsOpt = None,
    **flags: Any,
) -> int:
    """Prove every mode denies every root under every spelling, and lint the config stack."""
    from ..commands.check import CheckRequest, run

    request = request_of(CheckRequest, ctx.params)
    quiet = console.level() == console.QUIET  # `profilec -q check`: the verdict and what fails
    outcome = run(dataclasses.replace(request, quiet=quiet), progress)
    show(outcome, out)
    _job_summary(fmt, outcome)
    return exit_with(outcome)


def _job_summary(fmt: str, outcome: CheckOutcome) -> None:
    """`--format github` also appends the job summary to $GITHUB_STEP_SUMMARY."""
    if fmt == "github" and outcome.report is not None:
        write_step_summary(outcome.report)
