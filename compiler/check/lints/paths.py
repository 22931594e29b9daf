"""Lints of deny paths, links and the roots' surroundings (lstat only: nothing is opened).

PC004, PC007, PC008, PC017 (a deny path as the filesystem has it), PC010, PC011, PC014 (CODEX_HOME,
hard links, holder dirs), PC024, PC025 (an ancestor of a protected path or of the trusted base
that the model can rename or write).
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from typing import Any

from ...ancestry import Protected, unsafe_ancestors
from ...codex.resolve import EffectiveProfile
from ...codex.vocabulary import WRITER_LOCK
from ...rule_ids import (
    ANCESTOR_RENAMABLE,
    CODEX_HOME_DENIED,
    DENY_CROSSES_WRITABLE_SYMLINK,
    DENY_ON_SYMLINK,
    DENY_PATH_MISSING,
    HARDLINKED_TARGET,
    HOLDER_DIR_WRITABLE,
    TRUSTED_BASE_WRITABLE,
    UNBOUNDED_DENY_GLOB,
)
from ..context import LintContext, lint, perms_of
from ..resolution import ModeEval
from ..rules import rule


def _chain_has_depth(perms: Mapping[str, Any], pid: str) -> bool:
    """True when the profile or a user parent sets filesystem.glob_scan_max_depth."""
    seen: set[str] = set()
    cur: Any = pid
    while isinstance(cur, str) and cur in perms and cur not in seen:
        seen.add(cur)
        prof = perms[cur]
        if not isinstance(prof, Mapping):
            return False
        fs = prof.get("filesystem")
        if isinstance(fs, Mapping) and "glob_scan_max_depth" in fs:
            return True
        cur = prof.get("extends")
    return False


# ---------------------------------------------------------------------------------------------
# Filesystem rules (lstat only)


def _first_symlink_ancestor(o: LintContext, path: str) -> str | None:
    """The shallowest proper ancestor of `path` that is a symlink (lstat), if any."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts)):
        cand = "/" + "/".join(parts[:i])
        st = o.lstat(cand)
        if isinstance(st, int):
            return None
        if stat.S_ISLNK(st.st_mode):
            return cand
    return None


def _deny_paths(eff: EffectiveProfile) -> list[tuple[str, str]]:
    return sorted(
        {(e.path, e.source) for e in eff.entries if e.kind == "path" and e.access == "deny"}
    )


rule(
    DENY_ON_SYMLINK,
    "deny-on-symlink",
    "error",
    "a deny key is itself a symlink",
    "Codex refuses to start every sandboxed command (absolute link, or any link in a writable "
    "root), and otherwise masks whatever the link points at when the sandbox starts",
    "deny the canonical target (realpath), never the link",
)

rule(
    DENY_PATH_MISSING,
    "deny-path-missing",
    "warning",
    "a deny path does not exist",
    "Codex accepts a missing deny path silently; a typo or moved file leaves the real one open",
    "point the deny at the existing canonical target, or declare the root allow_missing",
)

rule(
    UNBOUNDED_DENY_GLOB,
    "unbounded-deny-glob",
    "warning",
    "a `**` deny glob without filesystem.glob_scan_max_depth",
    "on Linux deny globs are expanded by an uncapped scan at sandbox start; files created "
    "later are not masked",
    "set filesystem.glob_scan_max_depth, or deny exact paths",
)

rule(
    DENY_CROSSES_WRITABLE_SYMLINK,
    "deny-crosses-writable-symlink",
    "error",
    "a deny path crosses a symlink that is writable in that mode",
    "Codex fails closed: 'cannot enforce sandbox deny-read path ... crosses writable symlink'",
    "deny the canonical path, and keep links out of writable roots",
)


