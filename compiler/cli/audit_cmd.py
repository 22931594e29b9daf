"""`profilec lock | diff | explain | audit`: what a security reviewer runs (compiler/audit/)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import app
from .compile_cmd import (
    HomeOpt,
    McpOpt,
    ProfilesOpt,
    RunAsOpt,
    SessionOpt,
    TmpdirOpt,
    UserHomeOpt,
    WorkspaceOpt,
)

if TYPE_CHECKING:
    from ..bundle.load import CompileInputs
    from ..models import CompiledBundle

OptRootsOpt = Annotated[
    Path | None,
    typer.Option("--roots", help="Daemon-owned roots manifest (TOML).", dir_okay=False),
]
BundleOpt = Annotated[
    Path | None,
    typer.Option(
        "--bundle", help="Read a bundle or lock file instead of compiling.", dir_okay=False
    ),
]
PlanOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan-layout", help="Plan layout (TOML): include the mount plan.", dir_okay=False
    ),
]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Write here (atomic).")]


def _inputs(
    roots: Path | None,
    profiles: Path | None,
    workspace_root: list[str] | None,
    codex_home: str | None,
    session_config: Path | None,
    plan_layout: Path | None = None,
    *,
    vouched_mcp: Path | None = None,
    tmpdir: str | None = None,
    home: str | None = None,
    run_as: int | None = None,
) -> CompileInputs:
    from ..bundle.load import CompileInputs
    from ..errors import UsageError

    if roots is None:
        raise UsageError("give --roots (and the compile flags) or --bundle FILE")
    return CompileInputs(
        roots=str(roots),
        profiles=str(profiles) if profiles else None,
        workspace_roots=tuple(workspace_root or ()),
        codex_home=codex_home,
        session_config=str(session_config) if session_config else None,
        plan_layout=str(plan_layout) if plan_layout else None,
        vouched_mcp=str(vouched_mcp) if vouched_mcp else None,
        tmpdir=tmpdir,
        home=home,
        run_as=run_as,
    )


def _bundle_or_compile(
    bundle: Path | None, inp: CompileInputs | None
) -> tuple[CompiledBundle, dict[str, Any], bool]:
    """(bundle, document, live): live when compiled from host inputs just now."""
    from ..bundle.load import compile_document, load_bundle

    if bundle is not None:
        b, doc = load_bundle(str(bundle))
        return b, doc, False
    assert inp is not None
    b, doc = compile_document(inp)
    return b, doc, True


def _check_fmt(fmt: str, allowed: tuple[str, ...]) -> None:
    from ..errors import UsageError

    if fmt not in allowed:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(allowed)}")


@app.command("lock")
def lock_command(
    roots: OptRootsOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    plan_layout: PlanOpt = None,
    vouched_mcp: McpOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    run_as: RunAsOpt = None,
    out: Annotated[
        Path, typer.Option("--out", help="Lock file to write (atomic); -: stdout.", metavar="FILE")
    ] = Path("profilec.lock"),
) -> None:
    """Compile the bundle and write it as the approved lock file (check --lock compares)."""
    from ..bundle.load import compile_document
    from ..bundle.lock import render_lock
    from .compile_cmd import emit, to_stdout
    from .console import note

    inp = _inputs(
        roots,
        profiles,
        workspace_root,
        codex_home,
        session_config,
        plan_layout,
        vouched_mcp=vouched_mcp,
        tmpdir=tmpdir,
        home=home,
        run_as=run_as,
    )
    _, doc = compile_document(inp)
    emit(render_lock(doc, inp.plan_layout), out)
    note(f"locked {doc['content_hash']} -> {'stdout' if to_stdout(out) else out}")


@app.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="Old bundle, lock, config.toml or -c list.")],
    new: Annotated[Path, typer.Argument(help="New bundle, lock, config.toml or -c list.")],
    workspace_root: WorkspaceOpt = None,
    mode_map: Annotated[
        Path | None,
        typer.Option("--mode-map", help="ACP mode -> profile id, for configs (JSON or TOML)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text | json")] = "text",
    out: OutOpt = None,
) -> int:
    """Classify every change as widening (first, marked !) or narrowing; exit 1 on widening."""
    import json

    from ..audit.diff import diff_sides, load_side, render_text
    from ..check.configstack import load_mode_map
    from .compile_cmd import emit

    _check_fmt(fmt, ("text", "json"))
    modes = load_mode_map(str(mode_map)) if mode_map else None
    ws = tuple(workspace_root or ())
    report = diff_sides(
        load_side(str(old), mode_map=modes, workspace_roots=ws),
        load_side(str(new), mode_map=modes, workspace_roots=ws),
    )
    if fmt == "json":
        text = json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    else:
        text = render_text(report)
    emit(text, out)
    return 1 if report.widening else 0


@app.command("explain")
def explain_command(
    path: Annotated[str, typer.Argument(help="Absolute path to explain.")],
    mode: Annotated[
        str | None, typer.Option("--mode", help="ACP mode (read-only, agent, ...).")
    ] = None,
    roots: OptRootsOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    vouched_mcp: McpOpt = None,
    run_as: RunAsOpt = None,
    bundle: BundleOpt = None,
    cwd: Annotated[
        str | None,
        typer.Option(
            "--cwd", help="Session cwd (default: first workspace root; foreign: current dir)."
        ),
    ] = None,
    home_dir: Annotated[
        str | None, typer.Option("--home", help="HOME of the session (default: $HOME).")
    ] = None,
    tmp_dir: Annotated[
        str | None, typer.Option("--tmpdir", help="TMPDIR of the session (default: $TMPDIR).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Explain a Codex config.toml profilec did not write."),
    ] = None,
    overrides: Annotated[
        Path | None,
        typer.Option("--overrides", help="Explain a -c override list (one value per line)."),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile", help="Profile id (foreign config; default: default_permissions)."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text | json")] = "text",
) -> None:
    """Print the effective access of PATH under MODE, the winning entry and what it beat."""
    import json
    import os

    from ..audit.explain import explain, explain_config, live_walker, render_text
    from ..errors import UsageError
    from ..evaluate import LiveFs

    _check_fmt(fmt, ("text", "json"))
    for name, value in (("--cwd", cwd), ("--home", home_dir), ("--tmpdir", tmp_dir)):
        if value is not None and not value.startswith("/"):
            raise UsageError(f"{name} {value!r} must be an absolute path")
    home = home_dir if home_dir is not None else os.environ.get("HOME")
    tmpdir = tmp_dir if tmp_dir is not None else os.environ.get("TMPDIR")
    if config or overrides:
        from ..check.configstack import ConfigStack, load_config_toml, load_overrides

        layers = []
        if config:
            layers.append(load_config_toml(str(config)))
        if overrides:
            layers.append(load_overrides(str(overrides)))
        merged = ConfigStack(tuple(layers)).merged()
        perms = merged.get("permissions")
        table = perms if isinstance(perms, dict) else {}
        pid = profile or merged.get("default_permissions")
        if not isinstance(pid, str):
            raise UsageError("give --profile ID: the config sets no default_permissions")
        source = ", ".join(str(p) for p in (config, overrides) if p)
        x = explain_config(
            table,
            pid,
            path,
            cwd=cwd or os.getcwd(),
            home=home,
            tmpdir=tmpdir,
            source=source,
            mode=mode or "-",
            fs=LiveFs(),
        )
    else:
        if mode is None:
            raise UsageError("give --mode (or --config/--overrides with --profile)")
        if profile is not None:
            raise UsageError("--profile applies to --config/--overrides; use --mode")
        # --home/--tmpdir given explicitly are the launch values compile takes too (as check).
        inp = (
            None
            if bundle
            else _inputs(
                roots,
                profiles,
                workspace_root,
                codex_home,
                session_config,
                vouched_mcp=vouched_mcp,
                tmpdir=tmp_dir,
                home=home_dir,
                run_as=run_as,
            )
        )
        b, doc, live = _bundle_or_compile(bundle, inp)
        x = explain(
            b,
            path,
            mode,
            provenance=doc.get("provenance"),
            cwd=cwd,
            walker=live_walker if live else None,
            home=home,
            tmpdir=tmpdir,
            fs=LiveFs(),
        )
    if fmt == "json":
        sys.stdout.write(json.dumps(x.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render_text(x))


@app.command("audit")
def audit_command(
    roots: OptRootsOpt = None,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    plan_layout: PlanOpt = None,
    vouched_mcp: McpOpt = None,
    tmpdir: TmpdirOpt = None,
    home: UserHomeOpt = None,
    run_as: RunAsOpt = None,
    bundle: BundleOpt = None,
    canary_json: Annotated[
        Path | None,
        typer.Option(
            "--canary-json",
            help="Canary results (`profilec canary --format json`).",
            dir_okay=False,
        ),
    ] = None,
    canary: Annotated[
        bool, typer.Option("--canary", help="Run the canaries now (Docker + pinned codex).")
    ] = False,
    e2e_matrix: Annotated[
        Path | None,
        typer.Option(
            "--e2e-matrix",
            help="Compatibility matrix (`profilec e2e --out FILE`): the launchers section.",
            dir_okay=False,
        ),
    ] = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="Report time (epoch seconds or 'none'); default SOURCE_DATE_EPOCH, else now.",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | html")] = "md",
    out: OutOpt = None,
    fail_on: Annotated[
        str, typer.Option("--fail-on", help="note | warning | error: exit 1 at or above it.")
    ] = "error",
    lock: Annotated[
        Path | None,
        typer.Option("--lock", help="Approved lock file: show what changed since.", dir_okay=False),
    ] = None,
) -> int:
    """Render one self-contained reviewer report (Markdown or HTML); exit 1 when it says FAIL."""
    from ..audit.report import build_report, load_canary_json, report_time
    from ..check.result import SEVERITY_RANK
    from ..errors import UsageError
    from .compile_cmd import emit

    _check_fmt(fmt, ("md", "html"))
    if fail_on not in SEVERITY_RANK:
        raise UsageError(f"unknown --fail-on {fail_on!r}; choose note, warning or error")
    if canary and canary_json:
        raise UsageError("give --canary or --canary-json, not both")
    if canary and bundle:
        raise UsageError("--canary probes a fresh compile; drop --bundle")
    if bundle and (vouched_mcp or tmpdir or home):
        raise UsageError("--vouched-mcp, --tmpdir and --home go with --roots; drop --bundle")
    inp = (
        None
        if bundle
        else _inputs(
            roots,
            profiles,
            workspace_root,
            codex_home,
            session_config,
            plan_layout,
            vouched_mcp=vouched_mcp,
            tmpdir=tmpdir,
            home=home,
            run_as=run_as,
        )
    )
    launchers = None
    if e2e_matrix is not None:
        from ..audit.launchers import launcher_section, load_e2e_matrix
        from ..emit.launch import load_catalog

        launchers = launcher_section(
            load_e2e_matrix(str(e2e_matrix)), load_catalog(str(profiles) if profiles else None)
        )
    b, doc, _ = _bundle_or_compile(bundle, inp)
    binding = None
    canary_doc = load_canary_json(str(canary_json)) if canary_json else None
    if canary_doc is not None:
        from ..audit.evidence import verify

        # Refused for another bundle; stale when an input changed after the run finished.
        binding = verify(canary_doc, doc, str(canary_json), _input_files(bundle, inp))
    if canary:
        from .check_cmd import _canary

        canary_doc, _, _ = _canary(b)
    changes = None
    if lock is not None:
        from ..audit.diff import diff_bundles
        from ..bundle.load import load_bundle

        old_b, old_doc = load_bundle(str(lock))
        changes = diff_bundles(
            old_b,
            b,
            old_name=str(lock),
            new_name="audited bundle",
            old_hash=str(old_doc.get("content_hash")),
            new_hash=str(doc.get("content_hash")),
        )
    rep = build_report(
        b,
        doc,
        canary=canary_doc,
        now=report_time(now),
        launchers=launchers,
        binding=binding,
        fail_on=fail_on,
        changes=changes,
    )
    if fmt == "html":
        from ..audit.report_html import render_html

        text = render_html(rep)
    else:
        from ..audit.report_md import render_md

        text = render_md(rep)
    emit(text, out)
    assert rep.verdict is not None
    if not rep.verdict.passed:
        n = len(rep.verdict.failing)
        print(f"profilec: audit: FAIL: {n} items at or above {fail_on}", file=sys.stderr)
        return 1
    return 0


def _input_files(bundle: Path | None, inp: CompileInputs | None) -> list[str]:
    """The files the audited bundle came from (evidence older than any of them is stale)."""
    if bundle is not None:
        return [str(bundle)]
    assert inp is not None
    # The shipped policy is part of the profilec version the evidence names, not an input.
    files = (inp.roots, inp.profiles, inp.session_config, inp.vouched_mcp, inp.plan_layout)
    return [f for f in files if f]
