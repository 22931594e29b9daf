"""`profilec check`: the request and its run.

Compile what profilec compiles (or take a foreign config stack: --config, --overrides,
--acp-json), prove every mode denies every root, lint the stack, add the canary, lock and
launcher findings, then triage (group by cause, waivers, --baseline) and render the report.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..audit.drift import verify
from ..check.checker import CheckInputs, from_bundle, run_check
from ..check.configstack import (
    ConfigStack,
    load_acp_json,
    load_config_toml,
    load_mode_map,
    load_overrides,
    load_session,
)
from ..check.launcher import (
    argv_findings,
    launcher_findings,
    load_launch_argv,
    parse_launch_requests,
)
from ..check.ownership import ownership_findings
from ..check.parent_layers import lock_findings
from ..check.requirements import requirements_findings
from ..check.result import SEVERITY_RANK
from ..check.triage import apply_waivers, locate, regroup
from ..check.waivers import find_config, ignore_waivers, load_baseline, load_config, config_waivers
from ..errors import EXIT_CLEAN, EXIT_FOUND, CanaryMismatchError, TrustError, UsageError
from ..pipeline import compile_inputs, resolve_layout, trusted_paths
from ..report import FORMATS, render
from ..roots import resolve_home
from ..session import MAX_BYTES
from ..settings import codex_version, now_utc
from . import CompileFlags, Outcome, Progress, absolute, no_progress
from .canary import probe_findings

if TYPE_CHECKING:
    from ..check.configstack import Layer
    from ..check.result import CheckFinding, CheckReport, Waiver
    from ..inputs import Inputs
    from ..models import ResolvedRoot


@dataclass(frozen=True, slots=True)
class CheckRequest(CompileFlags):
    """The flags of one `profilec check` run (compiler/cli/check_cmd.py lists their help)."""

    config: Path | None = None
    overrides: Path | None = None
    acp_json: Path | None = None
    mode_map: Path | None = None
    launch_requests: Path | None = None
    launch_argv: Path | None = None
    fmt: str = "text"
    fail_on: str = "error"
    canary: bool = False
    lock: Path | None = None
    cwd: str | None = None
    ignore: tuple[str, ...] = ()
    baseline: Path | None = None
    project_config: Path | None = None
    no_project_config: bool = False
    group: bool = True
    exit_zero: bool = False
    requirements: str | None = None

    @property
    def foreign(self) -> bool:
        """A config profilec did not write is checked instead of compiling."""
        return bool(self.config or self.overrides or self.acp_json)

    @property
    def session_file(self) -> str | None:
        return str(self.session_config) if self.session_config else None


@dataclass(frozen=True, slots=True)
class CheckOutcome(Outcome):
    """The outcome plus the report it rendered (`--format github` also writes a job summary)."""

    report: CheckReport | None = None


def run(request: CheckRequest, progress: Progress = no_progress) -> CheckOutcome:
    """Check what `request` names; the rendered report, exit 1 on findings at or above
    --fail-on, a CanaryMismatchError when a canary mismatch is the only one, a LockDriftError
    (the diff on stderr, no report) when the recompiled bundle differs from --lock."""
    # The one edge: every input file is read once and shared by the lock check, the compile
    # and the lints (compiler/inputs.py). --home/--tmpdir given explicitly are the launch
    # values compile takes too; the lints fall back to the environment's.
    rooted = request.inputs() if request.roots is not None else None
    modes = _validate(request, rooted or request.unrooted())
    edge = rooted or request.inputs()  # without --roots: its UsageError, after the flag checks
    excuse = load_waivers(request, edge)
    if request.lock is not None:
        drift = _lock_drift(request.lock, edge)
        if drift is not None:
            return drift
    extra: list[CheckFinding] = []
    canary_doc: dict[str, Any] | None = None
    mismatch_only = False
    if request.foreign:
        inputs = _foreign(request, edge, modes)
    else:
        inputs, extra, canary_doc, mismatch_only = _compiled(request, edge, modes, progress)
    inputs = _launch_context(request, edge, inputs)
    report = run_check(
        inputs,
        fail_on=request.fail_on,  # type: ignore[arg-type]  # validated against SEVERITY_RANK
        codex_version=codex_version(),
        canary=canary_doc,
        extra=[*extra, *_launcher_findings(request, edge), *_ownership(request, inputs)],
    )
    report = triage(report, inputs.stack, request, excuse)
    return _outcome(request, report, render(request.fmt, report), mismatch_only, excuse.used)


def _validate(request: CheckRequest, edge: Inputs) -> dict[str, str] | None:
    """Refuse flags that do not go together; the --mode-map, when given, as read (through
    `edge`)."""
    if request.fmt not in FORMATS:
        raise UsageError(f"unknown --format {request.fmt!r}; choose one of {', '.join(FORMATS)}")
    if request.fail_on not in SEVERITY_RANK:
        raise UsageError(f"unknown --fail-on {request.fail_on!r}; choose note, warning or error")
    if request.config and request.overrides:
        raise UsageError("give --config or --overrides, not both")
    if request.project_config is not None and request.no_project_config:
        # The GitHub Action passes --no-project-config: a waivers file named in its `args`
        # would be read from the pull request's tree all the same.
        raise UsageError("give --project-config or --no-project-config, not both")
    if request.vouched_mcp is not None and request.foreign:
        # It shapes what profilec compiles; a foreign config is checked as written, so the file
        # would be taken and never read, and the user led to think it was checked.
        raise UsageError(
            "--vouched-mcp shapes what profilec compiles; a config given with --config, "
            "--overrides or --acp-json is checked as written: drop --vouched-mcp"
        )
    if request.canary and request.foreign:
        raise UsageError(
            "--canary probes what profilec compiles; drop --config/--overrides/--acp-json"
        )
    modes = None
    if request.mode_map:
        mfile = str(request.mode_map)
        modes = load_mode_map(mfile, edge.text(mfile, "mode map"))
    absolute(cwd=request.cwd, home=request.home, tmpdir=request.tmpdir)
    if request.lock is not None and request.foreign:
        raise UsageError("--lock compares what profilec compiles; drop --config/--overrides")
    return modes


def _lock_drift(lock: Path, edge: Inputs) -> CheckOutcome | None:
    """Recompile the bundle from the run's inputs and compare it with the lock: None when it
    matches, else the outcome that prints the diff and raises the LockDriftError."""
    drift = verify(str(lock), edge)
    if drift is None:
        return None
    return CheckOutcome(stderr=drift.report, error=drift.error)


def _policy_modes(edge: Inputs) -> dict[str, str]:
    return {m: e.profile_id for m, e in edge.policy().mode_map.modes.items()}


def _compiled(
    request: CheckRequest, edge: Inputs, modes: dict[str, str] | None, progress: Progress
) -> tuple[CheckInputs, list[CheckFinding], dict[str, Any] | None, bool]:
    """What profilec compiles: (check inputs, canary and lock findings, canary report,
    whether a canary mismatch is all the canary found)."""
    bundle = compile_inputs(edge)
    session_raw = edge.session_raw()  # bounded: untrusted; the bytes compile sanitized
    home_layer = _home_config_layer(
        edge, bundle.codex_home.canonical if bundle.codex_home else None, bundle.roots
    )
    inputs = from_bundle(
        bundle,
        modes if modes is not None else _policy_modes(edge),
        manifest_file=edge.roots,
        session_raw=session_raw,
        session_file=request.session_file,
        extra_layers=[home_layer] if home_layer else [],
    )
    extra: list[CheckFinding] = []
    canary_doc: dict[str, Any] | None = None
    mismatch_only = False
    if request.canary:
        canary_doc, extra, mismatch_only = probe_findings(bundle, progress)
    if request.lock is not None:
        extra = [*extra, *lock_findings(bundle, str(request.lock))]
    extra = [*extra, *requirements_findings(bundle, edge, request.requirements)]
    return inputs, extra, canary_doc, mismatch_only


def _foreign(request: CheckRequest, edge: Inputs, modes: dict[str, str] | None) -> CheckInputs:
    """A config stack profilec did not write, over the roots resolved as compile resolves
    them (pipeline.resolve_layout) and held to the same trusted base (PC025)."""
    canonical_ws, resolved, home_path = resolve_layout(edge)
    home = resolve_home(home_path) if home_path else None
    home_layer = _home_config_layer(edge, home.canonical if home else None, resolved)
    layers = _foreign_layers(request, edge, home_layer)
    if request.acp_json:
        afile = str(request.acp_json)
        acp_layer, acp_modes = load_acp_json(afile, edge.text(afile, "acp-json document"))
        layers.append(acp_layer)
        modes = acp_modes if modes is None else modes
    session_raw: dict[str, Any] | None = None
    sfile = request.session_file
    if sfile:
        session, session_raw = load_session(sfile, edge.untrusted(sfile, MAX_BYTES + 1).data)
        layers.append(session)
    return CheckInputs(
        stack=ConfigStack(tuple(layers)),
        mode_map=modes if modes is not None else _policy_modes(edge),
        roots=resolved,
        workspace_roots=request.workspace_root,
        codex_home=home.canonical if home else None,
        codex_home_holders=home.holder_dirs if home else (),
        session_raw=session_raw,
        session_file=sfile,
        manifest_file=edge.roots,
        home=os.environ.get("HOME"),
        tmpdir=os.environ.get("TMPDIR"),
        trusted_base=trusted_paths(edge, canonical_ws, edge.home),
    )


def _foreign_layers(request: CheckRequest, edge: Inputs, home_layer: Layer | None) -> list[Layer]:
    """--config (else CODEX_HOME/config.toml), then --overrides (read through `edge`)."""
    layers: list[Layer] = []
    if request.config:
        cfile = str(request.config)
        layers.append(load_config_toml(cfile, edge.text(cfile, "config")))
    elif home_layer:
        layers.append(home_layer)
    if request.overrides:
        ofile = str(request.overrides)
        layers.append(load_overrides(ofile, edge.text(ofile, "override list")))
    return layers


def _home_config_layer(
    edge: Inputs, home: str | None, roots: tuple[ResolvedRoot, ...]
) -> Layer | None:
    """CODEX_HOME/config.toml as the lowest layer, when it is a regular file (lstat) and no root."""
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
    return load_config_toml(path, edge.text(path, "config"), name="CODEX_HOME config.toml")


def _launch_context(request: CheckRequest, edge: Inputs, inputs: CheckInputs) -> CheckInputs:
    """The session's cwd, HOME and TMPDIR (the flags, else the environment's), the policy's
    session allow-list when there is a session config, the reviewed parent policy (PC046)."""
    parent = edge.policy().parent
    return replace(
        inputs,
        cwd=request.cwd,
        home=request.home if request.home is not None else os.environ.get("HOME"),
        tmpdir=request.tmpdir if request.tmpdir is not None else os.environ.get("TMPDIR"),
        allowlist=edge.allowlist() if inputs.session_raw is not None else None,
        parent=tuple(parent.settings) if parent else (),
    )


def _ownership(request: CheckRequest, inputs: CheckInputs) -> list[CheckFinding]:
    """PC060-PC062: the launch's ownership and mode prerequisites for the run-as uid
    (--run-as, else the uid check runs as)."""
    uid = request.run_as if request.run_as is not None else os.geteuid()
    if uid < 0:
        raise UsageError(f"--run-as {uid}: a uid is 0 or more")
    return ownership_findings(inputs.roots, inputs.codex_home, uid)


def _launcher_findings(request: CheckRequest, edge: Inputs) -> list[CheckFinding]:
    """PC048/PC049 from --launch-argv, PC023 from --launch-requests (read through `edge`)."""
    out: list[CheckFinding] = []
    if request.launch_argv:
        afile = str(request.launch_argv)
        out += argv_findings(load_launch_argv(afile, edge.text(afile, "launch argv")), file=afile)
    if request.launch_requests:
        lfile = str(request.launch_requests)
        text = edge.text(lfile, "launch requests")
        out += launcher_findings(parse_launch_requests(text, where=lfile), file=lfile)
    return out


@dataclass(frozen=True, slots=True)
class Waivers:
    """What may excuse findings in this run, read and refused before anything is checked."""

    waivers: list[Waiver]
    baseline: set[str] | None
    baseline_file: str | None
    #: The note saying which project config gave waivers, or that none did.
    used: str


def load_waivers(request: CheckRequest, edge: Inputs) -> Waivers:
    """--ignore, the project config (named, else found upward from the cwd; trust-checked as
    the roots manifest is) and --baseline, read through the run's edge. A waiver of a rule
    declared unwaivable is a UsageError (compiler/check/waivers.py), before the check runs."""

    def read(path: str) -> bytes:
        try:
            return edge.trusted(path).data
        except TrustError as exc:
            raise TrustError(
                exc.message,
                where=exc.where,
                hint="a project config waives findings: it must be as trusted as the roots "
                "manifest; --no-project-config skips it",
            ) from None

    def peek(path: str) -> bytes:
        return edge.project_file(path, "project config").data

    waivers = ignore_waivers(request.ignore)
    found: tuple[str, dict[str, Any]] | None = None
    if request.project_config is not None:
        where = str(request.project_config)
        found = (where, load_config(where, read(where)))
    elif not request.no_project_config:
        found = find_config(os.getcwd(), read, peek)
    if found is not None:
        config = config_waivers(found[1], found[0])
        waivers += config
        used = f"project config: {found[0]} (waivers: {len(config)})"
    elif request.no_project_config:
        used = "project config: none (--no-project-config)"
    else:
        used = (
            f"project config: none (no profilec.toml or [tool.profilec] at or above {os.getcwd()})"
        )
    baseline = str(request.baseline) if request.baseline is not None else None
    base = None
    if baseline is not None:
        base = load_baseline(baseline, edge.project_file(baseline, "baseline").data)
    return Waivers(waivers, base, baseline, used)


def triage(report: CheckReport, stack: Any, request: CheckRequest, excuse: Waivers) -> CheckReport:
    """Locate and group findings by cause, then apply --ignore, the project's waivers and
    --baseline (`load_waivers`)."""
    if request.group:
        report = regroup(report, stack)
    else:
        report = report.model_copy(update={"findings": tuple(locate(report.findings, stack))})
    if not excuse.waivers and excuse.baseline is None:
        return report
    return apply_waivers(
        report,
        excuse.waivers,
        baseline=excuse.baseline,
        baseline_file=excuse.baseline_file,
        today=now_utc().date(),
    )


def _outcome(
    request: CheckRequest, report: CheckReport, text: str, mismatch_only: bool, used: str
) -> CheckOutcome:
    """Exit 1 on failing findings (unwaived, at or above --fail-on); a canary mismatch that is
    the only failing finding is the CanaryMismatchError (exit 8) instead. `used` (which
    project config gave waivers) is a note either way. --exit-zero: the same report and notes,
    exit 0."""
    if report.passed:
        return CheckOutcome(
            text=text, exit_code=EXIT_CLEAN, notes=(f"check: {used}",), report=report
        )
    floor = SEVERITY_RANK[request.fail_on]
    failing = sum(
        1 for f in report.findings if SEVERITY_RANK[f.severity] >= floor and f.waiver is None
    )
    note = f"check: {failing} findings at or above {request.fail_on}"
    if request.exit_zero:
        notes = (f"check: {used}", f"{note} (--exit-zero: exit 0)")
        return CheckOutcome(text=text, exit_code=EXIT_CLEAN, notes=notes, report=report)
    error = None
    if mismatch_only and failing == 1:
        error = CanaryMismatchError("canary observations disagree with the static prediction")
    return CheckOutcome(
        text=text,
        exit_code=EXIT_FOUND,
        notes=(f"check: {used}", note),
        error=error,
        report=report,
    )
