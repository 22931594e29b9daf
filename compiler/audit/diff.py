"""`profilec diff OLD NEW`: every change between two bundles or configs, widening first.

Widening and narrowing are decided by evaluated access, not by text: each side's profile for
a mode is resolved with profilec.codex.resolve and compared at every exact entry path of either
side (plus `/` and every root target). That set is complete for exact entries: the decision for
any path equals the decision at its deepest ancestor in the union of both sides' entry paths,
so if every such point agrees, every path agrees. Deny globs are compared as a set (one added
narrows, one removed widens). Access ranks unlisted = deny < read < write; a change between
deny and unlisted is reported as neutral. Network on, a wider `extends`, a profile Codex now
accepts and a new mode all widen. Between two bundle documents (bundles, lock files) every other
member that differs (the session config, approvals, the parent's inputs, the launcher renderings,
...) is listed by its JSON path as an other change, the same members `check --lock` compares, so
two documents with different hashes never read as "no changes".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..bundle.load import bundle_from_document, unwrap
from ..bundle.lock import changed_members
from ..check.configstack import json_object_of, load_acp_json, load_config_toml, load_overrides
from ..codex.lexical import EvaluationError
from ..codex.resolve import EffectiveProfile, EvalContext, resolve, session_contexts
from ..codex.vocabulary import BUILTIN_PROFILES
from ..models.audit import Change, DiffReport, Direction
from ..models.compiled import CompiledBundle, ResolvedRoot
from ..models.policy import ACP_MODES

if TYPE_CHECKING:
    from ..inputs import Inputs

_RANK = {"unlisted": 0, "deny": 0, "read": 1, "write": 2}
_EXTENDS_RANK = {name: rank for rank, name in enumerate(BUILTIN_PROFILES, start=1)}
_ORDER: dict[Direction, int] = {"widening": 0, "narrowing": 1, "neutral": 2}


@dataclass(frozen=True, slots=True)
class ModeSide:
    """One mode of one side: its profile resolved (or why Codex rejects it)."""

    profile_id: str
    eff: EffectiveProfile | None
    extends: str | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a diff, whatever it was read from."""

    name: str
    modes: dict[str, ModeSide]
    content_hash: str | None = None
    default_mode: str | None = None
    roots: dict[str, ResolvedRoot] = field(default_factory=dict)
    document: Mapping[str, Any] | None = None  # the bundle document, when read from one


def _ctx(workspace_roots: tuple[str, ...]) -> EvalContext:
    return session_contexts(workspace_roots)[0]


def side_from_bundle(
    bundle: CompiledBundle,
    name: str,
    content_hash: str | None = None,
    document: Mapping[str, Any] | None = None,
) -> Side:
    """Resolve every compiled profile against the bundle's own launch layout."""
    ctx = _ctx(tuple(bundle.layout.workspace_roots))
    modes: dict[str, ModeSide] = {}
    for p in bundle.profiles:
        try:
            eff: EffectiveProfile | None = resolve(
                {p.profile_id: p.codex_table()}, p.profile_id, ctx
            )
            err = None
        except EvaluationError as exc:
            eff, err = None, exc.message
        modes[p.mode] = ModeSide(p.profile_id, eff, p.extends, err)
    return Side(
        name,
        modes,
        content_hash,
        bundle.default_mode,
        {r.id: r for r in bundle.roots},
        document,
    )


def side_from_config(
    merged: Mapping[str, Any],
    mode_map: Mapping[str, str],
    name: str,
    workspace_roots: tuple[str, ...] = (),
) -> Side:
    """Resolve the mapped profiles of a Codex config (config.toml, -c lines, acp-json)."""
    perms = merged.get("permissions")
    table: Mapping[str, Any] = perms if isinstance(perms, Mapping) else {}
    ctx = _ctx(workspace_roots)
    modes: dict[str, ModeSide] = {}
    for mode, pid in mode_map.items():
        raw = table.get(pid)
        if raw is None and not pid.startswith(":"):
            continue
        ext = raw.get("extends") if isinstance(raw, Mapping) else None
        try:
            eff: EffectiveProfile | None = resolve(table, pid, ctx)
            err = None
        except EvaluationError as exc:
            eff, err = None, exc.message
        parent = ext if isinstance(ext, str) else (pid if pid.startswith(":") else None)
        modes[mode] = ModeSide(pid, eff, parent, err)
    return Side(name, modes)


def _access(eff: EffectiveProfile, path: str) -> tuple[str, str]:
    d = eff.decide(path)
    if eff.unrestricted:
        return "write", f"{eff.profile_id} (unrestricted)"
    return (d.access or "unlisted"), (d.winner.source if d.winner else "no entry")


def _direction(old_rank: int, new_rank: int) -> Direction:
    if new_rank > old_rank:
        return "widening"
    if new_rank < old_rank:
        return "narrowing"
    return "neutral"


