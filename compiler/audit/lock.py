"""`profilec lock` and `check --lock`: pin the approved bundle, and detect drift from it.

The lock file is the bundle document wrapped with the plan-layout path it was built with, so a
check rebuilds exactly the same document. Drift is any difference in the content hash; the
report of it is the semantic diff (widening first) plus the JSON members that changed, so a
moved root, a retargeted link or an edited policy line each show by name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..emit.bundle import dumps
from ..errors import InputError, LockDriftError
from .bundle import CompileInputs, compile_document, read_json, unwrap
from .models import LockFile


def lock_document(doc: dict[str, Any], plan_layout: str | None) -> dict[str, Any]:
    """The lock file for a bundle document."""
    return LockFile(
        content_hash=doc["content_hash"], plan_layout=plan_layout, bundle=doc
    ).model_dump(mode="json")


def render_lock(doc: dict[str, Any], plan_layout: str | None) -> str:
    """Deterministic lock-file text."""
    return dumps(lock_document(doc, plan_layout))


def read_lock(path: str) -> tuple[dict[str, Any], str | None]:
    """The locked bundle document and the plan-layout path it was built with."""
    raw = read_json(path, "lock file")
    if raw.get("kind") != "profilec-lock":
        raise InputError("not a profilec lock file (kind != profilec-lock)", where=path)
    plan = raw.get("plan_layout")
    if plan is not None and not isinstance(plan, str):
        raise InputError("plan_layout must be a string or null", where=path)
    return unwrap(raw, path), plan


def _paths(a: Any, b: Any, prefix: str, out: list[str], limit: int) -> None:
    """JSON member paths where `a` and `b` differ (depth-first, sorted keys)."""
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _paths(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k), out, limit)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _paths(x, y, f"{prefix}[{i}]", out, limit)
        return
    out.append(prefix or "(document)")


def changed_members(old: dict[str, Any], new: dict[str, Any], limit: int = 40) -> list[str]:
    """The bundle members that differ, excluding the hash itself."""
    out: list[str] = []
    strip = {"content_hash"}
    _paths(
        {k: v for k, v in old.items() if k not in strip},
        {k: v for k, v in new.items() if k not in strip},
        "",
        out,
        limit,
    )
    return out


@dataclass(frozen=True, slots=True)
class Drift:
    """A recompiled bundle that differs from the lock: the readable report and the error."""

    report: str
    error: LockDriftError


def verify(lock_path: str, inp: CompileInputs) -> Drift | None:
    """Recompile with the lock's plan layout; None when the hash matches, else the Drift."""
    from .bundle import bundle_from_document
    from .diff import diff_bundles, render_text

    locked, plan_layout = read_lock(lock_path)
    current_bundle, current = compile_document(replace(inp, plan_layout=plan_layout))
    if current["content_hash"] == locked["content_hash"]:
        return None
    report = diff_bundles(
        bundle_from_document(locked, lock_path),
        current_bundle,
        old_name=lock_path,
        new_name="recompiled",
        old_hash=locked["content_hash"],
        new_hash=current["content_hash"],
    )
    lines = [render_text(report).rstrip("\n"), "changed bundle members:"]
    lines += [f"  {p}" for p in changed_members(locked, current)]
    error = LockDriftError(
        f"recompiled bundle {current['content_hash']} differs from the lock "
        f"{locked['content_hash']}: {report.widening} widening, {report.narrowing} narrowing, "
        f"{report.neutral} other changes",
        where=lock_path,
        hint="review the diff; run `profilec lock` to approve the new result",
    )
    return Drift("\n".join(lines) + "\n", error)
