"""`profilec explain PATH --mode MODE`: the effective access of one path, and why.

The decision is profilec.codex's (Codex 0.171.0 rules): the most specific covering entry
wins, and at equal paths deny > write > read. Codex masks by real path, so a path that crosses
a recorded link of a root is decided at the path the kernel reaches; the lexical decision is
shown beside it. Each covering entry is traced to its provenance record (policy file and line,
roots-manifest line, built-in parent, launch layout, or the sandbox's own carve-outs).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ..codex.enforce import enforce
from ..codex.fsview import FsView, resolve_path
from ..codex.lexical import normalize_abs
from ..codex.resolve import (
    EQUAL_PATH_RULE,
    Decision,
    EffectiveProfile,
    Entry,
    EvalContext,
    resolve,
    session_contexts,
)
from ..emit.requirements import deny_read_paths
from ..errors import ProfilecError, RootChainError, UsageError
from ..models.audit import ChainStep, EffAccess, ExplainEntry, Explanation, LayerDeny
from ..models.compiled import CompiledBundle, ResolvedRoot
from ..paths import is_within
from ..roots import MAX_HOPS, walk_chain
from ..settings import codex_version

#: Optional edge hook: walk a path that no root covers with lstat/readlink only.
ChainWalker = Callable[[str], Sequence[tuple[str, str, str]]]


#: Why profilec adds an entry of each kind, shown beside the entry (docs/vaults.md).
REASON_WHY = {
    "vault": "the directory holding the credential, denied whole: the writer saves by temp file "
    "+ rename inside it, which a deny on the file alone does not survive",
    "writer-lock": "the credential writer's lock: a model command that could flock it would "
    "stall every save",
    "workspace-root": "a workspace root, written by its own entry: never through :workspace, "
    "whose `:workspace_roots` = write also makes the session cwd (the client picks it) writable",
    "root-split": "full access writes each top-level directory, never / itself: with / writable "
    "a command could replace a top-level name such as the /lib64 symlink (the loader of every "
    "dynamic binary)",
}


def _dest(link: str, value: str) -> str:
    base = value if value.startswith("/") else posixpath.join(posixpath.dirname(link), value)
    return "/" + posixpath.normpath(base).lstrip("/")


def recorded_chain(roots: Sequence[ResolvedRoot], path: str) -> tuple[str, list[ChainStep]]:
    """Follow the links the roots edge recorded, shallowest first, as the kernel resolves."""
    links: dict[str, tuple[str, str]] = {}
    for r in roots:
        for h in r.hops:
            links.setdefault(h.link, (h.value, r.id))
    p = path
    steps: list[ChainStep] = []
    for _ in range(MAX_HOPS + 1):
        parts = p.strip("/").split("/") if p != "/" else []
        hit = None
        for i in range(1, len(parts) + 1):
            cand = "/" + "/".join(parts[:i])
            if cand in links:
                hit = (cand, "/".join(parts[i:]))
                break
        if hit is None:
            break
        link, rest = hit
        value, rid = links[link]
        dest = _dest(link, value)
        p = "/" + posixpath.normpath(posixpath.join(dest, rest) if rest else dest).lstrip("/")
        steps.append(ChainStep(link=link, value=value, reaches=p, root_id=rid))
    return p, steps


def _records(
    doc_provenance: Mapping[str, Any] | None, mode: str
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    if not doc_provenance:
        return out
    for m in doc_provenance.get("modes", []):
        if m.get("mode") != mode:
            continue
        for rec in m.get("records", []):
            out.setdefault(str(rec.get("key")), []).append(rec)
    return out


def _explain_entry(
    e: Entry, rule: str | None, records: dict[str, list[dict[str, Any]]]
) -> ExplainEntry:
    recs = records.get(e.source) or records.get(e.source + "/.") or []
    # A compiled entry overrides a policy key of the same name (`:root` = write lowered to read):
    # the record that gave the winning value comes first.
    recs = sorted(recs, key=lambda r: r.get("value") != e.access)
    entry = partial(
        ExplainEntry, path=e.path, kind=e.kind, access=e.access, key=e.source, rule=rule
    )
    if not recs and e.source.startswith(("carve-out ", ":workspace carve-out")):
        return entry(
            origin="codex-sandbox",
            detail="Codex keeps .git/.agents/.codex/.aws read-only inside every writable root",
        )
    if not recs:
        return entry()
    first = recs[0]
    others = [str(r.get("root_id")) for r in recs[1:] if r.get("root_id")]
    detail = first.get("detail")
    reason = first.get("reason")
    parts = [str(x) for x in (reason, detail) if x]
    why = REASON_WHY.get(str(reason))
    if why:
        parts.append(why)
    if others:
        parts.append("also root " + ", ".join(others))
    return entry(
        origin=first.get("origin"),
        file=first.get("file"),
        line=first.get("line"),
        root_id=first.get("root_id"),
        hop_index=first.get("hop_index"),
        detail="; ".join(parts) or None,
    )


def explain(
    bundle: CompiledBundle,
    path: str,
    mode: str,
    *,
    provenance: Mapping[str, Any] | None = None,
    cwd: str | None = None,
    walker: ChainWalker | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
    fs: FsView | None = None,
) -> Explanation:
    """Why `path` gets the access it gets under `mode` (pure unless a walker or fs is given)."""
    try:
        profile = bundle.profile_for(mode)
    except KeyError:
        modes = ", ".join(p.mode for p in bundle.profiles)
        raise UsageError(f"unknown --mode {mode!r}; choose one of {modes}") from None
    asked = normalize_abs(path, what="PATH")
    ws = tuple(bundle.layout.workspace_roots)
    if cwd is not None and ws and cwd not in ws:
        raise UsageError(f"--cwd {cwd} is not one of the workspace roots ({', '.join(ws)})")
    ctx = session_contexts(ws, cwd=cwd, tmpdir=tmpdir, home=home)[0]
    eff = resolve({profile.profile_id: profile.codex_table()}, profile.profile_id, ctx)
    real, steps = recorded_chain(bundle.roots, asked)
    if not steps and walker is not None:
        walked = walker(asked)
        steps = [ChainStep(link=a, value=b, reaches=c) for a, b, c in walked]
        if steps:
            real = steps[-1].reaches
    records = _records(provenance, mode)
    d = eff.decide(real)
    lexical = eff.decide(asked)
    related = sorted(
        {
            r.id
            for r in bundle.roots
            for s in (*r.spellings, r.target)
            if asked == s or asked.startswith(s.rstrip("/") + "/") or real == r.target
        }
    )
    access: EffAccess
    lexical_access: EffAccess
    if eff.unrestricted:
        access = lexical_access = "write"
    else:
        access = d.access or "unlisted"
        lexical_access = lexical.access or "unlisted"
    via = f" via {real}" if real != asked else ""
    decided = _decided(d, records, keep_winner=True)
    layers = enforcing_layers(bundle, (asked, real), access, profile.profile_id, decided[0])
    return _explained(
        eff,
        ctx,
        asked=asked,
        real=real,
        mode=mode,
        profile_id=profile.profile_id,
        access=(access, lexical_access),
        decided=decided,
        head=f"{asked}{via} is {access} in mode {mode}",
        fs=fs,
        home=home,
        tmpdir=tmpdir,
        chain=tuple(steps),
        roots=tuple(related),
        source="bundle",
        parent=tuple(f"{p.key}={json.dumps(p.value)} (road: {p.road})" for p in bundle.parent),
        layers=layers,
    )


#: What each layer's word reaches (docs/requirements.md, README "Which layer guarantees what").
MANAGED_SCOPE = (
    "every session on the host, whatever mode, cwd, client or -c override it asks for "
    "([permissions.filesystem] deny_read in /etc/codex/requirements.toml)"
)


def enforcing_layers(
    bundle: CompiledBundle,
    spellings: tuple[str, str],
    access: EffAccess,
    profile_id: str,
    winner: ExplainEntry | None,
) -> tuple[LayerDeny, ...]:
    """The layers that deny a path (its asked and real spelling), strongest first: the managed
    requirements profilec compiles for this bundle when a `deny_read` covers it, then the
    permission profile of the mode when it decides deny."""
    layers: list[LayerDeny] = []
    try:
        managed = deny_read_paths(bundle)
    except ProfilecError:  # no requirements compile for this bundle: compile says why
        managed = []
    for p in managed:
        if any(is_within(s, p) for s in spellings):
            layers.append(LayerDeny(layer="managed-requirements", entry=p, scope=MANAGED_SCOPE))
            break
    if access == "deny" and winner is not None:
        layers.append(
            LayerDeny(
                layer="permission-profile",
                entry=f"{winner.path} = deny",
                scope=f"sessions that run {profile_id} (the requirements allow only "
                "profilec's profiles)",
            )
        )
    return tuple(layers)


def _explained(
    eff: EffectiveProfile,
    ctx: EvalContext,
    *,
    asked: str,
    real: str,
    mode: str,
    profile_id: str,
    access: tuple[EffAccess, EffAccess],
    decided: tuple[ExplainEntry | None, tuple[ExplainEntry, ...]],
    head: str,
    fs: FsView | None,
    home: str | None,
    tmpdir: str | None,
    source: str,
    chain: tuple[ChainStep, ...] = (),
    roots: tuple[str, ...] = (),
    parent: tuple[str, ...] = (),
    layers: tuple[LayerDeny, ...] = (),
) -> Explanation:
    """The explanation of one decision (`access`: real path's, lexical path's), with what the
    sandbox enforces beside it and the summary line that starts with `head`."""
    winner, beaten = decided
    enforced, enforcement = _enforcement(eff, asked, fs)
    summary = _summary(head, _why(eff, profile_id, winner), access[0], enforced, enforcement)
    return Explanation(
        path=asked,
        real_path=real,
        mode=mode,
        profile_id=profile_id,
        cwd=ctx.cwd,
        access=access[0],
        lexical_access=access[1],
        unrestricted=eff.unrestricted,
        network_enabled=eff.network_enabled or eff.unrestricted,
        winner=winner,
        beaten=beaten,
        chain=chain,
        roots=roots,
        summary=summary,
        home=home,
        tmpdir=tmpdir,
        enforced_access=enforced,
        enforcement=enforcement,
        source=source,
        parent=parent,
        enforced_by=layers,
    )


def _decided(
    d: Decision, records: dict[str, list[dict[str, Any]]], *, keep_winner: bool
) -> tuple[ExplainEntry | None, tuple[ExplainEntry, ...]]:
    """The winning entry (when kept) and the beaten ones of a decision, each with its rule: why
    the winner wins, and why each loser lost to it (a deeper path, or the same path with a
    weaker access)."""
    winner = None
    if d.winner is not None and keep_winner:
        tied = any(rule == EQUAL_PATH_RULE for _, rule in d.beaten)
        rule = "most specific covering entry" + (", and deny > write > read" if tied else "")
        winner = _explain_entry(d.winner, rule, records)
    beaten = tuple(_explain_entry(e, f"lost: {rule}", records) for e, rule in d.beaten)
    return winner, beaten


def _why(eff: EffectiveProfile, profile_id: str, winner: ExplainEntry | None) -> str:
    """Why the path gets its access: an unrestricted profile, no entry, or the winning entry
    (with the config line that wrote it, when known)."""
    if eff.unrestricted:
        return f"profile {profile_id} is unrestricted"
    if winner is None:
        return "no entry covers it (Codex gives no access to unlisted paths)"
    where = f" ({winner.file}:{winner.line})" if winner.file and winner.line else ""
    return f"{winner.access} entry {winner.path} [{winner.key}] wins{where}"


def _summary(
    head: str, why: str, access: str, enforced: str | None, enforcement: str | None
) -> str:
    """`head: why`, and what the sandbox gives when it differs from the policy."""
    summary = f"{head}: {why}"
    if enforced is not None and enforced != access:
        summary += f"; the sandbox gives {enforced} ({enforcement})"
    return summary


def _enforcement(
    eff: EffectiveProfile, asked: str, fs: FsView | None
) -> tuple[EffAccess | None, str | None]:
    """The sandbox's access at `asked` and why it differs from the policy (None: not asked)."""
    if fs is None:
        return None, None
    if eff.unrestricted:
        return "write", None

    enf = enforce(eff, fs, codex_version=codex_version())
    if enf.refusals:
        return "deny", "the sandbox refuses to start: " + "; ".join(r.message for r in enf.refusals)
    ed = enf.decide(asked)
    pol = eff.decide(ed.path)
    access: EffAccess = ed.access or "unlisted"
    if ed.access == pol.access:
        return access, None
    why = [d.reason for d in enf.dropped if pol.winner is not None and d.entry == pol.winner]
    if not why and ed.winner is not None:
        why = [f"{ed.winner.access} entry {ed.winner.path} [{ed.winner.source}] applies"]
    return access, "; ".join(why) or "enforcement differs from the compiled policy"