@lint
def _filesystem(o: LintContext) -> None:
    inp = o.inp
    allowed_missing = {r.target for r in inp.roots if r.kind == "missing"}
    perms = perms_of(o.merged)
    for me in o.modes:
        if not me.contexts:
            continue
        layer = inp.stack.layer_defining(me.profile_id)
        for _, eff in me.contexts[:1]:
            if eff.unrestricted:
                continue
            for path, source in _deny_paths(eff):
                st = o.lstat(path)
                if isinstance(st, int):
                    if path not in allowed_missing:
                        what = f"deny path {path} does not exist (from {source})"
                        if path.rsplit("/", 1)[-1] == WRITER_LOCK:
                            what = (
                                f"the credential writer's lock {path} does not exist: a deny "
                                "masks only a file present at sandbox start, so a model command "
                                "could flock it once Codex creates it (create it empty, 0600; "
                                "`profilec compile --format codex-home` does)"
                            )
                        o.add(
                            DENY_PATH_MISSING,
                            f"mode {me.mode}: {what}",
                            layer=layer,
                            needles=(source, path, source.split("/")[0]),
                            mode=me.mode,
                            profile=me.profile_id,
                            path=path,
                        )
                elif stat.S_ISLNK(st.st_mode):
                    o.add(
                        DENY_ON_SYMLINK,
                        f"mode {me.mode}: deny key {path} is a symlink (from {source})",
                        layer=layer,
                        needles=(source, path, source.split("/")[0]),
                        mode=me.mode,
                        profile=me.profile_id,
                        path=path,
                    )
                link = _first_symlink_ancestor(o, path)
                if link is not None and any(e.decide(link).writable for _, e in me.contexts):
                    o.add(
                        DENY_CROSSES_WRITABLE_SYMLINK,
                        f"mode {me.mode}: deny path {path} crosses writable symlink {link}",
                        layer=layer,
                        needles=(source, path, source.split("/")[0]),
                        mode=me.mode,
                        profile=me.profile_id,
                        path=path,
                    )
            globs = [e for e in eff.entries if e.kind == "glob" and "**" in e.path]
            if globs and not _chain_has_depth(perms, me.profile_id):
                for g in globs:
                    o.add(
                        UNBOUNDED_DENY_GLOB,
                        f"mode {me.mode}: deny glob {g.path} has no glob_scan_max_depth",
                        layer=layer,
                        needles=("**",),
                        mode=me.mode,
                        profile=me.profile_id,
                        path=g.path,
                    )


rule(
    CODEX_HOME_DENIED,
    "codex-home-denied",
    "error",
    "CODEX_HOME is denied, which hides $CODEX_HOME/tmp/arg0",
    "the sandbox helper Codex execs from CODEX_HOME/tmp/arg0 cannot start",
    "keep CODEX_HOME readable; deny only the credential targets",
)

rule(
    HARDLINKED_TARGET,
    "hardlinked-target",
    "warning",
    "a credential target has extra hard links",
    "a path deny masks one name; every other hard link stays readable",
    "remove the extra links (link count 1), or protect each as a root",
    waivable=False,
)

rule(
    HOLDER_DIR_WRITABLE,
    "holder-dir-writable",
    "error",
    "a directory holding a link, a target or the private CODEX_HOME is writable",
    "a model command can re-point the link, swap the target or edit the private config",
    "give the directory a read entry (profilec compile does) or move it out of writable roots",
    waivable=False,
)


@lint
def _roots_and_home(o: LintContext) -> None:
    inp = o.inp
    for r in inp.roots:
        if r.nlink is not None and r.nlink > 1:
            o.add(
                HARDLINKED_TARGET,
                f"root {r.id!r}: target {r.target} has {r.nlink} hard links",
                root=r.id,
                path=r.target,
                file=inp.manifest_file,
            )
    for me in o.modes:
        for cwd, eff in me.contexts:
            if inp.codex_home and not eff.unrestricted:
                probe = inp.codex_home.rstrip("/") + "/tmp/arg0"
                d = eff.decide(probe)
                if d.access == "deny":
                    src = d.winner.source if d.winner else "no entry"
                    o.add(
                        CODEX_HOME_DENIED,
                        f"mode {me.mode}: {probe} is denied (winner: {src})",
                        mode=me.mode,
                        profile=me.profile_id,
                        path=inp.codex_home,
                    )
            holders: list[tuple[str, str]] = []
            for r in inp.roots:
                holders += [(d, f"root {r.id!r}") for d in r.holder_dirs]
            if inp.codex_home:
                holders += [(d, "CODEX_HOME") for d in (inp.codex_home, *inp.codex_home_holders)]
            _whole_path(o, me, cwd, eff)
            for hd, what in sorted(set(holders)):
                d = eff.decide(hd)
                if d.writable:
                    src = d.winner.source if d.winner else "unrestricted profile"
                    o.add(
                        HOLDER_DIR_WRITABLE,
                        f"mode {me.mode}: directory {hd} holding {what} is writable "
                        f"(winner: {src}; cwd {cwd})",
                        mode=me.mode,
                        profile=me.profile_id,
                        path=hd,
                    )


