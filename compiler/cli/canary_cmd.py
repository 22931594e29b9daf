"""`profilec canary`: probe every ACP mode for real in hardened containers (synthetic layout),
and the trusted Codex parent's roads with real `codex exec` turns (`--parent`, the default)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from . import app
from .compile_cmd import HomeOpt, ProfilesOpt, RootsOpt, UserHomeOpt, WorkspaceOpt


@app.command("canary")
def canary_command(
    roots: RootsOpt,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    home: UserHomeOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="text | json", metavar="FORMAT")] = "text",
    parent: Annotated[
        bool,
        typer.Option(
            "--parent/--no-parent",
            help=(
                "Also attack the trusted Codex parent's roads with real codex exec turns "
                "(on the host, in a throwaway tree; docs/parent.md)."
            ),
        ),
    ] = True,
) -> int:
    """Run the canaries: 0 pass, 1 a probe failed, 7 engine/codex missing, 8 mismatch only."""
    from datetime import UTC, datetime

    from ..audit.evidence import bind
    from ..bundle.load import CompileInputs, compile_document
    from ..canary.run import run_canaries
    from ..errors import CanaryMismatchError, EnvironmentMissingError, UsageError
    from ..settings import codex_binary, codex_version

    if fmt not in ("text", "json"):
        raise UsageError(f"unknown --format {fmt!r}; choose text or json")
    bundle, doc = compile_document(
        CompileInputs(
            roots=str(roots),
            profiles=str(profiles) if profiles else None,
            workspace_roots=tuple(workspace_root or ()),
            codex_home=codex_home,
            home=home,
        )
    )
    codex = codex_binary()
    if codex is None or not codex.is_file():
        raise EnvironmentMissingError(
            f"pinned codex {codex_version()} is not installed", hint="run .ci/tools.sh"
        )
    from .console import progress

    steps = 1 + len(bundle.profiles) * (2 if parent else 1)
    with progress("canary", total=steps) as step:
        report = run_canaries(bundle, codex_bin=codex, progress=step, parent_probes=parent)
    if fmt == "json":
        # Bound to the bundle it probed (audit --canary-json refuses it for another one).
        bound = bind(report.to_dict(), doc, datetime.now(tz=UTC))
        sys.stdout.write(json.dumps(bound, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(report.to_text())
    if report.passed:
        return 0
    if report.mismatch_only:
        raise CanaryMismatchError("canary observations disagree with the static prediction")
    return 1
