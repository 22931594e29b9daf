"""Enforcement: what the Linux sandbox really does with a resolved profile (docs/codex-semantics.md
"Enforcement"). `EffectiveProfile.decide()` answers what the compiled policy says; `enforce()`
answers what a sandboxed command sees, given the filesystem as it is when the sandbox starts,
and whether the sandbox starts at all (the refusal table of `codex.refusals`, per Codex
version). Rule: this model may be stricter than the sandbox only where the docs say so, never
looser.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from .enforced import (
    MODEL_0_166,
    MODEL_0_171,
    NESTED,
    Dropped,
    Enforced,
    EnforcementModel,
    is_carve_out,
)
from .fsview import FsView, real_path
from .globs import (
    enforced_glob_regex,
    glob_scan_ok,
    glob_static_prefix,
    name_glob_regex,
)
from .lexical import normalize_abs, under
from .refusals import refusals
from .resolve import RANK, EffectiveProfile, Entry
from .vocabulary import ENFORCEMENT_VERSION, NAME_GLOB_FIXED, SPECIAL_MINIMAL, parse_version


def model_for(codex_version: str | None) -> EnforcementModel:
    """The enforcement model of a Codex release (None: the measured default, 0.171.0)."""
    v = parse_version(codex_version or ENFORCEMENT_VERSION)[:3]
    return MODEL_0_171 if v >= NAME_GLOB_FIXED else MODEL_0_166


def enforce(
    profile: EffectiveProfile, fs: FsView | None = None, *, codex_version: str | None = None
) -> Enforced:
    """Model the sandbox: which entries it mounts, where, and whether it starts at all.

    `codex_version` (default: the measured 0.171.0) picks the `EnforcementModel` of that
    release: how a deny glob matches, and so which files it masks and which mounts refuse.
    """
    model = model_for(codex_version)
    if profile.unrestricted:
        return Enforced(profile, fs, (), (), (), (), (), model=model)
    full_write = _is_full_write(profile)
    by_name = model.glob_matches_name and profile.winner("/")[0] != "write"
    keep, dropped = _mounted_entries(profile.entries, full_write)
    shadows = _write_shadows(keep, fs)
    exact: list[tuple[Entry, str]] = []
    globs: list[tuple[Entry, re.Pattern[str], str]] = []
    for e in keep:
        placed = _place_glob(e, fs, by_name) if e.kind == "glob" else _place_exact(e, fs, shadows)
        if isinstance(placed, Dropped):
            dropped.append(placed)
        elif isinstance(placed, str):
            exact.append((e, placed))
        else:
            globs.append(placed)
    exact_t = _nested_reads_denied(exact)
    enf = Enforced(
        profile,
        fs,
        exact_t,
        tuple(globs),
        tuple(dropped),
        (),
        tuple(shadows),
        _index_exact(exact_t),
        model,
        by_name,
    )
    return enf._replace(refusals=tuple(refusals(enf, full_write)))


def _is_full_write(profile: EffectiveProfile) -> bool:
    """`:root` = write and every other entry a write or a carve-out: a write-only profile.

    `:minimal` = deny is not enforced, so it does not keep a write-only profile from being
    one (difftest 1:236, 3:264 on 0.166.0 and 0.171.0: `:root` = write with `:minimal` =
    deny started with a write entry on a file, and the carve-outs were writable).
    """
    return profile.winner("/")[0] == "write" and not any(
        e.access != "write" and not is_carve_out(e) and not _unenforced(e) for e in profile.entries
    )


def _mounted_entries(
    entries: Sequence[Entry], full_write: bool
) -> tuple[list[Entry], list[Dropped]]:
    """The entries the sandbox considers mounting, and those it drops before looking at the
    filesystem (in profile order)."""
    dropped: list[Dropped] = []
    keep: list[Entry] = []
    for e in entries:
        if _unenforced(e):
            dropped.append(Dropped(e, '":minimal" = "deny" is not enforced'))
        elif full_write and is_carve_out(e):
            dropped.append(
                Dropped(e, 'a write-only profile with ":root" = "write" mounts no carve-outs')
            )
        else:
            keep.append(e)
    return keep, dropped


def _write_shadows(keep: Sequence[Entry], fs: FsView | None) -> list[tuple[str, str]]:
    """(writable root as spelled, its real location) for each write path behind a symlink."""
    shadows: list[tuple[str, str]] = []
    for e in keep:
        if e.kind == "path" and e.access == "write":
            r = real_path(fs, e.path)
            if r != e.path:
                shadows.append((e.path, r))
    return shadows


def _place_glob(
    e: Entry, fs: FsView | None, by_name: bool
) -> tuple[Entry, re.Pattern[str], str] | Dropped:
    """A glob entry as the sandbox scans it (entry, regex, scan start), or why it is dropped."""
    if not glob_scan_ok(e.path):
        return Dropped(e, "a `{` or `}` in a directory component: the scan finds nothing")
    start = glob_static_prefix(e.path)
    if real_path(fs, start) != start:
        return Dropped(e, "the glob's scan starts at a symlinked path (not modelled)")
    rx = name_glob_regex(e.path) if by_name else None
    return (e, rx or enforced_glob_regex(e.path), start)


def _place_exact(e: Entry, fs: FsView | None, shadows: Sequence[tuple[str, str]]) -> str | Dropped:
    """The real path where the sandbox mounts a path entry, or why it is dropped."""
    r = real_path(fs, e.path)
    if e.access == "read" and fs is not None and fs.kind(e.path) == "link":
        # difftest 7:161: a read key that is a link to a file in a writable root left the
        # file writable; the read-only mount is not modelled at the target
        return Dropped(e, "a read key that is a symlink is not applied at its target")
    if e.access != "write":
        parent = real_path(fs, posixpath.dirname(e.path)) if e.path != "/" else "/"
        hidden = next(
            (
                w
                for w, wr in shadows
                if (under(r, wr) or under(e.path, wr) or under(parent, wr)) and not under(e.path, w)
            ),
            None,
        )
        if hidden is not None:
            return Dropped(e, f"under writable root {hidden}, spelled through a symlink")
    return r


def _nested_reads_denied(exact: list[tuple[Entry, str]]) -> tuple[tuple[Entry, str], ...]:
    """A read entry nested in a denied directory is unreachable (mode-000 tmpfs above it),
    unless a write entry lies between them: it becomes a deny."""
    deny_reals = [orp for o, orp in exact if o.access == "deny"]
    write_reals = [wrp for w, wrp in exact if w.access == "write"]
    adjusted: list[tuple[Entry, str]] = []
    for e, r in exact:
        if e.access == "read":
            outer = [orp for orp in deny_reals if orp != r and under(r, orp)]
            if outer and not any(
                under(r, wrp) and any(under(wrp, orp) and wrp != orp for orp in outer)
                for wrp in write_reals
            ):
                adjusted.append((Entry(e.kind, e.path, "deny", e.source + NESTED), r))
                continue
        adjusted.append((e, r))
    return tuple(adjusted)


def _unenforced(e: Entry) -> bool:
    return e.source == SPECIAL_MINIMAL and e.access == "deny"


def _index_exact(exact: Sequence[tuple[Entry, str]]) -> dict[str, tuple[int, Entry]]:
    """Per real path, the (rank, entry) `_base`'s scan would pick there: the highest rank, the
    first of equals. Empty when a real path is not normal (the scan then decides)."""
    out: dict[str, tuple[int, Entry]] = {}
    for e, rp in exact:
        if normalize_abs(rp) != rp:
            return {}
        rank = RANK[e.access]
        have = out.get(rp)
        if have is None or rank > have[0]:
            out[rp] = (rank, e)
    return out
