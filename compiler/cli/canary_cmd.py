"""`profilec canary`: probe every ACP mode for real in hardened containers (synthetic layout),
and the trusted Codex parent's roads with real `codex exec` turns (`--parent`, the default).

The flags become a CanaryRequest; compiler/commands/canary.py runs it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..formats import CANARY_FORMATS
from . import app
from .console import progress
from .options import compile_flags, format_option
from .output import finish, request_of

FormatOpt = Annotated[str, format_option(CANARY_FORMATS)]
ParentOpt = Annotated[
    bool,
    typer.Option(
        "--parent/--no-parent",
        help=(
            "Also attack the trusted Codex parent's roads with real codex exec turns "
            "(on the host, in a throwaway tree; docs/parent.md)."
        ),
    ),
]
ManagedOpt = Annotated[
    bool,
    typer.Option(
        "--managed-requirements/--no-managed-requirements",
        help=(
            "Run every model probe under the compiled managed requirements, as a session does "
            "(bound read-only over /etc/codex, codex sandbox --include-managed-config). Off: "
            "the profiles are proved by themselves."
        ),
    ),
]


@app.command("canary")
@compile_flags(roots_required=True)
def canary_command(
    ctx: typer.Context,
    fmt: FormatOpt = CANARY_FORMATS.default,
    parent: ParentOpt = True,
    managed_requirements: ManagedOpt = False,
    **flags: Any,
) -> int:
    """Run the canaries: 0 pass, 1 a probe failed, 7 engine/codex missing, 8 mismatch only."""
    from ..commands.canary import CanaryRequest, run

    return finish(run(request_of(CanaryRequest, ctx.params), progress))
