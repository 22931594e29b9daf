"""`check --lock`: recompile and compare with the pinned bundle; a drift is the semantic diff
(widening first) with the JSON members that changed (profilec.audit.diff lists them, as `diff`
does), so a moved root, a retargeted link or an edited policy line each show by name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bundle.load import bundle_from_document, document_of
from ..bundle.lock import read_lock
from ..compiled import Compiled, compile_step
from ..errors import LockDriftError
from ..inputs import Inputs
from .diff import diff_bundles, render_text


@dataclass(frozen=True, slots=True)
class Drift:
    """A recompiled bundle that differs from the lock: the readable report and the error."""

    report: str
    error: LockDriftError


def verify(lock_path: str, inp: Inputs) -> Drift | None:
    """Recompile with the lock's plan layout; None when the hash matches, else the Drift."""
    return recompile(lock_path, inp)[1]


def recompile(lock_path: str, inp: Inputs) -> tuple[Compiled, Drift | None]:
    """The compile with the lock's plan layout (for the steps after the lock check) and None
    when its hash matches the lock's, else the Drift."""
    locked, plan_layout = read_lock(lock_path, inp)
    compiled = compile_step(inp.with_flags(plan_layout=Path(plan_layout) if plan_layout else None))
    current_bundle, current = compiled.bundle, document_of(compiled)
    if current["content_hash"] == locked["content_hash"]:
        return compiled, None
    report = diff_bundles(
        bundle_from_document(locked, lock_path),
        current_bundle,
        old_name=lock_path,
        new_name="recompiled",
        old_hash=locked["content_hash"],
        new_hash=current["content_hash"],
        old_document=locked,
        new_document=current,
    )
    error = LockDriftError(
        f"recompiled bundle {current['content_hash']} differs from the lock "
        f"{locked['content_hash']}: {report.widening} widening, {report.narrowing} narrowing, "
        f"{report.neutral} other changes",
        where=lock_path,
        hint="review the diff; run `profilec lock` to approve the new result",
    )
    return compiled, Drift(render_text(report), error)
