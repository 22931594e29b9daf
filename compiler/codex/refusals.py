"""The start-up refusals of Codex's Linux sandbox: one small function per measured class.

Each function takes the `Enforced` model (and the facts `enforce()` derived) and returns the
`Refusal`s of its class, with the message the real sandbox prints. `refusals()` runs the table.
Measured with the real `codex sandbox` (research section 5, the differential tester); see
docs/codex-semantics.md "Refusal classes".
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import NamedTuple

from .enforced import (
    MODEL_0_166,
    MODEL_0_171,
    NESTED,
    Enforced,
    EnforcementModel,
    Refusal,
    is_carve_out,
)
from .fsview import FsKind, FsView, real_path, resolve_path
from .globs import GLOB_CHARS, brace_error, glob_static_prefix, glob_tail
from .lexical import ancestors, under
from .resolve import RANK, EffectiveProfile, Entry
from .vocabulary import CARVE_OUTS, SPECIAL_MINIMAL


def _wins(prof: EffectiveProfile, e: Entry) -> bool:
    """True when `e` decides its own path among the exact entries (an equal-path stronger exact
    entry beats it). A deny glob matching the same path does not: the sandbox still mounts the
    entry (20261203:520 `<ws>/*` deny plus a read on the link `<ws>/l0` refused as a crossing;
    20261203:571 `<ws>/*` deny plus a write on the file link `<ws>/l0` refused as write-on-file).
    """
    here = prof._exact.get(e.path, ())
    return bool(here) and max(RANK[x.access] for x in here) == RANK[e.access]


def _containing_roots(prof: EffectiveProfile, path: str) -> list[str]:
    """Every writable root that lexically contains `path`, deepest first. A write entry that a
    deny at its own path beats is no writable root (difftest 2:293, 0.166.0 and 0.171.0: cwd
    `<h>` writable and denied, deny on the dangling link `<h>/l3` started)."""
    roots = {
        w.path
        for w in prof.entries
        if w.kind == "path" and w.access == "write" and under(path, w.path) and _wins(prof, w)
    }
    return sorted(roots, key=len, reverse=True)


def _crossed_link(fs: FsView, root: str, path: str) -> str | None:
    """The first symlink among `path`'s components strictly below `root` (spelled)."""
    if path == root:
        return None
    rest = path[len(root.rstrip("/")) + 1 :].split("/")
    spelled = root.rstrip("/")
    parent_real = resolve_path(fs, root).real
    for comp in rest:
        spelled = f"{spelled}/{comp}"
        cand = f"{parent_real.rstrip('/')}/{comp}"
        k = fs.kind(cand)
        if k == "link":
            return spelled
        if k is None:
            return None
        parent_real = cand
    return None


def _link_key_refusal(fs: FsView, key: str) -> str | None:
    """bwrap's error for a read/deny key that is itself a symlink (measured grid, 0.171.0).

    An absolute link whose target exists (file, directory, its own parent) refuses; an
    absolute link to nothing starts; a relative link starts unless it points at its own
    directory (`.`). An absolute link to a chain refuses by the kind at the chain's end
    (difftest 20261203:105, :729, :918, 7:868, 7:951); a relative link to a chain is not
    modelled.
    """
    value = fs.readlink(key) if fs.kind(key) == "link" else None
    if value is None:
        return None
    holder = posixpath.dirname(key)
    first = value if value.startswith("/") else posixpath.join(holder, value)
    first = "/" + posixpath.normpath(first).lstrip("/")
    kind = fs.kind(first)
    if kind == "link":
        if not value.startswith("/"):
            return None
        end = resolve_path(fs, key)
        if end.loop:
            return None
        kind = fs.kind(end.real)
    if value.startswith("/"):
        if kind is None:
            return None
        if kind == "dir":
            return f"bwrap: Can't mount tmpfs on /newroot{key}: No such file or directory"
        return f"bwrap: Can't create file at {key}: No such file or directory"
    if under(holder, first):
        return (
            f"bwrap: Can't remount readonly on /newroot{key}: realpath(destination): "
            "No such file or directory"
        )
    return None


