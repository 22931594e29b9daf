"""The coverage proof: for every mode x root x spelling, the access Codex gives is `deny`.

The evaluator decides lexically, but Codex masks by real path (bwrap binds follow links, and
reading any alias reaches the same inode), so a spelling through a symlink is denied iff the
path it really reaches is denied. Each spelling is mapped to that real path with the link chain
the roots edge recorded (lstat/readlink only), resolving links left to right as the kernel does.
Directory roots are also probed one level below each spelling.

Spellings of a root: its declared path, each hop whose link *is* the credential (the link and
its full spelling), each hop's full spelling, and the canonical target. A hop that is an
intermediate directory link (`hostlink -> host`) names the directory that holds the credential,
not the credential, so it is not a cell; its full spelling (`hostlink/auth.json`) is, and the
directory itself is covered by the holder-dir lint (PC014).

Complexity: O(M x C x S x (d + g)) for M modes, C session cwds, S spellings over all roots,
query depth d and deny globs g; no term is roots x entries.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from ..codex.enforce import enforce
from ..codex.enforced import Enforced
from ..codex.fsview import FsView
from ..codex.resolve import Decision, EffectiveProfile
from ..models.check import Cell, CellAccess, CheckFinding, Severity, SpellingKind
from ..models.compiled import ResolvedRoot
from ..roots import MAX_HOPS
from ..rule_ids import COVERAGE_READABLE, COVERAGE_UNLISTED
from .resolution import ModeEval
from .rules import rule

#: The child name probed under each spelling of a directory root (never created).
CHILD_PROBE = "profilec-probe-child"
_WORST: dict[str, int] = {"deny": 0, "unlisted": 1, "read": 2, "write": 3}


def _link_dest(link: str, value: str) -> str:
    base = value if value.startswith("/") else posixpath.join(posixpath.dirname(link), value)
    return "/" + posixpath.normpath(base).lstrip("/")


def real_path(root: ResolvedRoot, spelling: str) -> str:
    """The path the kernel reaches for `spelling`, following the root's recorded links."""
    links = {h.link: _link_dest(h.link, h.value) for h in root.hops}
    p = "/" + posixpath.normpath(spelling).lstrip("/")
    for _ in range(MAX_HOPS + 1):
        parts = p.strip("/").split("/") if p != "/" else []
        hit = None
        for i in range(1, len(parts) + 1):  # shallowest link first, as the kernel resolves
            cand = "/" + "/".join(parts[:i])
            if cand in links:
                hit = (cand, "/".join(parts[i:]))
                break
        if hit is None:
            return p
        dest, rest = links[hit[0]], hit[1]
        p = "/" + posixpath.normpath(posixpath.join(dest, rest) if rest else dest).lstrip("/")
    return p


def spellings(root: ResolvedRoot) -> tuple[tuple[str, SpellingKind], ...]:
    """Every name that reaches the credential, with its kind (see the module docstring)."""
    seen: dict[str, SpellingKind] = {root.path: "declared"}
    for hop in root.hops:
        if hop.link == hop.spelling:
            seen.setdefault(hop.link, "hop-link")
        else:
            seen.setdefault(hop.spelling, "hop-spelling")
    seen.setdefault(root.target, "target")
    out = list(seen.items())
    if root.kind == "dir":
        out += [(f"{s.rstrip('/')}/{CHILD_PROBE}", "child") for s, _ in list(out)]
    return tuple(out)


def _access(eff: EffectiveProfile, d: Decision) -> CellAccess:
    if eff.unrestricted:
        return "write"
    return d.access if d.access is not None else "unlisted"


def _winner(eff: EffectiveProfile, d: Decision) -> str | None:
    if eff.unrestricted:
        return f"{eff.profile_id} (unrestricted)"
    return d.winner.source if d.winner else None


def _enforced_access(
    enf: Enforced, path: str, access: CellAccess, winner: str | None
) -> tuple[CellAccess, str | None]:
    """A policy deny counts only when the sandbox enforces it (profilec.codex.enforce)."""
    if access != "deny":
        return access, winner
    ed = enf.decide(path)
    if ed.access == "deny":
        return access, winner
    why = next((x.reason for x in enf.dropped if x.entry.source == winner), None)
    note = f"{winner} not enforced" + (f": {why}" if why else " by the sandbox")
    return (ed.access if ed.access is not None else "unlisted"), note


