"""Evidence bound to what it judges: canary results carry the bundle they probed.

`bind` stamps a canary report dict with the content hash of the bundle document, the hash of
its `compiled` member (the profiles the probes ran under), the tool versions and the time the
run finished. `verify` is what `audit --canary-json` does with it: evidence whose compiled
profiles differ from the audited bundle's is refused (one line, exit 2); evidence that finished
before the newest input file changed is kept but marked stale.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import InputError


def compiled_hash(doc: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of the bundle document's `compiled` member."""
    canonical = json.dumps(
        doc.get("compiled"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def tool_versions(doc: dict[str, Any]) -> dict[str, str]:
    """The versions that made the evidence: profilec and the pinned Codex the bundle names."""
    return {
        "profilec": str(doc.get("profilec_version")),
        "codex": str(doc.get("codex_version")),
    }


def bind(report: dict[str, Any], doc: dict[str, Any], finished: datetime) -> dict[str, Any]:
    """`report` with its `evidence` member: which bundle, which tools, when it finished."""
    return {
        **report,
        "evidence": {
            "bundle_content_hash": str(doc.get("content_hash")),
            "compiled_hash": compiled_hash(doc),
            "finished": finished.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tools": tool_versions(doc),
        },
    }


@dataclass(frozen=True, slots=True)
class Binding:
    """What the report says about one piece of evidence."""

    bundle_content_hash: str
    finished: str
    tools: tuple[tuple[str, str], ...]
    #: Why the evidence is stale (it finished before an input changed), or None.
    stale: str | None
    #: True when the evidence ran under the same compiled profiles but another document
    #: (another plan layout, other input file bytes): said in words, not refused.
    other_document: bool


def newest_input(paths: list[str]) -> tuple[float, str] | None:
    """(mtime, path) of the newest regular file among `paths` (directories walked one level)."""
    best: tuple[float, str] | None = None
    for p in paths:
        try:
            names = [os.path.join(p, n) for n in sorted(os.listdir(p))] if os.path.isdir(p) else [p]
        except OSError:
            continue
        for name in names:
            try:
                st = os.stat(name)
            except OSError:
                continue
            if best is None or st.st_mtime > best[0]:
                best = (st.st_mtime, name)
    return best


def verify(evidence: dict[str, Any], doc: dict[str, Any], where: str, inputs: list[str]) -> Binding:
    """Refuse evidence for another bundle; mark it stale when an input is newer than it."""
    ev = evidence.get("evidence")
    if not isinstance(ev, dict):
        raise InputError(
            "canary results name no bundle (made before evidence binding); run "
            "`profilec canary --format json` again",
            where=where,
        )
    if ev.get("compiled_hash") != compiled_hash(doc):
        raise InputError(
            f"canary results are for bundle {ev.get('bundle_content_hash')}, not "
            f"{doc.get('content_hash')} (other compiled profiles); run the canaries on this bundle",
            where=where,
        )
    stale: str | None = None
    newest = newest_input(inputs)
    finished = str(ev.get("finished"))
    try:
        when = datetime.strptime(finished, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise InputError(f"canary results: bad finished time {finished!r}", where=where) from None
    if newest is not None and newest[0] > when.timestamp() + 1:
        changed = datetime.fromtimestamp(newest[0], tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        stale = f"{newest[1]} changed at {changed}, after the canaries finished at {finished}"
    tools = ev.get("tools") if isinstance(ev.get("tools"), dict) else {}
    return Binding(
        bundle_content_hash=str(ev.get("bundle_content_hash")),
        finished=finished,
        tools=tuple(sorted((str(k), str(v)) for k, v in (tools or {}).items())),
        stale=stale,
        other_document=ev.get("bundle_content_hash") != doc.get("content_hash"),
    )
