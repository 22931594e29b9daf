"""`profilec check`: coverage proof + lints over what profilec compiles, or a foreign config."""

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
    RootsOpt,
    RunAsOpt,
    SessionOpt,
    WorkspaceOpt,
)

if TYPE_CHECKING:
    from ..check.configstack import Layer
    from ..check.result import CheckFinding
    from ..inputs import Inputs
    from ..models import CompiledBundle, ResolvedRoot

FileOpt = Annotated[Path | None, typer.Option(dir_okay=False)]


def _home_config_layer(home: str | None, roots: tuple[ResolvedRoot, ...]) -> Layer | None:
    """CODEX_HOME/config.toml as the lowest layer, when it is a regular file (lstat) and no root."""
    import os
    import stat

    from ..check.configstack import load_config_toml

    if home is None:
        return None
    path = os.path.join(home, "config.toml")
    protected = {s for r in roots for s in (*r.spellings, r.target)}
    if path in protected:
        return None  # never read a protected path, whatever it is called
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return load_config_toml(path, name="CODEX_HOME config.toml")


def _canary(bundle: CompiledBundle) -> tuple[dict[str, Any], list[CheckFinding], bool]:
    """Run the canary hook (compiler/canary/run.py run_canaries) or fail with exit 7."""
    import importlib

    from ..check.canary import canary_findings
    from ..errors import EnvironmentMissingError
    from ..settings import codex_binary, codex_version

    try:
        module = importlib.import_module("profilec.canary.run")
    except ModuleNotFoundError as exc:
        if exc.name not in ("profilec.canary", "profilec.canary.run"):
            raise EnvironmentMissingError(f"--canary: the canary runner needs {exc.name}") from None
        raise EnvironmentMissingError(
            "--canary: compiler/canary/run.py is not in this build"
        ) from None
    run = getattr(module, "run_canaries", None)
    if run is None:
        raise EnvironmentMissingError("--canary: profilec.canary.run has no run_canaries()")
    binary = codex_binary()
    if binary is None or not binary.is_file():
        raise EnvironmentMissingError(
            f"--canary: pinned codex {codex_version()} is not installed", hint="run .ci/tools.sh"
        )
    from .console import progress

    with progress("canary", total=1 + len(bundle.profiles)) as step:
        report = run(bundle, codex_bin=binary, progress=step)
    doc: dict[str, Any] = report.to_dict()
    findings = canary_findings(doc)  # one PC022 per failed probe
    return doc, findings, bool(report.mismatch_only)


def _verify_lock(lock: Path, inputs: Inputs) -> None:
    """Recompile the bundle from the run's inputs and compare it with the lock."""
    from ..audit.drift import verify

    drift = verify(str(lock), inputs)
    if drift is not None:
        sys.stderr.write(drift.report)
        raise drift.error