class Facts(NamedTuple):
    """What several refusal classes ask, derived once per `refusals()` call."""

    enf: Enforced
    fs: FsView
    full_write: bool
    #: Exact path denies the sandbox mounts (entries nested in a denied directory left out).
    exact_denies: tuple[tuple[Entry, str], ...]
    #: `exact_denies` plus the denies a linked writable root hides: still mounted at start-up
    #: (difftest 7:451: `<l0>` -> `<ws>/lib` write, `<ws>/lib` and `<ws>/lib/m6` denied:
    #: "Can't create file at <ws>/lib/m6: Read-only file system").
    denies: tuple[tuple[Entry, str], ...]
    #: Writable roots by real path and by spelling (difftest 20261203:413: the cwd
    #: `<o>/back\\slash/l3` -> `<ws>` under denied `<o>` and `<o>/back\\slash` starts).
    writes: tuple[str, ...]
    #: Real paths of writable roots spelled through a link.
    linked: frozenset[str]
    #: `writes` of the write entries no deny at their own path beats.
    won_writes: tuple[str, ...] = ()
    #: The path entries (any access) a writable root spelled through a link hides, by real
    #: path: the enforced view drops them, the sandbox still mounts them.
    hidden: tuple[tuple[Entry, str], ...] = ()

    def shielded(self, inner: str, outer: str) -> bool:
        """A writable root inside the denied directory `outer`, above or below `inner`, has its
        mount point (and the directories to it) made first -- unless a writable root strictly
        above `outer` holds it (difftest 20261203:190, by hand: `:root` = write refuses where
        `:root` = read starts)."""
        if any(under(w, inner) and under(w, outer) and w != outer for w in self.won_writes):
            # a writable root at or below the inner entry, inside the denied directory, is
            # made first whatever is writable above (difftest 1:23; by hand on 0.166.0 and
            # 0.171.0: `<t>` and `<t>/lib` denied with `:root` = write start with the cwd at
            # `<t>/lib/lib/a b` or a link to it or to `<t>/lib`; a cwd at `<t>/x` refuses
            # "Can't mkdir <t>/lib: Read-only file system")
            return True
        if any(under(outer, w) and w != outer for w in self.writes):
            return False
        if outer in self.linked:
            # a writable root spelled through a link onto the denied directory itself
            # (7:451 shape by hand: `:root` = read starts, `:root` = write refuses)
            return True
        return any(
            under(w, outer) and w != outer and (under(inner, w) or under(w, inner))
            for w in self.won_writes
        )


def mounted_first(outer: str, inner: str) -> bool:
    """bwrap gets the deny mounts ordered by the spelled path's depth, then by the path: an
    inner mount made before the outer tmpfs is hidden by it instead of failing (bwrap argv on
    0.171.0: deny `<h>/l0` -> `../o` comes before `<o>/m3` and refuses; deny `<h>/n/l0` ->
    `../../o` comes after it and starts; 20261203:391, :879)."""
    return (outer.count("/"), outer) < (inner.count("/"), inner)


def _facts(enf: Enforced, fs: FsView, full_write: bool) -> Facts:
    exact_denies = tuple(
        (e, r)
        for e, r in enf.exact
        if e.access == "deny" and e.kind == "path" and not e.source.endswith(NESTED)
    )
    hidden = tuple(
        (d.entry, real_path(fs, d.entry.path))
        for d in enf.dropped
        if d.entry.kind == "path" and d.reason.startswith("under writable root ")
    )
    writes = [r for e, r in enf.exact if e.access == "write"]
    writes += [e.path for e, _r in enf.exact if e.access == "write"]
    linked = frozenset(r for e, r in enf.exact if e.access == "write" and r != e.path)
    won = [
        p
        for e, r in enf.exact
        if e.access == "write" and _wins(enf.profile, e)
        for p in (r, e.path)
    ]
    hidden_denies = tuple((e, r) for e, r in hidden if e.access == "deny")
    return Facts(
        enf,
        fs,
        full_write,
        exact_denies,
        exact_denies + hidden_denies,
        tuple(writes),
        linked,
        tuple(won),
        hidden,
    )


# ---------------------------------------------------------------------------------------------
# The classes a configuration alone decides (no filesystem needed)


def unsupported_path_syntax(enf: Enforced) -> list[Refusal]:
    """A scoped table under a path key holding `* ? [ ] { } \\` (resolve's `syntax_errors`)."""
    return [
        Refusal(
            "unsupported-path-syntax",
            key,
            f'Error: unsupported configuration path "{key}" using POSIX path syntax',
        )
        for key in enf.profile.syntax_errors
    ]


