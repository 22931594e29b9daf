"""`profilec audit`: the request and its run (one self-contained reviewer report)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..audit.diff import diff_bundles
from ..audit.evidence import verify
from ..audit.launchers import launcher_section, load_e2e_matrix
from ..audit.report import build_report, load_canary_json, report_time
from ..bundle.load import compile_document, load_bundle
from ..compiled import no_plan_layout
from ..emit.catalog import adapters_of
from ..errors import EXIT_CLEAN, EXIT_FOUND, UsageError
from ..flags import CompileFlags
from ..formats import AUDIT_FORMATS
from ..inputs import Inputs
from ..models.check import SEVERITY_RANK
from . import Outcome, Progress, no_progress
from .canary import probe_findings

if TYPE_CHECKING:
    from ..audit.launchers import LauncherSection
    from ..models.audit import DiffReport
    from ..models.compiled import CompiledBundle


@dataclass(frozen=True, slots=True)
class AuditRequest(CompileFlags):
    """The flags of one `profilec audit` run."""

    bundle: Path | None = None
    canary_json: Path | None = None
    canary: bool = False
    e2e_matrix: Path | None = None
    now: str | None = None
    fmt: str = AUDIT_FORMATS.default
    fail_on: str = "error"
    lock: Path | None = None


def bundle_or_compile(
    bundle: Path | None, inp: Inputs
) -> tuple[CompiledBundle, dict[str, Any], bool]:
    """(bundle, document, live): read from `bundle` through `inp`, else compiled from `inp`
    just now (live)."""
    if bundle is not None:
        b, doc = load_bundle(str(bundle), inp)
        return b, doc, False
    b, doc = compile_document(inp)
    return b, doc, True


def _validate(request: AuditRequest) -> None:
    AUDIT_FORMATS.choose(request.fmt)
    if request.fail_on not in SEVERITY_RANK:
        raise UsageError(f"unknown --fail-on {request.fail_on!r}; choose note, warning or error")
    if request.canary and request.canary_json:
        raise UsageError("give --canary or --canary-json, not both")
    if request.canary and request.bundle:
        raise UsageError("--canary probes a fresh compile; drop --bundle")
    if request.bundle and (request.vouched_mcp or request.tmpdir or request.home):
        raise UsageError("--vouched-mcp, --tmpdir and --home go with --roots; drop --bundle")
    if request.bundle:
        no_plan_layout(request, "--bundle")


def run(request: AuditRequest, progress: Progress = no_progress) -> Outcome:
    """The report as Markdown or HTML; exit 1 when its verdict is FAIL."""
    _validate(request)
    inp = Inputs.unrooted(request.profiles) if request.bundle else Inputs.of(request)
    launchers = _launchers(request, inp)
    b, doc, _ = bundle_or_compile(request.bundle, inp)
    binding = None
    canary_doc = load_canary_json(str(request.canary_json), inp) if request.canary_json else None
    if canary_doc is not None:
        # Refused for another bundle; stale when an input changed after the run finished.
        files = _input_files(request.bundle, inp)
        binding = verify(canary_doc, doc, str(request.canary_json), files)
    if request.canary:
        canary_doc, _, _ = probe_findings(b, progress)
    changes = _changes(request.lock, b, doc, inp)
    rep = build_report(
        b,
        doc,
        canary=canary_doc,
        now=report_time(request.now),
        launchers=launchers,
        binding=binding,
        fail_on=request.fail_on,
        changes=changes,
    )
    text = AUDIT_FORMATS.renderer(request.fmt)(rep)
    assert rep.verdict is not None
    if rep.verdict.passed:
        return Outcome(text=text, exit_code=EXIT_CLEAN)
    n = len(rep.verdict.failing)
    line = f"profilec: audit: FAIL: {n} items at or above {request.fail_on}\n"
    return Outcome(text=text, exit_code=EXIT_FOUND, stderr=line)


def _launchers(request: AuditRequest, inp: Inputs) -> LauncherSection | None:
    """The launchers section from --e2e-matrix (None without it)."""
    if request.e2e_matrix is None:
        return None

    return launcher_section(load_e2e_matrix(str(request.e2e_matrix), inp), adapters_of(inp))


def _changes(
    lock: Path | None, b: CompiledBundle, doc: dict[str, Any], inp: Inputs
) -> DiffReport | None:
    """What changed since the approved --lock (None without it)."""
    if lock is None:
        return None

    old_b, old_doc = load_bundle(str(lock), inp)
    return diff_bundles(
        old_b,
        b,
        old_name=str(lock),
        new_name="audited bundle",
        old_hash=str(old_doc.get("content_hash")),
        new_hash=str(doc.get("content_hash")),
    )


def _input_files(bundle: Path | None, inp: Inputs) -> list[str]:
    """The files the audited bundle came from (evidence older than any of them is stale)."""
    if bundle is not None:
        return [str(bundle)]
    # The shipped policy is part of the profilec version the evidence names, not an input.
    flags = inp.flags
    files = (
        flags.roots,
        flags.profiles,
        flags.session_config,
        flags.vouched_mcp,
        flags.plan_layout,
    )
    return [str(f) for f in files if f]