def explain_config(
    permissions: Mapping[str, Any],
    profile_id: str,
    path: str,
    *,
    cwd: str,
    home: str | None,
    tmpdir: str | None,
    source: str,
    mode: str = "-",
    fs: FsView | None = None,
) -> Explanation:
    """`explain` on a config profilec did not write: one profile of a `[permissions]` table."""
    asked = normalize_abs(path, what="PATH")
    ctx = EvalContext(cwd=normalize_abs(cwd, what="--cwd"), tmpdir=tmpdir, home=home)
    eff = resolve(permissions, profile_id, ctx)
    d: Decision = eff.decide(asked)
    access: EffAccess = "write" if eff.unrestricted else (d.access or "unlisted")
    real = asked
    if fs is not None:
        real = resolve_path(fs, asked).real
    return _explained(
        eff,
        ctx,
        asked=asked,
        real=real,
        mode=mode,
        profile_id=profile_id,
        access=(access, access),
        decided=_decided(d, {}, keep_winner=not eff.unrestricted),
        head=f"{asked} is {access} under profile {profile_id} ({source})",
        fs=fs,
        home=home,
        tmpdir=tmpdir,
        source=source,
    )


def _entry_line(e: ExplainEntry) -> str:
    src = f"[{e.key}]" if e.key != e.path else "[compiled entry]"
    origin = f" {e.origin}" if e.origin else ""
    loc = ""
    if e.file:
        loc = f" {e.file}" + (f":{e.line}" if e.line else "")
    root = f" root {e.root_id}" if e.root_id else ""
    hop = f" hop {e.hop_index}" if e.hop_index is not None else ""
    detail = f" ({e.detail})" if e.detail else ""
    return f"{e.access:<5} {e.path} {src}{origin}{loc}{root}{hop}{detail}"