@app.command("check")
def check_command(
    roots: RootsOpt,
    profiles: ProfilesOpt = None,
    workspace_root: WorkspaceOpt = None,
    codex_home: HomeOpt = None,
    session_config: SessionOpt = None,
    vouched_mcp: McpOpt = None,
    run_as: RunAsOpt = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Check this Codex config.toml instead of compiling."),
    ] = None,
    overrides: Annotated[
        Path | None,
        typer.Option("--overrides", help="Check this -c override list (one value per line)."),
    ] = None,
    acp_json: Annotated[
        Path | None,
        typer.Option(
            "--acp-json",
            help="Check this acp-json launch document (overrides sent as CODEX_CONFIG).",
        ),
    ] = None,
    mode_map: Annotated[
        Path | None,
        typer.Option(
            "--mode-map", help="ACP mode -> profile id (JSON object, acp-json, or modes.toml)."
        ),
    ] = None,
    launch_requests: Annotated[
        Path | None,
        typer.Option(
            "--launch-requests",
            help="JSON Lines of the requests a launcher sends to codex app-server (PC023).",
        ),
    ] = None,
    launch_argv: Annotated[
        Path | None,
        typer.Option(
            "--launch-argv",
            help="The parent's command line (JSON array) or a compiled launch document: "
            "PC048 (a network listener), PC049 (a secret on the argv).",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="text | json | junit | sarif | github")
    ] = "text",
    out: Annotated[Path | None, typer.Option("--out", help="Write the report here.")] = None,
    fail_on: Annotated[str, typer.Option("--fail-on", help="note | warning | error")] = "error",
    canary: Annotated[
        bool,
        typer.Option(
            "--canary", help="Also run the no-secret canaries (needs Docker and the pinned codex)."
        ),
    ] = False,
    lock: Annotated[
        Path | None,
        typer.Option(
            "--lock",
            help="Fail (exit 9) with a diff when the recompiled bundle differs.",
            dir_okay=False,
        ),
    ] = None,
    cwd: Annotated[
        str | None,
        typer.Option(
            "--cwd",
            help="Session cwd as the launcher spells it (default: each workspace root).",
        ),
    ] = None,
    home_dir: Annotated[
        str | None, typer.Option("--home", help="HOME of the session (default: $HOME).")
    ] = None,
    tmp_dir: Annotated[
        str | None, typer.Option("--tmpdir", help="TMPDIR of the session (default: $TMPDIR).")
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", metavar="PCxxx", help="Waive a rule (repeatable)."),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="A previous `check --format json` report: only new findings count.",
            dir_okay=False,
        ),
    ] = None,
    project_config: Annotated[
        Path | None,
        typer.Option(
            "--project-config",
            help="Waivers file (default: profilec.toml or pyproject.toml [tool.profilec], "
            "found upward from the cwd).",
            dir_okay=False,
        ),
    ] = None,
    no_project_config: Annotated[
        bool, typer.Option("--no-project-config", help="Do not look for a project config.")
    ] = False,
    group: Annotated[
        bool,
        typer.Option(
            "--group/--no-group", help="One finding per root cause (default) or one per cell."
        ),
    ] = True,
) -> int:
    """Prove every mode denies every root under every spelling, and lint the config stack."""

    from ..check.checker import CheckInputs, from_bundle, run_check
    from ..check.configstack import (
        ConfigStack,
        load_acp_json,
        load_config_toml,
        load_mode_map,
        load_overrides,
        load_session,
    )
    from ..check.result import SEVERITY_RANK
    from ..errors import CanaryMismatchError, UsageError
    from ..inputs import Inputs
    from ..pipeline import default_codex_home
    from ..report import FORMATS, render
    from ..settings import codex_version
    from .compile_cmd import emit

    if fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fail_on not in SEVERITY_RANK:
        raise UsageError(f"unknown --fail-on {fail_on!r}; choose note, warning or error")
    if config and overrides:
        raise UsageError("give --config or --overrides, not both")
    foreign = bool(config or overrides or acp_json)
    if canary and foreign:
        raise UsageError(
            "--canary probes what profilec compiles; drop --config/--overrides/--acp-json"
        )

    ws = tuple(workspace_root or ())
    layers: list[Layer] = []
    modes: dict[str, str] | None = load_mode_map(str(mode_map)) if mode_map else None
    session_raw: dict[str, Any] | None = None
    sfile = str(session_config) if session_config else None
    extra: list[CheckFinding] = []
    canary_doc: dict[str, Any] | None = None
    mismatch_only = False

    for name, value in (("--cwd", cwd), ("--home", home_dir), ("--tmpdir", tmp_dir)):
        if value is not None and not value.startswith("/"):
            raise UsageError(f"{name} {value!r} must be an absolute path")
    # The one edge: every input file below is read once, here, and shared by the lock check,
    # the compile and the lints (compiler/inputs.py). --home/--tmpdir given explicitly are the
    # launch values compile takes too; the lints fall back to the environment's.
    edge = Inputs(
        roots=str(roots),
        profiles=str(profiles) if profiles else None,
        workspace_roots=ws,
        codex_home=codex_home,
        session_config=sfile,
        tmpdir=tmp_dir,
        home=home_dir,
        vouched_mcp=str(vouched_mcp) if vouched_mcp else None,
        run_as=run_as,
    )
    if lock is not None and foreign:
        raise UsageError("--lock compares what profilec compiles; drop --config/--overrides")
    if lock is not None:
        _verify_lock(lock, edge)

    if not foreign:
        from ..pipeline import compile_inputs

        bundle = compile_inputs(edge)
        session_raw = edge.session_raw()  # bounded: untrusted; the bytes compile sanitized
        if modes is None:
            modes = {m: e.profile_id for m, e in edge.policy().mode_map.modes.items()}
        home_layer = _home_config_layer(
            bundle.codex_home.canonical if bundle.codex_home else None, bundle.roots
        )
        inputs = from_bundle(
            bundle,
            modes,
            manifest_file=str(roots),
            session_raw=session_raw,
            session_file=sfile,
            extra_layers=[home_layer] if home_layer else [],
        )
        if canary:
            canary_doc, extra, mismatch_only = _canary(bundle)
        if lock is not None:
            from ..check.parent_layers import lock_findings

            extra = [*extra, *lock_findings(bundle, str(lock))]
    else:
        import os

        from ..roots import resolve_home, resolve_roots, resolve_workspace_roots

        manifest = edge.manifest()
        canonical_ws = resolve_workspace_roots(ws)
        check_ws = tuple(dict.fromkeys([*ws, *canonical_ws]))
        resolved = resolve_roots(manifest, check_ws)
        home_path = codex_home or default_codex_home(resolved)
        home = resolve_home(home_path) if home_path else None
        home_layer = _home_config_layer(home.canonical if home else None, resolved)
        if config:
            layers.append(load_config_toml(str(config)))
        elif home_layer:
            layers.append(home_layer)
        if overrides:
            layers.append(load_overrides(str(overrides)))
        if acp_json:
            acp_layer, acp_modes = load_acp_json(str(acp_json))
            layers.append(acp_layer)
            if modes is None:
                modes = acp_modes
        if sfile:
            from ..session import MAX_BYTES

            session, session_raw = load_session(sfile, edge.untrusted(sfile, MAX_BYTES + 1).data)
            layers.append(session)
        if modes is None:
            modes = {m: e.profile_id for m, e in edge.policy().mode_map.modes.items()}
        inputs = CheckInputs(
            stack=ConfigStack(tuple(layers)),
            mode_map=modes,
            roots=resolved,
            workspace_roots=ws,
            codex_home=home.canonical if home else None,
            codex_home_holders=home.holder_dirs if home else (),
            session_raw=session_raw,
            session_file=sfile,
            manifest_file=str(roots),
            home=os.environ.get("HOME"),
            tmpdir=os.environ.get("TMPDIR"),
            # A foreign config is held to the same trusted base as a compiled one (PC025).
            trusted_base=_trusted_base(edge),
        )

    import dataclasses
    import os

    inputs = dataclasses.replace(
        inputs,
        cwd=cwd,
        home=home_dir if home_dir is not None else os.environ.get("HOME"),
        tmpdir=tmp_dir if tmp_dir is not None else os.environ.get("TMPDIR"),
        allowlist=edge.allowlist() if session_raw is not None else None,
        parent=_parent(edge),
    )
    if launch_argv:
        from ..check.launcher import argv_findings, load_launch_argv

        afile = str(launch_argv)
        extra = [*extra, *argv_findings(load_launch_argv(afile), file=afile)]
    if launch_requests:
        from ..check.launcher import launcher_findings, load_launch_requests

        lfile = str(launch_requests)
        extra = [*extra, *launcher_findings(load_launch_requests(lfile), file=lfile)]
    report = run_check(
        inputs,
        fail_on=fail_on,  # type: ignore[arg-type]  # checked against SEVERITY_RANK above
        codex_version=codex_version(),
        canary=canary_doc,
        extra=extra,
    )
    report = _triage(
        report, inputs.stack, group, ignore, baseline, project_config, no_project_config
    )
    emit(render(fmt, report), out)
    if fmt == "github":
        from ..report.github import write_step_summary

        write_step_summary(report)
    if not report.passed:
        failing = sum(
            1
            for f in report.findings
            if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] and f.waiver is None
        )
        from .console import note

        note(f"check: {failing} findings at or above {fail_on}")
        if mismatch_only and failing == 1:
            raise CanaryMismatchError("canary observations disagree with the static prediction")
        return 1
    return 0


