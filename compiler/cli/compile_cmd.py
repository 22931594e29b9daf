"""`profilec compile`: roots + policy + layout -> toml, overrides, acp-json, codex-home, bundle."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import app
from .console import verbose, warn

if TYPE_CHECKING:
    from ..models import Finding

RootsOpt = Annotated[
    Path,
    typer.Option(
        "--roots", help="Daemon-owned roots manifest (TOML).", dir_okay=False, metavar="FILE"
    ),
]
ProfilesOpt = Annotated[
    Path | None,
    typer.Option(
        "--profiles", help="Policy directory (default: shipped profiles/).", metavar="DIR"
    ),
]
WorkspaceOpt = Annotated[
    list[str] | None,
    typer.Option("--workspace-root", help="Workspace root (absolute; repeatable).", metavar="DIR"),
]
HomeOpt = Annotated[
    str | None,
    typer.Option(
        "--codex-home",
        help="Private CODEX_HOME (default: dir holding the codex root).",
        metavar="DIR",
    ),
]
UserHomeOpt = Annotated[
    str | None,
    typer.Option(
        "--home",
        help="HOME of the session's commands; no credential vault may hold it.",
        metavar="DIR",
    ),
]
SessionOpt = Annotated[
    Path | None,
    typer.Option(
        "--session-config",
        help="Untrusted agent session config (CODEX_CONFIG JSON).",
        metavar="FILE",
    ),
]
McpOpt = Annotated[
    Path | None,
    typer.Option(
        "--vouched-mcp",
        help="Daemon-owned TOML naming the MCP servers the launcher injects (trust-checked).",
        metavar="FILE",
    ),
]
TmpdirOpt = Annotated[
    str | None,
    typer.Option(
        "--tmpdir",
        help="TMPDIR the launcher gives Codex (writable in agent mode; protected paths "
        "below it get their ancestors pinned).",
        metavar="DIR",
    ),
]
RunAsOpt = Annotated[
    int | None,
    typer.Option(
        "--run-as",
        help="uid Codex is launched as (default: this process's); a writable root it cannot "
        "start over is read-only or refused.",
        metavar="UID",
    ),
]


def to_stdout(out: Path | str | None) -> bool:
    """`--out -` (or no --out) means standard output, as everywhere on a command line."""
    return out is None or str(out) == "-"


def emit(text: str, out: Path | None) -> None:
    """Write `text` atomically to `out`, or to stdout (`out` None or `-`)."""
    if to_stdout(out):
        sys.stdout.write(text)
        return
    from ..fsio import write_atomic

    write_atomic(str(out), text.encode("utf-8"))


@app.command("compile")
def compile_command(
    roots: RootsOpt,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    vouched_mcp: McpOpt = None,
    run_as: RunAsOpt = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="toml | overrides | acp-json | session-config | bundle | codex-home | launch",
            metavar="FORMAT",
        ),
    ] = "toml",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output file, written atomically; - or none: stdout (codex-home: the directory).",
            metavar="FILE",
        ),
    ] = None,
    plan_layout: Annotated[
        Path | None,
        typer.Option(
            "--plan-layout",
            help="bundle: also hold the mount plan for this plan layout (TOML).",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Compile one Codex permission profile per ACP mode, the credential deny always applied."""
    from ..errors import UsageError
    from ..formats import FORMATS, renderer

    if fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "codex-home" and to_stdout(out):
        raise UsageError("--format codex-home needs --out DIR")
    if plan_layout is not None and fmt != "bundle":
        raise UsageError("--plan-layout goes with --format bundle")
    if fmt == "bundle":
        # The full document: provenance lines, input hashes, mount plan (compiler/audit/).
        from ..bundle.document import dumps
        from ..bundle.load import CompileInputs, compile_document

        bundle, doc = compile_document(
            CompileInputs(
                roots=str(roots),
                profiles=str(profiles) if profiles else None,
                workspace_roots=tuple(workspace_root or ()),
                codex_home=codex_home,
                session_config=str(session_config) if session_config else None,
                home=home,
                plan_layout=str(plan_layout) if plan_layout else None,
                vouched_mcp=str(vouched_mcp) if vouched_mcp else None,
                tmpdir=tmpdir,
                run_as=run_as,
            )
        )
        emit(dumps(doc), out)
        _warn(bundle.findings)
        return
    from ..inputs import Inputs
    from ..pipeline import compile_inputs

    inputs = Inputs(
        roots=str(roots),
        profiles=str(profiles) if profiles else None,
        workspace_roots=tuple(workspace_root or ()),
        codex_home=codex_home,
        session_config=str(session_config) if session_config else None,
        tmpdir=tmpdir,
        home=home,
        vouched_mcp=str(vouched_mcp) if vouched_mcp else None,
        run_as=run_as,
    )
    bundle = compile_inputs(inputs)
    if fmt == "codex-home":
        from ..emit.codex_home import write_codex_home

        assert out is not None
        write_codex_home(bundle, str(out))
        return
    if fmt == "launch":  # the adapter catalog comes from the same policy directory
        from ..emit.launch import load_catalog, render_launch_with

        catalog = load_catalog(str(profiles) if profiles else None)
        emit(render_launch_with(bundle, catalog, inputs), out)
        for entry in catalog.adapters:
            if entry.method is None:
                warn(f"no launch method holds for {entry.package} {entry.version}")
        return
    verbose(f"compile: {len(bundle.roots)} roots, {len(bundle.profiles)} modes -> {fmt}")
    try:
        render = renderer(fmt)
    except (KeyError, ModuleNotFoundError):
        raise UsageError(f"--format {fmt} is not available in this build") from None
    emit(render(bundle), out)
    _warn(bundle.findings)


def _warn(findings: Iterable[Finding]) -> None:
    for finding in findings:
        if finding.code == "session-config-stripped":
            warn(finding.message)
