"""`profilec e2e`: run real Codex sessions (app-server, ACP adapters) and print the matrix."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from . import app


@app.command("e2e")
def e2e_command(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the matrix here; - or none: stdout.", metavar="FILE"),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="json | md", metavar="FORMAT")] = "json",
    only: Annotated[
        str, typer.Option("--only", help="all | acp | appserver", metavar="WHICH")
    ] = "all",
    check_catalog: Annotated[
        bool,
        typer.Option(
            "--check-catalog",
            help="Exit 1 when profiles/adapters.toml disagrees with what was observed.",
        ),
    ] = False,
    profiles: Annotated[
        Path | None,
        typer.Option("--profiles", help="Policy directory holding adapters.toml.", metavar="DIR"),
    ] = None,
) -> int:
    """Drive codex app-server and the pinned ACP adapters against a scripted local model and
    record, per adapter x version x launch method x session event, whether the deny held."""
    from ..errors import UsageError

    if fmt not in ("json", "md"):
        raise UsageError(f"unknown --format {fmt!r}; choose json or md")
    if only not in ("all", "acp", "appserver"):
        raise UsageError(f"unknown --only {only!r}; choose all, acp or appserver")
    from ..e2e.matrix import matrix_json, matrix_markdown
    from ..e2e.run import adapter_verdicts, catalog_disagreements, run_matrix
    from ..emit.launch import load_catalog

    catalog = load_catalog(str(profiles) if profiles else None) if check_catalog else None

    from .compile_cmd import emit
    from .console import progress

    with progress("e2e") as step:
        matrix = run_matrix(
            include_appserver=only in ("all", "appserver"),
            include_acp=only in ("all", "acp"),
            progress=step,
        )
    emit(matrix_json(matrix) if fmt == "json" else matrix_markdown(matrix), out)
    if catalog is not None:
        problems = catalog_disagreements(adapter_verdicts(matrix), catalog)
        for p in problems:
            print(f"profilec: e2e: catalog disagrees: {p}", file=sys.stderr)  # the verdict
        if problems:
            return 1
    return 0
