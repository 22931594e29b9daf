"""`profilec check`: the request and its outcome.

The run lives in compiler/check/checker.py (`Checker.run() -> CheckReport`: waivers, stack
building, canary and requirements steps, the static check, triage); the command validates the
output format, verifies --lock (the diff on stderr when the recompiled bundle differs), and
turns the report into the rendered text and the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..audit.drift import recompile
from ..check.checker import Checker, validate
from ..compiled import compile_step, no_plan_layout
from ..errors import EXIT_CLEAN, EXIT_FOUND, CanaryMismatchError
from ..flags import CompileFlags
from ..formats import CHECK_FORMATS
from ..inputs import Inputs
from ..models.check import SEVERITY_RANK, CheckReport
from ..report.text import render_quiet
from ..settings import now_utc
from . import Outcome, Progress, absolute, no_progress
from .canary import probe_findings

if TYPE_CHECKING:
    from ..models.compiled import CompiledBundle


@dataclass(frozen=True, slots=True)
class CheckRequest(CompileFlags):
    """The flags of one `profilec check` run (compiler/cli/check_cmd.py lists their help)."""

    config: Path | None = None
    overrides: Path | None = None
    acp_json: Path | None = None
    mode_map: Path | None = None
    launch_requests: Path | None = None
    launch_argv: Path | None = None
    launch_env: Path | None = None
    fmt: str = CHECK_FORMATS.default
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
    #: `profilec -q check`: the text report keeps only what fails the run and the verdict.
    quiet: bool = False

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
    CHECK_FORMATS.choose(request.fmt)
    rooted = Inputs.of(request) if request.roots is not None else None
    modes = validate(request, rooted or Inputs.unrooted(request.profiles))
    absolute(cwd=request.cwd, home=request.home, tmpdir=request.tmpdir)
    edge = rooted or Inputs.of(request)  # without --roots: its UsageError, after the flag checks
    checker = Checker.for_request(request, edge, modes)
    bundle: CompiledBundle | None = None
    if request.lock is not None:
        # The lock's compile (with its plan layout) is the one the rest of the run checks.
        compiled, drift = recompile(str(request.lock), edge)
        if drift is not None:
            return CheckOutcome(stderr=drift.report, error=drift.error)
        bundle = compiled.bundle
    if request.foreign:
        no_plan_layout(request, "--config/--overrides/--acp-json")
    elif bundle is None:
        bundle = compile_step(edge).bundle
    canary = probe_findings(bundle, progress) if request.canary and bundle is not None else None
    report = checker.run(None if request.foreign else bundle, canary)
    if request.quiet and request.fmt == "text":
        text = render_quiet(report)
    else:
        text = CHECK_FORMATS.renderer(request.fmt)(report, now_utc())
    return _outcome(request, report, text, checker.mismatch_only, checker.waivers.used)


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
