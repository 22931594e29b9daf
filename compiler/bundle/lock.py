"""`profilec lock`: pin the approved bundle (drift from it: profilec.audit.drift).

The lock file is the bundle document wrapped with the plan-layout path it was built with, so a
check rebuilds exactly the same document. Drift is any difference in the content hash; the
report of it is the semantic diff (widening first) plus the JSON members that changed, so a
moved root, a retargeted link or an edited policy line each show by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..bundle.document import dumps
from ..errors import InputError
from ..models.bundle import LockFile
from .load import unwrap

if TYPE_CHECKING:
    from ..inputs import Inputs


def lock_document(doc: dict[str, Any], plan_layout: str | None) -> dict[str, Any]:
    """The lock file for a bundle document."""
    return LockFile(
        content_hash=doc["content_hash"], plan_layout=plan_layout, bundle=doc
    ).model_dump(mode="json")


def render_lock(doc: dict[str, Any], plan_layout: str | None) -> str:
    """Deterministic lock-file text."""
    return dumps(lock_document(doc, plan_layout))


def read_lock(path: str, inp: Inputs) -> tuple[dict[str, Any], str | None]:
    """The locked bundle document and the plan-layout path it was built with (the lock read
    through the run's edge)."""
    raw = inp.json_object(path, "lock file")
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