def render_text(x: Explanation) -> str:
    """Human-readable explanation."""
    lines = [
        f"explain {x.path} in mode {x.mode} (profile {x.profile_id}, cwd {x.cwd})",
        f"access:  {x.access}"
        + (f" (lexically {x.lexical_access})" if x.lexical_access != x.access else ""),
        f"network: {'enabled' if x.network_enabled else 'disabled'}",
        f"launch context: cwd {x.cwd}; HOME {x.home or '(unset)'}; TMPDIR {x.tmpdir or '(unset)'}",
    ]
    if x.chain:
        lines.append("chain:")
        for s in x.chain:
            rid = f" (root {s.root_id})" if s.root_id else ""
            lines.append(f"  {s.link} -> {s.value}  => {s.reaches}{rid}")
    if x.roots:
        lines.append("protected roots involved: " + ", ".join(x.roots))
    if x.winner:
        lines.append(f"winner:  {_entry_line(x.winner)}")
        lines.append(f"         rule: {x.winner.rule}")
    for b in x.beaten:
        lines.append(f"beaten:  {_entry_line(b)}")
        lines.append(f"         rule: {b.rule}")
    if x.enforced_access is not None:
        extra = f" ({x.enforcement})" if x.enforcement else ""
        lines.append(f"enforced: {x.enforced_access}{extra}")
    lines.append(x.summary)
    if x.enforced_by:
        lines.append("enforced by:")
        lines += [f"  {d.layer}: {d.entry}; holds for {d.scope}" for d in x.enforced_by]
    elif x.source == "bundle":
        lines.append("enforced by: no layer denies it")
    if x.parent:
        lines.append("trusted parent (set in every output, profiles/parent.toml):")
        lines += [f"  {p}" for p in x.parent]
    return "\n".join(lines) + "\n"


def live_walker(path: str) -> list[tuple[str, str, str]]:
    """The host's link chain for `path` (lstat/readlink only; never opens anything)."""
    try:
        target, hops, _, _ = walk_chain(path, allow_missing=True, what="PATH")
    except RootChainError:
        return []
    out: list[tuple[str, str, str]] = []
    for i, h in enumerate(hops):
        reaches = _dest(h.link, h.value) if i + 1 < len(hops) else target
        out.append((h.link, h.value, reaches))
    return out