def invalid_glob(enf: Enforced) -> list[Refusal]:
    """A deny glob whose pattern part globset cannot parse (an unbalanced `{` or `}`)."""
    out: list[Refusal] = []
    for g in enf.profile.entries:
        if g.kind != "glob":
            continue
        tail = glob_tail(g.path)
        bad = brace_error(tail)
        if bad:
            out.append(
                Refusal(
                    "invalid-glob",
                    g.path,
                    "Fatal error: unreadable glob pattern is invalid for ...: error parsing glob "
                    f"'{tail}': {bad}",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# The classes the filesystem at start decides


def write_on_file(f: Facts) -> list[Refusal]:
    """A write entry on a file: the sandbox makes the carve-out `.git` below it."""
    if f.full_write:
        return []
    out: list[Refusal] = []
    for e in _winning_paths(f.enf.profile):
        if e.access != "write" or _carve_out_name_in_root(f.enf.profile, e.path):
            continue
        real = resolve_path(f.fs, e.path).real
        if f.fs.kind(real) in ("file", "other"):
            out.append(
                Refusal(
                    "write-on-file",
                    e.path,
                    f"bwrap: Can't mkdir parents for {real}/.git: Not a directory",
                )
            )
    return out


def crosses_writable_symlink(f: Facts) -> list[Refusal]:
    """A read or deny entry spelled through a symlink inside a writable root."""
    out: list[Refusal] = []
    for e in _winning_paths(f.enf.profile):
        link = _crossing(f, e)
        if link is not None:
            what = "read-only" if e.access == "read" else "deny-read"
            out.append(
                Refusal(
                    "crosses-writable-symlink",
                    e.path,
                    f"Fatal error: cannot enforce sandbox {what} path {e.path} because it "
                    f"crosses writable symlink {link}",
                )
            )
    return out


def carve_out_on_link(f: Facts) -> list[Refusal]:
    """A carve-out name (`.git .agents .codex .aws`) that is a symlink directly in a writable
    root: the sandbox binds it read-only as spelled and refuses the link, whatever it points
    at (held-out difftest cases; by hand on 0.166.0 and 0.171.0: cwd `<ws>` under `:workspace`
    with `<ws>/.codex` -> `real`, -> an outside directory, `<ws>/.git` -> a file or nothing,
    `.agents`, `.aws` all refused "Fatal error: cannot enforce sandbox read-only path
    <ws>/.codex because it crosses writable symlink <ws>/.codex"; `:workspace_roots` =
    {".git" = "write"}, or `<ws>` read started). Also in a writable root a deny glob matches
    (4242:11: TMPDIR `<ws>/[br]` with `<ws>/*` denied refused), as `_mask_candidates` has it.
    A `:root` = write profile whose other entries are writes, carve-outs or `:minimal` mounts
    no carve-outs (4141:43, by hand: the cwd or TMPDIR writable, `:minimal` = read, started);
    one with a deny or a read entry does (4242:235: TMPDIR's `.codex` link refused)."""
    prof = f.enf.profile
    if f.full_write or _write_only_but_minimal(prof):
        return []
    paths = {e.path for e in _winning_paths(prof) if is_carve_out(e)}
    for w, wr in f.enf.exact:
        if w.access == "write" and wr == w.path and wr != "/" and f.enf.decide(wr).writable:
            paths.update(c for name in CARVE_OUTS if (c := f"{wr}/{name}") not in prof._exact)
    out: list[Refusal] = []
    for path in sorted(paths):
        holder, name = posixpath.split(path)
        if f.fs.kind(f"{resolve_path(f.fs, holder).real.rstrip('/')}/{name}") == "link":
            msg = (
                f"Fatal error: cannot enforce sandbox read-only path {path} because it "
                f"crosses writable symlink {path}"
            )
            out.append(Refusal("crosses-writable-symlink", path, msg))
    return out


def _write_only_but_minimal(prof: EffectiveProfile) -> bool:
    """`:root` = write and every other entry a write, a carve-out or from `:minimal`."""
    return prof.winner("/")[0] == "write" and all(
        e.access == "write" or is_carve_out(e) or e.source == SPECIAL_MINIMAL for e in prof.entries
    )


def entry_on_symlink(f: Facts) -> list[Refusal]:
    """A deny key that is itself a symlink (`_link_key_refusal` has the measured grid)."""
    out: list[Refusal] = []
    for e in _winning_paths(f.enf.profile):
        if e.access != "deny" or _masked_entry(e) or _crossing(f, e) is not None:
            continue
        if any(under(e.path, r) and e.path != r for r in f.linked):
            # inside a writable root spelled through a link: dropped, not mounted (4343:59; by
            # hand on both: `<o>/l4` -> `../home/k1` written, deny on the link `<home>/k1/l2`
            # -> an absolute directory started; without the linked root it refused)
            continue
        refusal = _link_key_refusal(f.fs, e.path)
        if refusal is not None:
            out.append(Refusal("entry-on-symlink", e.path, refusal))
    return out


def deny_link_beside_a_glob(f: Facts) -> list[Refusal]:
    """A deny key that is a symlink to a file, plus a deny glob matching the link or its target:
    the two masks meet at one file (difftest 5:4; by hand on 0.166.0 and 0.171.0: deny
    `<o>/srcl0` -> `x*y.t3` with `<o>/x*` refuses "bwrap: Can't bind mount /bindfileXXXXXX on
    /newroot<o>/x*y.t3: Unable to mount source on destination: No such file or directory"; with
    `<o>/plainl` -> `plain` and `<o>/p*` it names `<o>/plainl`; either alone starts). An exact
    deny on the target does the same (held-out 4444:197; by hand on both: `<o>/l0` ->
    `../ws/f` and `<ws>/f` denied refuse "... on /newroot<o>/l0: ...", the link alone starts).
    """
    exact = {r for e, r in f.exact_denies if f.fs.kind(e.path) != "link"}
    if not f.enf.globs and not exact:
        return []
    out: list[Refusal] = []
    for e in _winning_paths(f.enf.profile):
        if e.access != "deny" or f.fs.kind(e.path) != "link" or _crossing(f, e) is not None:
            continue
        if _link_key_refusal(f.fs, e.path) is not None:
            continue
        target = resolve_path(f.fs, e.path).real
        if f.fs.kind(target) not in ("file", "other"):
            continue
        hit = next(
            (
                p
                for p in (e.path, target)
                if any(f.enf.glob_match(rx, s, p) for _g, rx, s in f.enf.globs)
            ),
            e.path if target in exact else None,
        )
        if hit is not None:
            msg = (
                f"bwrap: Can't bind mount /bindfileXXXXXX on /newroot{hit}: Unable to mount "
                "source on destination: No such file or directory"
            )
            out.append(Refusal("missing-nested-entries", hit, msg))
    return out


def deny_inside_denied_dir(f: Facts) -> list[Refusal]:
    """An exact deny inside a denied directory whose tmpfs is mounted first."""
    out: list[Refusal] = []
    for e0, r in f.denies:
        if f.fs.kind(r) != "dir":
            continue
        for e2, r2 in f.denies:
            if r2 == r or not under(r2, r) or f.shielded(r2, r):
                continue
            if not mounted_first(e0.path, e2.path):
                continue
            k = f.fs.kind(
                resolve_path(f.fs, posixpath.dirname(e2.path)).real
                + "/"
                + posixpath.basename(e2.path)
            )
            if k is not None:
                msg = (
                    f"bwrap: Can't create file at {r2}: Read-only file system "
                    "(a directory: Can't mkdir)"
                )
                out.append(Refusal("deny-inside-denied-dir", r2, msg))
            elif any(under(r, w) and w != r for w in f.writes):
                # A missing inner path refuses only below a writable root above the denied
                # directory (by hand, 0.171.0: `<o>` and `<o>/k1/vault` denied start under
                # :read-only, :workspace or `:root` = read, and refuse under `:root` = write or
                # a writable parent, also for a missing file in an existing directory;
                # 20261203:826 started, 7:848 refused)
                # the leaf alone missing: "Can't create file at" (held-out cells, by hand on
                # both releases: `<ws>/ch` and the missing `<ws>/ch/auth.lock` denied)
                what = (
                    "create file at"
                    if f.fs.kind(posixpath.dirname(r2)) == "dir"
                    else "mkdir parents for"
                )
                msg = f"bwrap: Can't {what} {r2}: Read-only file system"
                out.append(Refusal("deny-inside-denied-dir", r2, msg))
    return out


def deny_link_inside_denied_dir(f: Facts) -> list[Refusal]:
    """A deny key that is a symlink to an existing path, inside a denied directory whose tmpfs
    is mounted first: bwrap makes the mask's mount point at the link's own spelling in the
    read-only tmpfs (held-out 4141:25; by hand on 0.166.0 and 0.171.0, `:root` = read or
    `:workspace`: `<h>` and `<h>/l0` -> `../o/f` denied refuse "bwrap: Can't create file at
    <h>/l0: Read-only file system", -> `../o` "Can't mkdir <h>/l0: Read-only file system"; a
    dangling `<h>/l0` starts). An absolute link key is `entry-on-symlink` already."""
    out: list[Refusal] = []
    dirs = [(e.path, r) for e, r in f.denies if f.fs.kind(r) == "dir"]
    for e2, r2 in f.exact_denies:
        key = e2.path
        if f.fs.kind(key) != "link" or _link_key_refusal(f.fs, key) is not None:
            continue
        kind = f.fs.kind(r2)
        if kind is None or not any(
            under(key, d) and key != d and not f.shielded(key, d) and mounted_first(sd, key)
            for sd, d in dirs
        ):
            continue
        what = "mkdir" if kind == "dir" else "create file at"
        msg = f"bwrap: Can't {what} {key}: Read-only file system"
        out.append(Refusal("deny-inside-denied-dir", key, msg))
    return out


def glob_match_inside_denied_dir(f: Facts) -> list[Refusal]:
    """A deny glob is expanded to the existing files it matches; one inside a denied directory
    refuses like an exact deny there (exact denies only: 20261203:413 started with a dropped
    `<ws>` deny and `<ws>/*`)."""
    fs = f.fs
    if not f.enf.globs:
        return []
    # A deny spelled through a link onto a writable root's directory does not refuse (difftest
    # 8:133; by hand on both releases: deny `<h>/cfg/l0` -> `../v/cfg`, the workspace root
    # `<h>/v/cfg` and `<h>/v/cfg/*` start; the deny spelled `<h>/v/cfg` refuses)
    dirs = [
        (e.path, r)
        for e, r in f.exact_denies
        if fs.kind(r) == "dir" and not (e.path != r and r in f.writes)
    ]
    out: list[Refusal] = []
    for path, kind in _scanned(f):
        if kind not in ("file", "other") or not any(
            under(path, d) and path != d and not f.shielded(path, d) and mounted_first(sd, path)
            for sd, d in dirs
        ):
            continue
        if any(f.enf.glob_match(rx, s, path) for _g, rx, s in f.enf.globs):
            msg = f"bwrap: Can't create file at {path}: Read-only file system"
            out.append(Refusal("deny-inside-denied-dir", path, msg))
    return out


def scoped_glob_over_pattern_root(f: Facts) -> list[Refusal]:
    """A `:workspace_roots` deny glob subpath over a workspace root whose path holds `* ? [ ]`,
    plus another deny glob matching an existing file inside that root (7:22; by hand: cwd
    `<ws>/s/x*y`, {"m*" = "deny"} or {"s/x*y/m8" = "deny"} plus `<ws>/s/x*y/??` refuses "Can't
    create file at <ws>/s/x*y/m8: Read-only file system"; either alone, an exact subpath, or a
    cwd without glob characters starts)."""
    prof = f.enf.profile
    if not f.enf.globs:
        return []
    if not any(g.kind == "glob" and g.source.startswith(":workspace_roots/") for g in prof.entries):
        return []
    out: list[Refusal] = []
    for root in prof.workspace_roots:
        if GLOB_CHARS.isdisjoint(root):
            continue
        for path, kind in _scanned(f):
            if kind not in ("file", "other") or path == root or not under(path, root):
                continue
            if any(
                f.enf.glob_match(rx, s, path) and not e.source.startswith(":workspace_roots/")
                for e, rx, s in f.enf.globs
            ):
                msg = f"bwrap: Can't create file at {path}: Read-only file system"
                out.append(Refusal("deny-inside-denied-dir", path, msg))
    return out


def scoped_glob_beside_exact_deny(f: Facts) -> list[Refusal]:
    """A `:workspace_roots` deny glob subpath over a workspace root whose path holds one of the
    model's `scoped_glob_root_chars`, plus an exact deny on an existing path inside that root
    (difftest 3:271; by hand: cwd `<h>/b\\s` with {"cd/q?/k1" = "deny"} and a deny on the file
    `<h>/b\\s/m5` refuses "bwrap: Can't create file at <h>/b\\s/m5: Read-only file system", on
    the directory `<h>/b\\s/data` "bwrap: Can't mkdir <h>/b\\s/data: Read-only file system", on
    both releases; a missing path, no scoped glob, or a root without those characters starts;
    root `<h>/x*y` refuses on 0.171.0 only)."""
    prof = f.enf.profile
    if not any(g.kind == "glob" and g.source.startswith(":workspace_roots/") for g in prof.entries):
        return []
    chars = f.enf.model.scoped_glob_root_chars
    out: list[Refusal] = []
    for root in prof.workspace_roots:
        if chars.isdisjoint(root):
            continue
        for e, r in f.exact_denies:
            if e.source.startswith(":workspace_roots/") or r == root or not under(r, root):
                continue
            kind = f.fs.kind(r)
            if kind in ("file", "other"):
                msg = f"bwrap: Can't create file at {r}: Read-only file system"
            elif kind == "dir":
                msg = f"bwrap: Can't mkdir {r}: Read-only file system"
            else:
                continue
            out.append(Refusal("deny-inside-denied-dir", r, msg))
    return out


def missing_nested_entries(f: Facts) -> list[Refusal]:
    """The first missing component M of an entry inside a writable root becomes the mask's
    mount point (a file); a second entry below M, an entry at M plus one below it, or a
    carve-out directory at M then cannot be mounted."""
    enf, fs = f.enf, f.fs
    below: dict[str, set[str]] = {}
    at: set[str] = set()
    carve_missing: set[str] = set()
    deny_below: set[str] = set()
    for e, r in _mask_candidates(f):
        if e.access == "write" or r != e.path:
            continue
        first = _first_missing(fs, r)
        if first is None or enf.decide(posixpath.dirname(first)).access != "write":
            continue
        if is_carve_out(e):
            if first == r:
                carve_missing.add(r)
            continue
        if first == r:
            at.add(r)
        else:
            below.setdefault(first, set()).add(r)
            if e.access == "deny":
                deny_below.add(first)
    out: list[Refusal] = []
    for m in sorted(set(below) | (at & carve_missing)):
        kids = below.get(m, set())
        # one read entry below a missing carve-out starts (20261203:189, :765, 7:332); one
        # deny there refuses (difftest 4:0; by hand on 0.166.0 and 0.171.0: cwd `<ws>` with
        # `:workspace_roots` = {".git/m4" = "deny"} (also `.agents`, `.codex`) refuses "bwrap:
        # Can't create file at <ws>/.git: Is a directory", the same key = "read" starts)
        if m in carve_missing and m in deny_below and len(kids) == 1 and m not in at:
            msg = f"bwrap: Can't create file at {m}: Is a directory"
            out.append(Refusal("missing-nested-entries", m, msg))
        elif len(kids) >= 2 or (kids and m in at) or (m in at and m in carve_missing):
            out.append(Refusal("missing-nested-entries", m, _missing_message(f, m, at, kids)))
    return out


def missing_deny_under_read_only(f: Facts) -> list[Refusal]:
    """A deny on a missing path below a `read` entry (a carve-out too) that lies inside a
    writable root (any, with `:root` = write): the mask's mount point cannot be made in the
    read-only bind, whatever writable root lies between (by hand on 0.166.0 and 0.171.0:
    `:root` = write, `<o>` read and deny `<o>/zz`, `<o>/br/lib/zz` or `<o>/q/zz` refuse
    "bwrap: Can't create file at <o>/zz: Read-only file system" (`<o>/q` for the last), also
    with `<o>/br` writable and the deny in it; difftest 2:110. `:root` = read with the cwd
    `<ws>` writable: `<ws>/ch` read and deny `<ws>/ch/auth.lock`, deny `<ws>/.codex/auth.lock`
    in the existing carve-out, `<o>` write with `<o>/r` read and deny `<o>/r/zz` refuse the
    same way -- a CODEX_HOME inside the workspace before its writer's lock exists. With the
    read entry outside every writable root, with no read entry above, or with the path
    present, they start)."""
    if f.full_write:
        return []
    root_write = f.enf.profile.winner("/")[0] == "write"
    # a read entry a write at its own path beats is no read-only bind (held-out 4141:260,
    # 4141:266: the cwd `<h>/ch` itself read, its missing `auth.lock` denied, started)
    # the entries a writable root spelled through a link hides are still mounted (held-out
    # 4141:188: cwd `<ws>/l0` -> `../home`, `<home>/vault/ch` read, its missing lock denied).
    # Only a read entry inside exactly one writable root refuses (`/` with `:root` = write; a
    # root spelled through a link counts only alone): a second one around it shields it
    # (4242:211, 4343:117; by hand on both: `<ws>/inner` written and `<ws>/inner/ch` read with
    # the cwd or TMPDIR at `<ws>` started, with the cwd elsewhere refused; `:root` = write
    # with `<t>/ch` read started with TMPDIR `<t>`, refused without)
    direct = {
        r
        for e, r in f.enf.exact
        if e.access == "write" and r == e.path and r != "/" and _wins(f.enf.profile, e)
    }
    reads = [
        r
        for e, r in [*f.enf.exact, *f.hidden]
        if e.access == "read"
        and e.source != SPECIAL_MINIMAL
        and _wins(f.enf.profile, e)
        and r not in f.won_writes
        and _held_by_one_root(f, r, direct, root_write)
    ]
    out: list[Refusal] = []
    for _e, r in f.denies:
        first = _first_missing(f.fs, r)
        if first is not None and any(under(posixpath.dirname(first), rd) for rd in reads):
            msg = f"bwrap: Can't create file at {first}: Read-only file system"
            out.append(Refusal("missing-nested-entries", first, msg))
    return out


def _held_by_one_root(f: Facts, path: str, direct: set[str], root_write: bool) -> bool:
    """Exactly one writable root strictly above `path` (see `missing_deny_under_read_only`)."""
    n = int(root_write) + sum(1 for w in direct if under(path, w) and path != w)
    if n == 0:
        n = int(any(under(path, w) and path != w for w in f.won_writes))
    return n == 1


def cwd_denied(f: Facts) -> list[Refusal]:
    """A session cwd spelled through a link whose real directory is denied, or reached through
    a deny glob's `\\`-holding literal prefix spelled through a link."""
    enf, fs, prof = f.enf, f.fs, f.enf.profile
    cwd = prof.workspace_roots[0] if prof.workspace_roots else None
    if cwd is None:
        return []
    real_cwd = resolve_path(fs, cwd).real
    if real_cwd == cwd:
        return []
    # The real directory's own access decides, not the lookup through the link's directory
    # (20261203:45: cwd `<home>/l0` -> `<tmp>/cfg` with `<home>` denied started).
    if enf._base(real_cwd)[0] == "deny":
        return [Refusal("cwd-denied", cwd, f"bwrap: Can't chdir to {cwd}: Permission denied")]
    # 7:564; by hand: cwd `<h>/b\\s/l0` -> `../k1` with `:workspace_roots` = {"[br].t3" =
    # "deny"} refused "Can't chdir to <h>/k1: Permission denied"; `x.t3`, or the cwd spelled
    # without the link, started.
    for g in prof.entries:
        if g.kind != "glob" or g.access != "deny":
            continue
        start = glob_static_prefix(g.path)
        real_start = resolve_path(fs, start).real
        if "\\" in start and under(real_cwd, real_start) and real_start != start:
            msg = f"bwrap: Can't chdir to {real_cwd}: Permission denied"
            return [Refusal("cwd-denied", cwd, msg)]
    return []


def glob_match_on_writable_link(f: Facts) -> list[Refusal]:
    """Codex before 0.171.0 with `:root` = write: a deny glob matching a symlink (to a file, a
    directory or nothing) refuses as a deny spelled through it (by hand on 0.166.0: `<ws>/l0*`
    with `<ws>/l0` -> a directory, a file or a missing path refused "cannot enforce sandbox
    deny-read path <ws>/l0 because it crosses writable symlink <ws>/l0"; 0.171.0 started, and
    so did 0.166.0 with `:root` = read; difftest 3:156, 4:36)."""
    if f.enf.glob_by_name or f.enf.profile.winner("/")[0] != "write":
        return []
    out: list[Refusal] = []
    for path, kind in _scanned(f):
        if kind != "link" or not any(rx.fullmatch(path) for _g, rx, _s in f.enf.globs):
            continue
        out.append(
            Refusal(
                "crosses-writable-symlink",
                path,
                f"Fatal error: cannot enforce sandbox deny-read path {path} because it "
                f"crosses writable symlink {path}",
            )
        )
    return out


#: The classes a configuration alone decides, run with or without a filesystem.
CONFIG_CLASSES: tuple[Callable[[Enforced], list[Refusal]], ...] = (
    unsupported_path_syntax,
    invalid_glob,
)
#: The classes the filesystem at start decides.
FS_CLASSES: tuple[Callable[[Facts], list[Refusal]], ...] = (
    write_on_file,
    crosses_writable_symlink,
    carve_out_on_link,
    entry_on_symlink,
    deny_link_beside_a_glob,
    deny_inside_denied_dir,
    deny_link_inside_denied_dir,
    glob_match_inside_denied_dir,
    scoped_glob_over_pattern_root,
    scoped_glob_beside_exact_deny,
    missing_nested_entries,
    missing_deny_under_read_only,
    cwd_denied,
)
#: The filesystem classes per Codex release range (`EnforcementModel`).
FS_CLASSES_BY_MODEL: dict[EnforcementModel, tuple[Callable[[Facts], list[Refusal]], ...]] = {
    MODEL_0_171: FS_CLASSES,
    MODEL_0_166: (*FS_CLASSES, glob_match_on_writable_link),
}


def refusals(enf: Enforced, full_write: bool) -> list[Refusal]:
    """The start-up failures measured with the real sandbox (research section 5, difftest);
    without an fs only the ones the configuration alone decides. Sorted, no duplicates."""
    out = [r for cls in CONFIG_CLASSES for r in cls(enf)]
    if enf.fs is not None:
        facts = _facts(enf, enf.fs, full_write)
        out += [r for fs_cls in FS_CLASSES_BY_MODEL[enf.model] for r in fs_cls(facts)]
    return sorted(set(out), key=lambda x: (x.code, x.path))


# ---------------------------------------------------------------------------------------------
# Helpers of the classes above


def _scanned(f: Facts) -> list[tuple[str, FsKind]]:
    """Every existing path the kept deny globs' scans see (from each scan start), sorted."""
    seen: set[tuple[str, FsKind]] = set()
    for start in sorted({s for _g, _rx, s in f.enf.globs}):
        seen.update(f.fs.below(start))
    return sorted(seen)


def _carve_out_name_in_root(prof: EffectiveProfile, path: str) -> bool:
    """A path named like a carve-out directly in another writable root: a write entry on such
    a file starts, and the file is writable (difftest 5:263; by hand on 0.166.0 and 0.171.0:
    cwd `<ws>` with `:workspace_roots` = {".codex" = "write"} or {".git" = "write"} on a file
    wrote it; {"data" = "write"} refused)."""
    parent, name = posixpath.split(path)
    return name in CARVE_OUTS and any(
        w.kind == "path" and w.access == "write" and w.path == parent for w in prof.entries
    )


def _winning_paths(prof: EffectiveProfile) -> list[Entry]:
    return [e for e in prof.entries if e.kind == "path" and _wins(prof, e)]


def _masked_entry(e: Entry) -> bool:
    """A read or deny entry the link checks look at (not a write, a carve-out or `:minimal`)."""
    return e.access == "write" or is_carve_out(e) or e.source == SPECIAL_MINIMAL


def _crossing(f: Facts, e: Entry) -> str | None:
    """The writable symlink a read/deny entry is spelled through, if any."""
    if _masked_entry(e):
        return None
    return next(
        (
            x
            for w in _containing_roots(f.enf.profile, e.path)
            if (x := _crossed_link(f.fs, w, e.path))
        ),
        None,
    )


def _mask_candidates(f: Facts) -> list[tuple[Entry, str]]:
    """Every entry the sandbox mounts a mask or bind for: the exact ones, the ones a linked
    writable root hides, and the carve-outs of every writable root it binds -- also where a
    deny glob matching the root's own path kept them out of the compiled list (20261203:950,
    7:354, by hand: `<o>/*` deny, cwd `<o>/d` writable, deny `<o>/d/.codex` missing refuses;
    a read entry at the carve-out's path stands for it, as in `_with_carve_outs`)."""
    enf = f.enf
    have = {e.path for e, _r in enf.exact if is_carve_out(e) or e.access == "read"}
    synthetic = (
        []
        if f.full_write
        else [
            (Entry("path", c, "read", f"carve-out {name} of writable root {w.path}"), c)
            for w, wr in enf.exact
            if w.access == "write" and wr == w.path and enf.decide(wr).writable
            for name in CARVE_OUTS
            if (c := f"{wr.rstrip('/')}/{name}") not in have
        ]
    )
    return [*enf.exact, *f.hidden, *synthetic]


def _missing_message(f: Facts, m: str, at: set[str], kids: set[str]) -> str:
    if m in at and not kids:
        # an entry on a missing carve-out name (measured by hand, 0.171.0)
        if f.enf.profile.winner("/")[0] == "write":
            return f"bwrap: Can't mkdir {m}: Not a directory"
        return f"bwrap: Can't create file at {m}: Is a directory"
    return (
        f"bwrap: Can't bind mount /bindfileXXXXXX on /newroot{m}: Unable to mount "
        "source on destination: No such file or directory"
    )


def _first_missing(fs: FsView, real: str) -> str | None:
    for anc in reversed(ancestors(real)):
        if fs.kind(anc) is None:
            return anc
    return None