def _mode_changes(mode: str, o: ModeSide, n: ModeSide, root_targets: set[str]) -> list[Change]:
    out: list[Change] = []
    if o.eff is None or n.eff is None:
        if (o.eff is None) != (n.eff is None):
            out.append(
                Change(
                    mode=mode,
                    what="profile",
                    direction="widening" if o.eff is None else "narrowing",
                    old=o.error or o.profile_id,
                    new=n.error or n.profile_id,
                    detail=(
                        f"Codex now accepts profile {n.profile_id}"
                        if o.eff is None
                        else f"Codex rejects profile {n.profile_id}: {n.error}"
                    ),
                )
            )
        return out
    oe, ne = o.eff, n.eff
    if oe.network_enabled != ne.network_enabled or oe.unrestricted != ne.unrestricted:
        on = oe.network_enabled or oe.unrestricted
        nn = ne.network_enabled or ne.unrestricted
        if on != nn:
            was, now = ("enabled" if on else "disabled"), ("enabled" if nn else "disabled")
            out.append(
                Change(
                    mode=mode,
                    what="network",
                    direction="widening" if nn else "narrowing",
                    old=was,
                    new=now,
                    detail=f"{was} -> {now}",
                )
            )
    if o.extends != n.extends:
        out.append(
            Change(
                mode=mode,
                what="extends",
                direction=_direction(
                    _EXTENDS_RANK.get(o.extends or "", 0), _EXTENDS_RANK.get(n.extends or "", 0)
                ),
                old=o.extends,
                new=n.extends,
                detail=f"{o.extends or '(none)'} -> {n.extends or '(none)'}",
            )
        )
    probes = {"/"} | root_targets
    probes |= {e.path for e in oe.entries if e.kind == "path"}
    probes |= {e.path for e in ne.entries if e.kind == "path"}
    for p in sorted(probes):
        ao, wo = _access(oe, p)
        an, wn = _access(ne, p)
        if ao == an:
            continue
        out.append(
            Change(
                mode=mode,
                what="access",
                direction=_direction(_RANK[ao], _RANK[an]),
                path=p,
                old=ao,
                new=an,
                detail=f"{ao} -> {an} (winner: {wo} -> {wn})",
            )
        )
    og = {e.path for e in oe.entries if e.kind == "glob"}
    ng = {e.path for e in ne.entries if e.kind == "glob"}
    for g in sorted(og - ng):
        out.append(
            Change(
                mode=mode,
                what="deny-glob",
                direction="widening",
                path=g,
                old="deny",
                detail="deny glob removed",
            )
        )
    for g in sorted(ng - og):
        out.append(
            Change(
                mode=mode,
                what="deny-glob",
                direction="narrowing",
                path=g,
                new="deny",
                detail="deny glob added",
            )
        )
    return out


def _root_changes(old: Side, new: Side) -> list[Change]:
    out: list[Change] = []
    for rid in sorted(set(old.roots) | set(new.roots)):
        a, b = old.roots.get(rid), new.roots.get(rid)
        if a == b:
            continue
        if a is None or b is None:
            r = a or b
            assert r is not None
            out.append(
                Change(
                    mode="*",
                    what="root",
                    direction="neutral",
                    path=r.path,
                    old=a.target if a else None,
                    new=b.target if b else None,
                    detail=f"root {rid!r} {'added' if a is None else 'removed'}",
                )
            )
            continue
        notes: list[str] = []
        if a.path != b.path:
            notes.append(f"declared path {a.path} -> {b.path}")
        if a.target != b.target:
            notes.append(f"target moved {a.target} -> {b.target}")
        ah = [(h.link, h.value) for h in a.hops]
        bh = [(h.link, h.value) for h in b.hops]
        if ah != bh:
            chain_a = " -> ".join(f"{lk}={v}" for lk, v in ah) or "(no links)"
            chain_b = " -> ".join(f"{lk}={v}" for lk, v in bh) or "(no links)"
            notes.append(f"link chain retargeted: {chain_a} => {chain_b}")
        if a.kind != b.kind:
            notes.append(f"kind {a.kind} -> {b.kind}")
        if a.holder_dirs != b.holder_dirs:
            notes.append("holder directories changed")
        if a.nlink != b.nlink:
            notes.append(f"hard links {a.nlink} -> {b.nlink}")
        out.append(
            Change(
                mode="*",
                what="root",
                direction="neutral",
                path=b.path,
                old=a.target,
                new=b.target,
                detail=f"root {rid!r}: " + "; ".join(notes or ["resolution changed"]),
            )
        )
    return out


def _mode_order(modes: set[str]) -> list[str]:
    return [m for m in ACP_MODES if m in modes] + sorted(m for m in modes if m not in ACP_MODES)


