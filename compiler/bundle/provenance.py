"""The provenance of every key of every compiled profile: policy line, root, hop, built-in.

Pure: takes the CompiledBundle and, optionally, the `Sources` that were read (for file names,
line numbers and input hashes). Without sources the records still say which root, hop or
policy key put each entry there.
"""

from __future__ import annotations

from ..codex.resolve import EXTENSIBLE_PARENTS
from ..models.bundle import BundleProvenance, ModeProvenance, ProvenanceRecord
from ..models.compiled import CompiledBundle, CompiledEntry, CompiledProfile, Provenance
from .sources import SourceFile, Sources


def _line(src: SourceFile | None, key: str) -> int | None:
    return src.key_line(key) if src is not None else None


def _inherited_records(
    profile: CompiledProfile, extends: str, pfile: str | None, ext_line: int | None
) -> list[ProvenanceRecord]:
    """The filesystem keys `extends` inherits from Codex's built-in parent and the policy does
    not override, each at the policy's `extends` line."""
    out: list[ProvenanceRecord] = []
    inherited = EXTENSIBLE_PARENTS[extends]["filesystem"]
    for key in sorted(inherited):
        value = inherited[key]
        subs = value.items() if isinstance(value, dict) else [(None, value)]
        for sub, access in subs:
            full = f"{key}/{sub}" if sub is not None else key
            own = profile.policy_filesystem.get(key)
            if own is not None and (sub is None or (isinstance(own, dict) and sub in own)):
                continue  # the policy overrides this inherited key
            out.append(
                ProvenanceRecord(
                    key=full,
                    value=str(access),
                    origin="codex-builtin",
                    reason=f"inherited from extends = {extends!r}",
                    file=pfile,
                    line=ext_line,
                )
            )
    return out


def _entry_record(entry: CompiledEntry, p: Provenance, sources: Sources | None) -> ProvenanceRecord:
    """The record of one reason a compiled entry is there: trusted base, layout, root or policy."""
    if p.reason == "trusted-base":
        # detail is "<source>: <declared path>" (policy, manifest or discovered).
        origin, _, declared = (p.detail or "policy: ").partition(": ")
        from_manifest = origin == "manifest"
        src = None
        if sources is not None:
            src = sources.manifest if from_manifest else sources.trusted_base
        return ProvenanceRecord(
            key=entry.path,
            value=entry.access,
            origin="roots-manifest" if from_manifest else "policy",
            reason=p.reason,
            file=src.name if src is not None else None,
            line=sources.line_of_value(src, declared) if sources else None,
            detail=p.detail,
        )
    if p.reason == "workspace-root":
        return ProvenanceRecord(
            key=entry.path,
            value=entry.access,
            origin="launch-layout",
            reason=p.reason,
            detail=p.detail,
        )
    if p.reason in ("codex-home", "writer-lock", "private-config"):
        return ProvenanceRecord(
            key=entry.path,
            value=entry.access,
            origin="launch-layout",
            reason=p.reason,
            detail=f"--codex-home {p.detail}" if p.detail else "--codex-home",
        )
    man = sources.manifest if sources else None
    return ProvenanceRecord(
        key=entry.path,
        value=entry.access,
        origin="roots-manifest" if p.root_id else "policy",
        reason=p.reason,
        file="roots-manifest" if (man and p.root_id) else None,
        line=man.root_line(p.root_id) if (man and p.root_id) else None,
        root_id=p.root_id,
        hop_index=p.hop_index,
        detail=p.detail,
    )


def mode_provenance(profile: CompiledProfile, sources: Sources | None) -> ModeProvenance:
    """Records for one compiled profile, in the order Codex reads its table."""
    pol = sources.policy.get(profile.mode) if sources else None
    pfile = pol.name if pol else None
    recs: list[ProvenanceRecord] = []
    if profile.extends:
        ext_line = _line(pol, "extends")
        recs.append(
            ProvenanceRecord(
                key="extends",
                value=profile.extends,
                origin="policy",
                reason="extends",
                file=pfile,
                line=ext_line,
            )
        )
        recs.extend(_inherited_records(profile, profile.extends, pfile, ext_line))
    for root in profile.workspace_roots:
        recs.append(
            ProvenanceRecord(
                key="workspace_roots",
                value=root,
                origin="launch-layout",
                reason="workspace-root",
                detail="--workspace-root",
            )
        )
    for key in sorted(profile.policy_filesystem):
        value = profile.policy_filesystem[key]
        subs = sorted(value.items()) if isinstance(value, dict) else [(None, value)]
        for sub, access in subs:
            recs.append(
                ProvenanceRecord(
                    key=f"{key}/{sub}" if sub is not None else key,
                    value=access,
                    origin="policy",
                    reason="policy",
                    file=pfile,
                    line=_line(pol, key),
                )
            )
    if profile.glob_scan_max_depth is not None:
        recs.append(
            ProvenanceRecord(
                key="glob_scan_max_depth",
                value=str(profile.glob_scan_max_depth),
                origin="policy",
                reason="policy",
                file=pfile,
                line=_line(pol, "glob_scan_max_depth"),
            )
        )
    for entry in profile.entries:
        recs.extend(_entry_record(entry, p, sources) for p in entry.provenance)
    recs.append(
        ProvenanceRecord(
            key="network.enabled",
            value="true" if profile.network_enabled else "false",
            origin="policy",
            reason="policy",
            file=pfile,
            line=_line(pol, "enabled"),
        )
    )
    return ModeProvenance(mode=profile.mode, profile_id=profile.profile_id, records=tuple(recs))


def bundle_provenance(bundle: CompiledBundle, sources: Sources | None) -> BundleProvenance:
    """Provenance of every mode, and the sha256 of every input file that was read."""
    inputs: dict[str, str] = {}
    if sources is not None:
        if sources.manifest is not None:
            inputs["roots-manifest"] = sources.manifest.sha256
        if sources.mode_map is not None:
            inputs["policy/" + sources.mode_map.name] = sources.mode_map.sha256
        for src in sources.policy.values():
            inputs["policy/" + src.name] = src.sha256
        if sources.trusted_base is not None:
            inputs["policy/" + sources.trusted_base.name] = sources.trusted_base.sha256
    return BundleProvenance(
        modes=tuple(mode_provenance(p, sources) for p in bundle.profiles),
        inputs=dict(sorted(inputs.items())),
    )