def _parent(edge: Inputs) -> tuple[Any, ...]:
    """The reviewed parent policy every config stack must keep in force (PC046)."""
    parent = edge.policy().parent
    return tuple(parent.settings) if parent else ()


def _trusted_base(edge: Inputs) -> tuple[Any, ...]:
    """The resolved trusted base (reviewed policy + the manifest's section) for a foreign config."""
    from ..pipeline import trusted_paths
    from ..roots import resolve_workspace_roots

    return trusted_paths(edge, resolve_workspace_roots(edge.workspace_roots), edge.home)


def _triage(
    report: Any,
    stack: Any,
    group: bool,
    ignore: list[str] | None,
    baseline: Path | None,
    project_config: Path | None,
    no_project_config: bool,
) -> Any:
    """Locate and group findings by cause, then apply --ignore, project waivers, --baseline."""
    import os
    from datetime import UTC, datetime

    from ..check.triage import apply_waivers, locate, regroup
    from ..check.waivers import (
        find_config,
        ignore_waivers,
        load_baseline,
        load_config,
        parse_waivers,
    )

    if group:
        report = regroup(report, stack)
    else:
        report = report.model_copy(update={"findings": tuple(locate(report.findings, stack))})
    waivers = ignore_waivers(ignore or [])
    if project_config is not None:
        waivers += parse_waivers(load_config(str(project_config)), str(project_config))
    elif not no_project_config:
        found = find_config(os.getcwd())
        if found is not None:
            waivers += parse_waivers(found[1], found[0])
    base = load_baseline(str(baseline)) if baseline is not None else None
    if not waivers and base is None:
        return report
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    today = (
        datetime.fromtimestamp(int(epoch), tz=UTC)
        if epoch and epoch.isdigit()
        else datetime.now(tz=UTC)
    ).date()
    return apply_waivers(
        report,
        waivers,
        baseline=base,
        baseline_file=str(baseline) if baseline else None,
        today=today,
    )
