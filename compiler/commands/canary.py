"""`profilec canary`: the request and its run; and the canary step of `check --canary` and
`audit --canary` (`probe_findings`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..audit.evidence import bind
from ..bundle.load import compile_document
from ..canary.run import run_canaries
from ..check.lints.canary import canary_findings
from ..errors import (
    EXIT_CLEAN,
    EXIT_FOUND,
    CanaryMismatchError,
    EnvironmentMissingError,
)
from ..flags import CompileFlags
from ..formats import CANARY_FORMATS
from ..inputs import Inputs
from ..settings import codex_binary, codex_version
from . import Outcome, Progress, no_progress

if TYPE_CHECKING:
    from ..models.check import CheckFinding
    from ..models.compiled import CompiledBundle


@dataclass(frozen=True, slots=True)
class CanaryRequest(CompileFlags):
    """The flags of one `profilec canary` run."""

    fmt: str = CANARY_FORMATS.default
    parent: bool = True
    managed_requirements: bool = False


def _codex_binary(what: str) -> Path:
    """The pinned codex binary, or an EnvironmentMissingError (exit 7)."""
    binary = codex_binary()
    if binary is None or not binary.is_file():
        raise EnvironmentMissingError(
            f"{what}pinned codex {codex_version()} is not installed", hint="run .ci/tools.sh"
        )
    return binary


def run(request: CanaryRequest, progress: Progress = no_progress) -> Outcome:
    """Compile, probe every mode (and the parent's roads with `parent`): exit 0 when every
    probe passes, 1 when one failed, a CanaryMismatchError (exit 8) when only the static
    prediction was wrong; the report as text or as JSON bound to the bundle it probed."""
    CANARY_FORMATS.choose(request.fmt)
    bundle, doc = compile_document(Inputs.of(request))
    codex = _codex_binary("")
    steps = 1 + len(bundle.profiles) * (2 if request.parent else 1)
    with progress("canary", steps) as step:
        report = run_canaries(
            bundle,
            codex_bin=codex,
            progress=step,
            parent_probes=request.parent,
            managed_requirements=request.managed_requirements,
        )
    if request.fmt == "json":
        # Bound to the bundle it probed (audit --canary-json refuses it for another one).
        bound = bind(report.model_dump(mode="json"), doc, datetime.now(tz=UTC))
        text = json.dumps(bound, indent=2, sort_keys=True) + "\n"
    else:
        text = report.to_text()
    if report.passed:
        return Outcome(text=text, exit_code=EXIT_CLEAN)
    if report.mismatch_only:
        mismatch = CanaryMismatchError("canary observations disagree with the static prediction")
        return Outcome(text=text, error=mismatch)
    return Outcome(text=text, exit_code=EXIT_FOUND)


def probe_findings(
    bundle: CompiledBundle, progress: Progress = no_progress
) -> tuple[dict[str, Any], list[CheckFinding], bool]:
    """Run the canaries on `bundle` (compiler/canary/run.py): (the report, one PC022 finding per
    failed probe, whether a mismatch is all it found). An EnvironmentMissingError (exit 7)
    without the pinned codex."""
    binary = _codex_binary("--canary: ")
    with progress("canary", 1 + len(bundle.profiles)) as step:
        report = run_canaries(bundle, codex_bin=binary, progress=step)
    doc: dict[str, Any] = report.model_dump(mode="json")
    return doc, canary_findings(doc), bool(report.mismatch_only)
