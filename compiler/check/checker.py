"""The run of `profilec check`: `Checker.run(bundle, canary) -> CheckReport`.

A run reads its waivers first (--ignore, the project config, --baseline: refused before
anything is checked), builds the config stack (compiler/check/build.py: the bundle profilec
compiled, or a foreign config), adds what the canary step found and the lock, requirements,
launcher and ownership checks, then the static check (`run_check`: resolve every mode, prove
coverage, lint), then triage (group by cause, waivers, baseline). Every verdict comes from
profilec.codex, never from the compiler. The command (compiler/commands/check.py) validates the
output format, compiles once (with --lock: the lock check's compile, compiler/audit/drift.py,
the diff its outcome when it drifted), runs the canary on that bundle, hands both to `run` and
renders the report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..codex.fsview import LiveFs
from ..codex.vocabulary import DEFAULT_CODEX_VERSION
from ..errors import TrustError, UsageError
from ..models.check import (
    SEVERITY_RANK,
    CheckFinding,
    CheckReport,
    Severity,
    Summary,
    at_or_above,
    finding_sort_key,
)
from ..settings import codex_version, now_utc
from .build import compiled_inputs, foreign_inputs, with_launch_context
from .check_inputs import CheckInputs, launch_context_line
from .configstack import ConfigStack, load_mode_map
from .context import LintContext
from .coverage import cell_findings, coverage
from .lints import run_lints
from .lints.launcher import (
    argv_findings,
    document_envs,
    env_findings,
    launcher_findings,
    load_launch_argv,
    load_launch_env,
    parse_launch_requests,
)
from .lints.ownership import ownership_findings
from .lints.parent import lock_findings
from .lints.requirements import requirements_findings
from .resolution import evaluate_modes
from .rules import all_rules
from .triage import apply_waivers, locate, regroup
from .waivers import config_waivers, find_config, ignore_waivers, load_baseline, load_config

if TYPE_CHECKING:
    from ..inputs import Inputs
    from ..models.check import Waiver
    from ..models.compiled import CompiledBundle
    from .options import CheckOptions

#: What the canary step found (compiler/commands/canary.py probe_findings, run by the command
#: on the bundle it compiled): (the canary report, one PC022 finding per failed probe, whether a
#: mismatch is all it found).
CanaryResult = tuple[dict[str, Any], list[CheckFinding], bool]


def run_check(
    inp: CheckInputs,
    *,
    fail_on: Severity = "error",
    codex_version: str = DEFAULT_CODEX_VERSION,
    canary: dict[str, Any] | None = None,
    extra: Sequence[CheckFinding] = (),
) -> CheckReport:
    """The whole static check; deterministic for the same inputs."""
    merged = inp.stack.merged()
    modes, findings = evaluate_modes(inp, merged)

    cells = coverage(modes, inp.roots, LiveFs(), codex_version=codex_version)
    findings += cell_findings(cells, file=inp.manifest_file)
    ctx = LintContext(inp, merged, modes, codex_version)
    run_lints(ctx)
    findings += ctx.items
    findings += list(extra)
    seen: set[tuple[str | None, ...]] = set()
    unique: list[CheckFinding] = []
    for f in sorted(findings, key=finding_sort_key):
        key = (f.rule, f.mode, f.profile, f.root, f.path, None if f.path else f.message)
        if key in seen:
            continue
        seen.add(key)
        if f.file is None and inp.manifest_file:
            # CI annotations need a file: root-level facts point at the roots manifest.
            f = f.model_copy(update={"file": inp.manifest_file})
        unique.append(f)
    summary = Summary.counting(
        unique, cells=len(cells), failed_cells=sum(1 for c in cells if c.access != "deny")
    )
    return CheckReport(
        codex_version=codex_version,
        fail_on=fail_on,
        passed=not any(at_or_above(f.severity, fail_on) for f in unique),
        inputs=(
            *(f"{ly.name}: {ly.file or '(generated)'}" for ly in inp.stack.layers),
            launch_context_line(inp),
        ),
        modes={m.mode: m.profile_id for m in modes},
        summary=summary,
        cells=tuple(cells),
        findings=tuple(unique),
        rules=all_rules(),
        canary=canary,
    )


def validate(options: CheckOptions, edge: Inputs) -> dict[str, str] | None:
    """Refuse flags that do not go together; the --mode-map, when given, as read (through
    `edge`)."""
    if options.fail_on not in SEVERITY_RANK:
        raise UsageError(f"unknown --fail-on {options.fail_on!r}; choose note, warning or error")
    if options.config and options.overrides:
        raise UsageError("give --config or --overrides, not both")
    if options.project_config is not None and options.no_project_config:
        # The GitHub Action passes --no-project-config: a waivers file named in its `args`
        # would be read from the pull request's tree all the same.
        raise UsageError("give --project-config or --no-project-config, not both")
    if options.vouched_mcp is not None and options.foreign:
        # It shapes what profilec compiles; a foreign config is checked as written, so the file
        # would be taken and never read, and the user led to think it was checked.
        raise UsageError(
            "--vouched-mcp shapes what profilec compiles; a config given with --config, "
            "--overrides or --acp-json is checked as written: drop --vouched-mcp"
        )
    if options.canary and options.foreign:
        raise UsageError(
            "--canary probes what profilec compiles; drop --config/--overrides/--acp-json"
        )
    modes = None
    if options.mode_map:
        mfile = str(options.mode_map)
        modes = load_mode_map(mfile, edge.text(mfile, "mode map"))
    if options.lock is not None and options.foreign:
        raise UsageError("--lock compares what profilec compiles; drop --config/--overrides")
    return modes


@dataclass(frozen=True, slots=True)
class Waivers:
    """What may excuse findings in this run, read and refused before anything is checked."""

    waivers: list[Waiver]
    baseline: set[str] | None
    baseline_file: str | None
    #: The note saying which project config gave waivers, or that none did.
    used: str


def load_waivers(options: CheckOptions, edge: Inputs) -> Waivers:
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

    waivers = ignore_waivers(options.ignore)
    found: tuple[str, dict[str, Any]] | None = None
    if options.project_config is not None:
        where = str(options.project_config)
        found = (where, load_config(where, read(where)))
    elif not options.no_project_config:
        found = find_config(os.getcwd(), read, peek)
    if found is not None:
        config = config_waivers(found[1], found[0])
        waivers += config
        used = f"project config: {found[0]} (waivers: {len(config)})"
    elif options.no_project_config:
        used = "project config: none (--no-project-config)"
    else:
        used = (
            f"project config: none (no profilec.toml or [tool.profilec] at or above {os.getcwd()})"
        )
    baseline = str(options.baseline) if options.baseline is not None else None
    base = None
    if baseline is not None:
        base = load_baseline(baseline, edge.project_file(baseline, "baseline").data)
    return Waivers(waivers, base, baseline, used)


class Checker:
    """One `profilec check` run: `Checker.for_request` reads and refuses the waivers, `run` checks.

    `mismatch_only` is set by `run`: a canary mismatch is all the canary found."""

    __slots__ = ("edge", "mismatch_only", "modes", "options", "waivers")

    def __init__(
        self,
        options: CheckOptions,
        edge: Inputs,
        modes: dict[str, str] | None,
        waivers: Waivers,
    ) -> None:
        self.options = options
        self.edge = edge
        self.modes = modes
        self.waivers = waivers
        self.mismatch_only = False

    @classmethod
    def for_request(
        cls, options: CheckOptions, edge: Inputs, modes: dict[str, str] | None
    ) -> Checker:
        """The run over `edge` (the mode map `validate` read), its waivers read first."""
        return cls(options, edge, modes, load_waivers(options, edge))

    def run(
        self, bundle: CompiledBundle | None = None, canary: CanaryResult | None = None
    ) -> CheckReport:
        """Build the stack, run every step, the static check and triage. `bundle` is what the
        command compiled from `edge` (None for a foreign config); `canary` what the canary step
        found on it (--canary)."""
        options, edge = self.options, self.edge
        extra: list[CheckFinding] = []
        canary_doc: dict[str, Any] | None = None
        if options.foreign:
            inputs = foreign_inputs(options, edge, self.modes)
        elif bundle is None:
            raise TypeError("Checker.run checks a compiled bundle: pass the command's")
        else:
            inputs = compiled_inputs(options, edge, self.modes, bundle)
            if canary is not None:
                canary_doc, extra, self.mismatch_only = canary
            if options.lock is not None:
                extra += lock_findings(bundle, str(options.lock))
            extra += requirements_findings(bundle, edge, options.requirements)
        inputs = with_launch_context(options, edge, inputs)
        report = run_check(
            inputs,
            fail_on=options.fail_on,  # type: ignore[arg-type]  # validated against SEVERITY_RANK
            codex_version=codex_version(),
            canary=canary_doc,
            extra=[*extra, *self._launcher_findings(), *self._ownership(inputs)],
        )
        return self._triage(report, inputs.stack)

    def _ownership(self, inputs: CheckInputs) -> list[CheckFinding]:
        """PC060-PC062, PC070-PC071: the launch's ownership and mode prerequisites for the
        run-as uid (--run-as, else the uid check runs as)."""
        uid = self.options.run_as if self.options.run_as is not None else os.geteuid()
        if uid < 0:
            raise UsageError(f"--run-as {uid}: a uid is 0 or more")
        given = self.options.run_as is not None
        return ownership_findings(
            inputs.roots,
            inputs.codex_home,
            uid,
            given=given,
            trusted=inputs.trusted_base,
            identities=self.edge.manifest().identities,
            workspace_roots=inputs.workspace_roots,
            tmpdir=inputs.tmpdir,
        )

    def _launcher_findings(self) -> list[CheckFinding]:
        """PC048/PC049 from --launch-argv, PC052 from --launch-env (or a launch document given
        as --launch-argv), PC023 from --launch-requests (read through `edge`)."""
        out: list[CheckFinding] = []
        envs: list[tuple[str, dict[str, str]]] | None = None
        if self.options.launch_env:
            efile = str(self.options.launch_env)
            envs = load_launch_env(efile, self.edge.text(efile, "launch environment"))
            out += env_findings(envs, file=efile)
        if self.options.launch_argv:
            afile = str(self.options.launch_argv)
            text = self.edge.text(afile, "launch argv")
            out += argv_findings(load_launch_argv(afile, text), file=afile)
            if envs is None:  # a launch document carries its env; a bare argv does not
                out += env_findings(document_envs(json.loads(text)), file=afile)
        if self.options.launch_requests:
            lfile = str(self.options.launch_requests)
            text = self.edge.text(lfile, "launch requests")
            out += launcher_findings(parse_launch_requests(text, where=lfile), file=lfile)
        return out

    def _triage(self, report: CheckReport, stack: ConfigStack) -> CheckReport:
        """Locate and group findings by cause, then apply --ignore, the project's waivers and
        --baseline."""
        if self.options.group:
            report = regroup(report, stack)
        else:
            report = report.model_copy(update={"findings": tuple(locate(report.findings, stack))})
        excuse = self.waivers
        if not excuse.waivers and excuse.baseline is None:
            return report
        return apply_waivers(
            report,
            excuse.waivers,
            baseline=excuse.baseline,
            baseline_file=excuse.baseline_file,
            today=now_utc().date(),
        )