rule(
    ANCESTOR_RENAMABLE,
    "ancestor-renamable",
    "error",
    "a directory above a vault, a holder directory or CODEX_HOME can be renamed in some mode",
    "its parent is writable and it is no mount point: a model command moves it (the mounts "
    "inside travel along), plants a credential and config at the old path, which the trusted "
    "parent reads next, and later commands read the real credential under the new name "
    "(measured on 0.171.0, docs/paths.md)",
    "compile with profilec (it pins every such directory with a `write` entry, which makes it "
    "a mount point), or move the vault out of the writable area",
    waivable=False,
)

rule(
    TRUSTED_BASE_WRITABLE,
    "trusted-base-writable",
    "error",
    "a trusted-base directory is writable, or a trusted-base socket not denied, in some mode",
    "a model command that writes the loader configuration, a binary or site-packages runs "
    "code as the trusted side; a reachable container-engine socket starts a container that "
    "mounts / (measured in full access on 0.171.0, docs/paths.md)",
    "add the profilec trusted-base entries (a `read` entry on the directory, a `deny` on the "
    "socket), as `profilec compile` does",
    waivable=False,
)


def _whole_path(o: LintContext, me: ModeEval, cwd: str, eff: EffectiveProfile) -> None:
    """PC024 (a renamable ancestor of a protected path) and PC025 (the trusted base)."""
    inp = o.inp
    if eff.unrestricted:
        return  # PC003 reports it; nothing can be protected
    protected: dict[str, Protected] = {}
    for r in inp.roots:
        if r.kind != "missing":
            protected.setdefault(r.vault, Protected(r.vault, "vault", r.id))
        for d in r.holder_dirs:
            protected.setdefault(d, Protected(d, "holder-dir", r.id))
    if inp.codex_home:
        for d in (inp.codex_home, *inp.codex_home_holders):
            protected.setdefault(d, Protected(d, "codex-home"))
    seen: set[str] = set()
    for p, anc, wroot in unsafe_ancestors(eff, [protected[k] for k in sorted(protected)]):
        if anc in seen:
            continue
        seen.add(anc)
        o.add(
            ANCESTOR_RENAMABLE,
            f"mode {me.mode}: {anc} above {p.reason} {p.path} can be renamed (writable root "
            f"{wroot}; cwd {cwd})",
            mode=me.mode,
            profile=me.profile_id,
            path=anc,
        )
    for t in inp.trusted_base:
        access, won = eff.winner(t.path)
        if (access != "deny") if t.access == "deny" else (access == "write"):
            src = won.source if won else "no entry"
            role = f" ({t.role})" if getattr(t, "role", None) else ""
            o.add(
                TRUSTED_BASE_WRITABLE,
                f"mode {me.mode}: trusted-base {t.kind} {t.path}{role} is {access or 'unlisted'} "
                f"(winner: {src}; cwd {cwd})",
                mode=me.mode,
                profile=me.profile_id,
                path=t.path,
            )
    access, won = eff.winner("/")
    if inp.trusted_base and access == "write":
        o.add(
            TRUSTED_BASE_WRITABLE,
            f"mode {me.mode}: / itself is writable (winner: {won.source if won else 'no entry'}; "
            f"cwd {cwd}): a command can replace a top-level name such as the /lib64 or /bin "
            "symlink (write each top-level directory instead of `:root`)",
            mode=me.mode,
            profile=me.profile_id,
            path="/",
        )