def diff_sides(old: Side, new: Side) -> DiffReport:
    """Classify every change from `old` to `new`."""
    changes: list[Change] = []
    targets = {r.target for r in old.roots.values()} | {r.target for r in new.roots.values()}
    for mode in _mode_order(set(old.modes) | set(new.modes)):
        o, n = old.modes.get(mode), new.modes.get(mode)
        if o is None or n is None:
            have = o or n
            assert have is not None
            changes.append(
                Change(
                    mode=mode,
                    what="profile",
                    direction="widening" if o is None else "narrowing",
                    old=o.profile_id if o else None,
                    new=n.profile_id if n else None,
                    detail=f"mode {mode} {'added' if o is None else 'removed'}",
                )
            )
            continue
        if o.profile_id != n.profile_id:
            changes.append(
                Change(
                    mode=mode,
                    what="mode-map",
                    direction="neutral",
                    old=o.profile_id,
                    new=n.profile_id,
                    detail=f"mode {mode} now selects {n.profile_id}",
                )
            )
        changes += _mode_changes(mode, o, n, targets)
    if old.default_mode != new.default_mode and old.default_mode and new.default_mode:
        changes.append(
            Change(
                mode="*",
                what="default-mode",
                direction="neutral",
                old=old.default_mode,
                new=new.default_mode,
                detail=f"default_permissions now selects mode {new.default_mode}",
            )
        )
    changes += _root_changes(old, new)
    if old.document is not None and new.document is not None:
        changes += [
            Change(
                mode="*", what="member", direction="neutral", path=m, detail="bundle member changed"
            )
            for m in changed_members(dict(old.document), dict(new.document))
        ]
    changes.sort(key=lambda c: _ORDER[c.direction])  # stable: mode order kept within a class
    return DiffReport(
        old=old.name,
        new=new.name,
        old_hash=old.content_hash,
        new_hash=new.content_hash,
        widening=sum(1 for c in changes if c.direction == "widening"),
        narrowing=sum(1 for c in changes if c.direction == "narrowing"),
        neutral=sum(1 for c in changes if c.direction == "neutral"),
        changes=tuple(changes),
    )


def diff_bundles(
    old: CompiledBundle,
    new: CompiledBundle,
    *,
    old_name: str,
    new_name: str,
    old_hash: str | None = None,
    new_hash: str | None = None,
    old_document: Mapping[str, Any] | None = None,
    new_document: Mapping[str, Any] | None = None,
) -> DiffReport:
    """Diff two compiled bundles (with their documents: every changed member too)."""
    return diff_sides(
        side_from_bundle(old, old_name, old_hash, old_document),
        side_from_bundle(new, new_name, new_hash, new_document),
    )


def load_side(
    path: str,
    inp: Inputs,
    *,
    mode_map: Mapping[str, str] | None,
    workspace_roots: tuple[str, ...],
) -> Side:
    """A bundle, lock file, acp-json document, config.toml or -c override list, read through
    the run's edge."""
    text = inp.text(path, "diff input")  # read once; every parse below takes these bytes
    modes = dict(mode_map) if mode_map is not None else None
    if text.lstrip().startswith("{"):
        doc = json_object_of(path, "diff input", text)
        if "configOverrides" in doc:
            layer, acp_modes = load_acp_json(path, text)
            return side_from_config(
                layer.data, modes or acp_modes, os.path.basename(path), workspace_roots
            )
        doc = unwrap(doc, path)
        return side_from_bundle(
            bundle_from_document(doc, path), path, str(doc.get("content_hash")), doc
        )
    layer = load_config_toml(path, text) if path.endswith(".toml") else load_overrides(path, text)
    if modes is None:
        modes = {m: e.profile_id for m, e in inp.policy().mode_map.modes.items()}
    return side_from_config(layer.data, modes, path, workspace_roots)


def render_text(report: DiffReport) -> str:
    """Widening first, each marked `!`; then narrowing (`-`), then other changes."""
    lines = [f"profilec diff {report.old} -> {report.new}"]
    if report.old_hash or report.new_hash:
        lines.append(f"  old {report.old_hash or '-'}")
        lines.append(f"  new {report.new_hash or '-'}")
    titles = (
        ("widening", "WIDENING (more access)", "!"),
        ("narrowing", "narrowing", "-"),
        ("neutral", "other changes", " "),
    )
    for direction, title, mark in titles:
        items = [c for c in report.changes if c.direction == direction]
        if not items:
            continue
        lines.append(f"{title}: {len(items)}")
        for c in items:
            where = f" {c.path}" if c.path else ""
            lines.append(f"  {mark} [{c.mode}] {c.what}{where}: {c.detail}")
    if not report.changes:
        lines.append("no changes")
    lines.append(
        f"{report.widening} widening, {report.narrowing} narrowing, {report.neutral} other"
    )
    return "\n".join(lines) + "\n"