def _cell(
    me: ModeEval,
    root: ResolvedRoot,
    spelling: str,
    kind: SpellingKind,
    real: str,
    must_reach: str,
    enfs: dict[int, Enforced] | None = None,
) -> Cell:
    """The worst cell over every session cwd of the mode."""
    worst: Cell | None = None
    for cwd, eff in me.contexts:
        d = eff.decide(real)
        access, winner = _access(eff, d), _winner(eff, d)
        if enfs is not None and not eff.unrestricted:
            access, winner = _enforced_access(enfs[id(eff)], real, access, winner)
        if must_reach != real:
            # The recorded chain did not land on the target: hold both to the deny.
            d2 = eff.decide(must_reach)
            if _WORST[_access(eff, d2)] > _WORST[access]:
                access, winner = _access(eff, d2), _winner(eff, d2)
        lexical = _access(eff, eff.decide(spelling))
        cell = Cell(
            mode=me.mode,
            profile=me.profile_id,
            root=root.id,
            spelling=spelling,
            kind=kind,
            real_path=real,
            access=access,
            lexical=lexical,
            winner=winner,
            cwd=cwd,
        )
        if worst is None or _WORST[cell.access] > _WORST[worst.access]:
            worst = cell
    assert worst is not None
    return worst


def coverage(
    modes: Sequence[ModeEval],
    roots: Sequence[ResolvedRoot],
    fs: FsView | None = None,
    *,
    codex_version: str | None = None,
) -> list[Cell]:
    """The whole matrix, in mode, root, spelling order.

    With `fs` (the filesystem at launch, lstat/readlink only) a cell counts as denied only when
    the sandbox enforces the deny there (a symlinked writable root, a glob on a directory, ...).
    """
    plan: list[tuple[ResolvedRoot, str, SpellingKind, str, str]] = []
    for root in roots:
        for spelling, kind in spellings(root):
            real = real_path(root, spelling)
            must = root.target
            if kind == "child":
                must = f"{root.target.rstrip('/')}/{CHILD_PROBE}"
            plan.append((root, spelling, kind, real, must))
    enfs: dict[int, Enforced] | None = None
    if fs is not None:
        enfs = {
            id(eff): enforce(eff, fs, codex_version=codex_version)
            for me in modes
            for _c, eff in me.contexts
        }
    cells: list[Cell] = []
    for me in modes:
        if not me.contexts:
            continue
        for root, spelling, kind, real, must in plan:
            cells.append(_cell(me, root, spelling, kind, real, must, enfs))
    return cells


rule(
    COVERAGE_READABLE,
    "coverage-readable",
    "error",
    "a protected root is readable or writable under some spelling in some mode",
    "a model-authored command in that mode can read the credential",
    "deny the canonical target in every mode (profilec compile does)",
    waivable=False,
)

rule(
    COVERAGE_UNLISTED,
    "coverage-unlisted",
    "warning",
    "no entry covers a protected root in some mode; only the lack of a grant hides it",
    "any later read grant (a :root read, a parent profile) exposes it silently",
    "add an explicit deny for the canonical target",
)


def cell_findings(cells: Sequence[Cell], *, file: str | None) -> list[CheckFinding]:
    """PC000 for every readable cell, PC016 for every cell nothing denies explicitly."""
    out: list[CheckFinding] = []
    for c in cells:
        if c.access == "deny":
            continue
        via = f" via {c.real_path}" if c.real_path != c.spelling else ""
        unlisted = c.access == "unlisted"
        rule = COVERAGE_UNLISTED if unlisted else COVERAGE_READABLE
        severity: Severity = "warning" if unlisted else "error"
        out.append(
            CheckFinding(
                rule=rule,
                severity=severity,
                message=(
                    f"mode {c.mode} (profile {c.profile}): root {c.root!r} spelling {c.spelling}"
                    f"{via} is {c.access} (winner: {c.winner or 'no entry'}; cwd {c.cwd})"
                ),
                mode=c.mode,
                profile=c.profile,
                root=c.root,
                path=c.spelling,
                file=file,
            )
        )
    return out
