"""`--format srt`: sandbox-runtime settings for the model-authored commands the parent runs.

srt wraps one command at a time and cannot grant a parent what it denies its children, so this
is the deny side of the plan: hidden paths and every credential name unreadable, writes only to
the workspace-like grants. srt protects the target it resolved, not the link (DESIGN.md), so
the directory holding each link, every middle link's directory and the private home are
`denyWrite` too; otherwise a command could re-point the link with `ln -sfn`.
"""

from __future__ import annotations

import json
from typing import Any

from ..models.mounts import MountPlan, RoBind, RwBind, Tmpfs
from ..paths import is_within, parent

# srt has no private /tmp: the shared one stays denied rather than allowed.
_WRITABLE = ("workspace", "mirror")


def _grants(plan: MountPlan) -> list[str]:
    # Credential binds are the parent's alone; the commands srt wraps get none of them.
    return [
        m.path
        for m in plan.mounts
        if isinstance(m, (RoBind, RwBind)) and m.purpose not in ("credential", "requirements")
    ]


def srt_gaps(plan: MountPlan) -> list[str]:
    """Hidden paths srt cannot deny without also hiding a grant inside them (printed as notes)."""
    grants = _grants(plan)
    out = []
    if any(m.purpose == "requirements" for m in plan.mounts):
        out.append(
            "srt: binds no file, so the managed requirements are not placed over /etc/codex; "
            "install them on the host (profilec requirements install)"
        )
    for h in plan.hidden:
        inner = [g for g in grants if g != h.path and is_within(g, h.path)]
        if inner and h.how == "absent":
            out.append(
                f"srt: hidden {h.reason} {h.path} holds grant {inner[0]}; srt has no read "
                "exception, so it is not in denyRead (bwrap and docker hide it)"
            )
    return out


def srt_settings(plan: MountPlan) -> dict[str, Any]:
    """The settings object (filesystem + credentials)."""
    grants = _grants(plan)
    deny_read: set[str] = set()
    for h in plan.hidden:
        if not any(g != h.path and is_within(g, h.path) for g in grants):
            deny_read.add(h.path)
    deny_write: set[str] = set()
    for c in plan.credentials:
        deny_read.add(c.target)
        deny_write.add(c.target)
        deny_write.add(parent(c.target))
        if c.vault is not None:  # temp files and auth.json.lock of a save live there
            deny_read.add(c.vault)
            deny_write.add(c.vault)
        for link in c.links:
            deny_read.add(link.link)
            deny_write.add(parent(link.link))
    for m in plan.mounts:
        if m.purpose in ("agent-home", "state"):
            deny_write.add(m.path)
    allow_write = {
        m.path for m in plan.mounts if m.purpose in _WRITABLE and isinstance(m, (RwBind, Tmpfs))
    }
    return {
        "filesystem": {
            "denyRead": sorted(deny_read),
            "allowWrite": sorted(allow_write),
            "denyWrite": sorted(deny_write),
        },
        "credentials": {
            "files": [{"path": c.target, "mode": "deny"} for c in plan.credentials],
        },
    }


def render_srt(plan: MountPlan) -> str:
    """The srt settings JSON."""
    return json.dumps(srt_settings(plan), indent=2, sort_keys=True) + "\n"
