"""The whole path (issue 13): trusted base, ancestors of protected paths, literal names. Pure.

The passes compile_mode (compiler/compile.py) runs after a mode's deny, lock and holder entries:
`:root` = write lowered to `:root` = read plus the real top-level directories (`root_split`),
literal names (`check_literal`), the trusted base (`trusted_entries`, `drop_unneeded_masks`),
pins on renamable ancestors of protected paths (`protected_paths`, `pin_entries`, the rename
rule in compiler/ancestry.py), and the startability gate (`check_startable`). `Probe` is what
they ask the host about the launch user; `Resolutions` resolves each table once per context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .ancestry import Protected, pins_for
from .codex.resolve import EffectiveProfile, EvalContext, resolve
from .codex.vocabulary import CARVE_OUTS, SPECIAL_ROOT
from .errors import SandboxRefusesError, UnsafeRootError
from .literal import glob_char, refusal
from .models.compiled import CompiledEntry, Provenance
from .paths import is_within, parent
from .trustedbase import WORKSPACE_HOLDER

if TYPE_CHECKING:
    from .codex.resolve import Entry
    from .models.compiled import ResolvedHome, ResolvedRoot, TrustedPath


class Probe(Protocol):
    """What compile asks the host about the launch user (roots.LaunchProbe; a fake in tests)."""

    def blocker(self, path: str, names: Sequence[str]) -> str | None:
        """Why the launch user could not create the missing `names` in `path`, or None."""

    def subdirs(self, path: str) -> tuple[str, ...]:
        """The real directories directly in `path` the launch user can enter, sorted."""


class Resolutions:
    """`resolve()` for one profile id, once per distinct table and context: resolve is a pure
    function of them (lexical: it reads no file), and within one mode the pin pass, the
    mask-dropping pass and the emitted profile often resolve equal tables (no pin added, no
    mask dropped). Equal means equal as data (`==` on the whole table; the tables built here
    hold the same types under the same keys: access strings, bools, ints, tables), so a hit
    returns what a second resolve would have. A plain class: a per-mode cache (as Shared)."""

    __slots__ = ("_done", "profile_id")

    def __init__(self, profile_id: str) -> None:
        self.profile_id = profile_id
        self._done: list[tuple[dict[str, Any], EvalContext, EffectiveProfile]] = []

    def __call__(self, table: dict[str, Any], ctx: EvalContext) -> EffectiveProfile:
        """`table` (not changed afterwards) resolved in `ctx`."""
        for t, c, eff in self._done:
            if c == ctx and t == table:
                return eff
        eff = resolve({self.profile_id: table}, self.profile_id, ctx)
        self._done.append((table, ctx, eff))
        return eff


def protected_paths(
    roots: Sequence[ResolvedRoot], home: ResolvedHome | None, trusted: Sequence[TrustedPath]
) -> list[Protected]:
    """Every path whose ancestors must stay in place: each vault (or denied directory root),
    each holder directory, the private CODEX_HOME and its holders, each trusted-base path."""
    out: dict[str, Protected] = {}
    for r in roots:
        if r.kind != "missing":  # a missing root's vault may not exist: nothing to pin yet
            out.setdefault(r.vault, Protected(r.vault, "vault", r.id))
        for d in r.holder_dirs:
            out.setdefault(d, Protected(d, "holder-dir", r.id))
    if home is not None:
        for d in (home.canonical, *home.holder_dirs):
            out.setdefault(d, Protected(d, "codex-home"))
    for t in trusted:
        out.setdefault(t.path, Protected(t.path, "trusted-base"))
    return [out[p] for p in sorted(out)]


def resolve_with(
    resolved: Resolutions,
    base_table: dict[str, Any],
    entries: Sequence[CompiledEntry],
    ctx: EvalContext,
) -> EffectiveProfile:
    table = dict(base_table)
    fs = dict(table["filesystem"])
    for e in entries:
        fs[e.path] = e.access
    table["filesystem"] = fs
    return resolved(table, ctx)


def root_split(
    base_table: dict[str, Any],
    entries: Sequence[CompiledEntry],
    root_dirs: Sequence[str],
    trusted: Sequence[TrustedPath],
    probe: Probe,
) -> list[CompiledEntry]:
    """`:root` = write, lowered: `:root` = read plus `write` on every real top-level directory.

    With `/` writable a model command can create, rename or replace any name in `/`; on a
    merged-/usr host `/lib64` is a symlink holding every dynamic binary's loader, so replacing
    it runs model code as the trusted side (measured on codex 0.171.0 as root: `ln -sfn` over a
    top-level symlink succeeds under `:root` = write, fails with "Read-only file system" after
    the split, while /dev/null, /tmp, /var/tmp, /root, /opt and the workspace stay writable).
    A symlink cannot be pinned (Codex refuses an entry on one), so `/` itself becomes read-only.
    Directories that already carry an entry (a vault, a holder) or lie in the trusted base's
    read-only set keep it; base-policy keys are left as the policy says. Top-level files, and
    names created later, are read-only in the sandbox.

    A top-level directory the launch user cannot hold Codex's mount targets in (`probe`: on a
    read-only file system, or not writable for that uid) is no writable root: Codex would fail
    to create `<dir>/.git` and the session would never start (measured on 0.171.0, issue 22).
    It stays read-only (`:root`), and each of its own subdirectories the user can hold them in
    (a tmpfs /var/tmp in a `--read-only` container, /var/tmp or /home/<user> for uid 65534)
    becomes the writable root instead; deeper ones are not searched.
    """
    have = {e.path for e in entries} | set(base_table["filesystem"])
    frozen = [t.path for t in trusted if t.access == "read"]
    why = "`:root` = write lowered: / stays read-only so no top-level name can be replaced"
    out = [
        CompiledEntry(
            path=SPECIAL_ROOT,
            access="read",
            provenance=(Provenance(reason="root-split", detail=why),),
        )
    ]

    def skip(d: str) -> bool:
        # A top-level `.git`, `.codex`, ... (left by a `:root` = write sandbox) stays
        # read-only, as Codex keeps those names inside every writable root.
        return (
            d in have or any(is_within(d, f) for f in frozen) or d.rsplit("/", 1)[1] in CARVE_OUTS
        )

    # one provenance for every top-level directory (a frozen model: shared, not copied)
    top = (Provenance(reason="root-split", detail="top-level directory (was `:root` = write)"),)
    for d in root_dirs:
        if skip(d):
            continue
        blocked = probe.blocker(d, CARVE_OUTS)
        if blocked is None:
            out.append(CompiledEntry(path=d, access="write", provenance=top))
            continue
        for c in probe.subdirs(d):
            if skip(c) or probe.blocker(c, CARVE_OUTS) is not None:
                continue
            out.append(
                CompiledEntry(
                    path=c,
                    access="write",
                    provenance=(
                        Provenance(
                            reason="root-split",
                            detail=f"subdirectory of {d}, which stays "
                            f"read-only: it {blocked} (Codex could not start over it)",
                        ),
                    ),
                )
            )
    return out


def _trusted_detail(t: TrustedPath) -> str:
    """`<source>: <declared>`, with the role of a trusted-side input."""
    role = f"{t.role}: " if t.role else ""
    return f"{t.source}: {role}{t.declared}"


def trusted_entries(
    resolved: Resolutions,
    base_table: dict[str, Any],
    entries: Sequence[CompiledEntry],
    contexts: Sequence[EvalContext],
    trusted: Sequence[TrustedPath],
    mode: str,
) -> list[CompiledEntry]:
    """A deny for every trusted-base socket in every mode; a `read` entry for every trusted
    read-only directory the mode could write. A writable root inside one fails (exit 5)."""
    if not trusted:
        return []
    effs = [resolve_with(resolved, base_table, entries, ctx) for ctx in contexts]
    have = {e.path for e in entries}
    out: list[CompiledEntry] = []
    added: list[str] = []
    for t in sorted(trusted, key=lambda t: t.path):
        prov = (Provenance(reason="trusted-base", detail=_trusted_detail(t)),)
        if t.access == "deny":
            if t.path not in have and not any(eff.winner(t.path)[0] == "deny" for eff in effs):
                out.append(CompiledEntry(path=t.path, access="deny", provenance=prov))
            continue
        for eff in effs:
            for e in eff.entries:
                if e.access == "write" and e.kind == "path" and is_within(e.path, t.path):
                    _refuse_inside(t, e, mode)
        if any(is_within(t.path, a) for a in added):
            continue  # an enclosing trusted directory is already read-only
        if t.path in have or not any(eff.winner(t.path)[0] == "write" for eff in effs):
            continue  # already read-only (or denied) in this mode
        out.append(CompiledEntry(path=t.path, access="read", provenance=prov))
        added.append(t.path)
    return out


def _refuse_inside(t: TrustedPath, e: Entry, mode: str) -> None:
    """Refuse (exit 5) the writable root `e` inside trusted directory `t`. The directory that
    holds a workspace root holds writable roots by design (the workspace root, a TMPDIR beside
    it: each keeps its own `write` entry); only it being a writable root itself is refused."""
    if t.role != WORKSPACE_HOLDER:
        raise UnsafeRootError(
            f"writable root {e.path} ({e.source}) lies inside trusted-base "
            f"directory {t.path}, which no mode may write",
            where=f"mode {mode}",
            hint="choose a workspace root outside the trusted base",
        )
    if e.path == t.path:
        raise UnsafeRootError(
            f"workspace root {t.declared} lies directly in writable root {t.path} "
            f"({e.source}): a command of this or an earlier session could replace it with a "
            "link to a vault after Codex started",
            where=f"mode {mode}",
            hint="put the workspace roots in a directory the identity's sessions share and "
            "no policy writes (e.g. /srv/<agent>/workspaces/<session>), not directly in /tmp "
            "or $TMPDIR",
        )


def drop_unneeded_masks(
    resolved: Resolutions,
    base_table: dict[str, Any],
    entries: list[CompiledEntry],
    contexts: Sequence[EvalContext],
    trusted: Sequence[TrustedPath],
) -> list[CompiledEntry]:
    """Drop the trusted-base `read` entry on a path whose directory no context can write: the
    directory's own entry keeps it read-only already, and an entry there can stop the session.

    On a missing path Codex 0.171.0 would have to create its mask inside a read-only directory
    (measured: `bwrap: Can't create file at <HOME>/.bash_login: Read-only file system`, the
    session never starts). An existing path is no safer: a `.git` above a workspace root may be
    a mount target a running Codex session made and removes when it ends (measured), and once
    it is gone Codex must create it inside the read-only directory (`bwrap: Can't mkdir
    <dir>/.git: Read-only file system`). A pin made read-only after `trusted_entries` ran (the
    launch user cannot hold a writable root there) is such a directory.
    """
    read_only = {t.path for t in trusted if t.access == "read"}
    ours = [
        e
        for e in entries
        if e.path in read_only
        and e.access == "read"
        and any(p.reason == "trusted-base" for p in e.provenance)
    ]
    if not ours:
        return entries
    effs = [resolve_with(resolved, base_table, entries, ctx) for ctx in contexts]
    drop = {id(e) for e in ours if all(eff.winner(parent(e.path))[0] != "write" for eff in effs)}
    return [e for e in entries if id(e) not in drop]


def pin_entries(
    resolved: Resolutions,
    base_table: dict[str, Any],
    entries: Sequence[CompiledEntry],
    contexts: Sequence[EvalContext],
    protected: Sequence[Protected],
    mode: str,
    probe: Probe,
) -> list[CompiledEntry]:
    """`write` pins on every renamable ancestor of a protected path (compiler/ancestry.py).

    A pin keeps the directory's access (it is writable already) and makes it a mount point
    in the sandbox, which cannot be renamed. A protected path that is itself a writable root
    (a workspace root, /tmp, $TMPDIR, /) cannot be made read-only: that fails with exit 5.

    A pin the launch user cannot hold Codex's mount targets in (`probe`: read-only file
    system, or a root-owned directory for uid 65534) becomes a `read` entry instead: it is a
    mount point all the same, and a writable root below it stays writable by its own entry.
    """
    if not protected:
        return []
    effs = [resolve_with(resolved, base_table, entries, ctx) for ctx in contexts]
    for eff in effs:
        roots = {e.path: e.source for e in eff.entries if e.kind == "path" and e.access == "write"}
        roots.update({"/": SPECIAL_ROOT} if eff.unrestricted else {})
        for p in protected:
            if p.reason != "vault" and p.path in roots:
                raise UnsafeRootError(
                    f"{p.reason} {p.path} is the writable root {p.path} ({roots[p.path]}); "
                    "it cannot be made read-only without taking the root away",
                    where=f"mode {mode}",
                    hint="move the vault and its links out of the writable area",
                )
    found: dict[str, tuple[list[Protected], set[str]]] = {}
    for eff in effs:
        for pin in pins_for(eff, protected):
            guards, wroots = found.setdefault(pin.path, ([], set()))
            guards.extend(g for g in pin.guards if g not in guards)
            wroots.add(pin.writable_root)
    out: list[CompiledEntry] = []
    frozen: list[str] = []
    writable = {
        e.path for eff in effs for e in eff.entries if e.kind == "path" and e.access == "write"
    }
    for path in sorted(found):
        if any(eff.winner(path)[0] != "write" for eff in effs):
            raise UnsafeRootError(
                f"directory {path} above a protected path is writable in one session context "
                "but not in another; no single entry keeps it in place",
                where=f"mode {mode}",
                hint="move the vault out of the writable area",
            )
        guards, wroots = found[path]
        if any(is_within(path, f) for f in frozen):
            continue  # below a directory made read-only here: nothing in it can be renamed
        blocked = probe.blocker(path, CARVE_OUTS)
        if blocked is not None:
            # A `write` pin here is a writable root Codex 0.171.0 cannot start over (measured:
            # `bwrap: Can't mkdir <pin>/.git: Permission denied` as uid 65534 under a
            # root-owned pin; issue 22). A `read` entry keeps the guarded paths in place.
            frozen.append(path)
            out.append(
                CompiledEntry(
                    path=path,
                    access="read",
                    provenance=tuple(
                        Provenance(
                            reason="ancestor",
                            root_id=g.root_id,
                            detail=f"read-only below writable root {', '.join(sorted(wroots))}: "
                            f"it {blocked}, so it cannot be a writable root; keeps {g.reason} "
                            f"{g.path} in place",
                        )
                        for g in guards
                    ),
                )
            )
            continue
        if all(g.reason == "trusted-base" for g in guards) and not any(
            is_within(w, path) for w in writable
        ):
            # Only trusted-base paths (an installation, an input, a `.git` name) lie below and
            # no writable root does: a `read` entry keeps it in place without making it a
            # writable root. A `write` pin would be one, and Codex 0.171.0 then creates its
            # `.git`/`.agents`/`.codex` mount targets inside it, which fails for a non-root
            # sandbox in a root-owned directory (measured: `bwrap: Can't mkdir
            # /var/cache/.git: Permission denied`, the session never starts).
            frozen.append(path)
            prov = tuple(
                Provenance(
                    reason="ancestor",
                    detail=f"read-only below writable root {', '.join(sorted(wroots))}; "
                    f"keeps {g.reason} {g.path} in place (holds no writable root)",
                )
                for g in guards
            )
            out.append(CompiledEntry(path=path, access="read", provenance=prov))
            continue
        prov = tuple(
            Provenance(
                reason="ancestor",
                root_id=g.root_id,
                detail=f"pinned below writable root {', '.join(sorted(wroots))}; "
                f"keeps {g.reason} {g.path} in place",
            )
            for g in guards
        )
        out.append(CompiledEntry(path=path, access="write", provenance=prov))
    return out


def check_startable(effs: Sequence[EffectiveProfile], probe: Probe, mode: str) -> None:
    """Refuse (exit 10) a mode with a writable root the launch user cannot hold Codex's mount
    targets in: a workspace root, /tmp or $TMPDIR on a read-only file system (measured in a
    `--read-only` container: `Error building bubblewrap command: Read-only file system (os
    error 30)`), or one the uid may not write. Codex would not start the session at all.
    `effs`: the emitted profile resolved in each session context."""
    seen: set[str] = set()
    for eff in effs:
        for e in eff.entries:
            if e.kind != "path" or e.access != "write" or e.path in seen:
                continue
            seen.add(e.path)
            blocked = probe.blocker(e.path, CARVE_OUTS)
            if blocked is not None:
                raise SandboxRefusesError(
                    f"writable root {e.path} ({e.source}) {blocked}: Codex 0.171.0 cannot "
                    "create its mount targets there and the sandbox would not start",
                    where=f"mode {mode}",
                    hint=f"make {e.path} writable for the launch user (a tmpfs or volume in a "
                    "read-only container)",
                )


def check_literal(
    entries: Sequence[CompiledEntry] | Sequence[TrustedPath],
    roots: Sequence[ResolvedRoot],
    trusted: Sequence[TrustedPath],
) -> None:
    """Refuse (exit 5) every entry whose path holds a glob character, unless it is a deny on
    an existing regular file: a glob supports only deny and masks no directory or socket.
    A trusted-base path is checked as the entry it may become (its path and access)."""
    files = {r.target for r in roots if r.kind == "file"}
    files |= {t.path for t in trusted if t.kind == "file"}
    for e in entries:
        ch = glob_char(e.path)
        if ch is None:
            continue
        if e.access != "deny":
            raise refusal(e.path, ch, f"Codex refuses a `{e.access}` entry that is a glob")
        if e.path not in files:
            raise refusal(e.path, ch, "an escaped glob deny masks no directory or socket")
