"""The launch's ownership and mode prerequisites, for the uid the trusted parent runs as.

PC060-PC062 (PC070-PC071 at the end). A root daemon that launches Codex as an unprivileged uid
(`--run-as 65534`) needs that uid to reach and keep the login: the Codex parent reads the
credential through the CODEX_HOME link and refreshes it by a temp file and a rename in the
vault, takes `$CODEX_HOME/auth.lock` before it writes, and reads `$CODEX_HOME/config.toml`. A
vault only root may enter passes every coverage proof (nothing in the sandbox reads it) while
the parent cannot read or refresh its own login. The run-as uid is `--run-as`, else the uid
check runs as; its groups as compile takes them (compiler/roots.py LaunchProbe). lstat, stat and
statvfs only: no credential is opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from typing import Any

from ...codex.vocabulary import WRITER_LOCK
from ...launchprobe import LaunchProbe
from ...models.check import CheckFinding
from ...models.compiled import ResolvedRoot
from ...paths import is_within
from ...rule_ids import (
    CODEX_HOME_OWNERSHIP,
    IDENTITY_DIRS_UNDECLARED,
    TRUSTED_STATE_WRITABLE,
    VAULT_NOT_RUN_AS_WRITABLE,
    WRITER_LOCK_UNUSABLE,
)
from ...trustedbase import LAUNCH_PATH_DIR, MCP_SERVER_CWD
from ..rules import rule, rule_by_id

rule(
    VAULT_NOT_RUN_AS_WRITABLE,
    "vault-not-run-as-writable",
    "error",
    "a vault directory or credential target is not readable and writable by the run-as uid "
    "(or a directory above it is not searchable by it)",
    "the trusted Codex parent runs as the run-as uid: it reads the login there and refreshes "
    "it by a temp file and a rename in the vault, so a vault it cannot write (a root-owned "
    "0700 one under `--run-as 65534`) keeps every mode covered while the parent cannot read or "
    "refresh its own login",
    "`chown -R <run-as uid>: <vault>` and `chmod 0700 <vault>`, the credential 0600 (or "
    "launch as the vault's owner), and make every directory above it searchable by that uid",
    waivable=False,
)

rule(
    CODEX_HOME_OWNERSHIP,
    "codex-home-ownership",
    "error",
    "the private CODEX_HOME is not owned by the run-as uid (or root), is group- or "
    "world-writable, or the run-as uid cannot read it",
    "whoever may write CODEX_HOME may replace config.toml (the profiles and the parent "
    "policy), auth.json's link or auth.lock under the trusted parent; a CODEX_HOME the run-as "
    "uid cannot read leaves the parent without its config and its login",
    "`profilec compile --format codex-home --out <CODEX_HOME> --run-as <uid>` as root writes "
    "it owned by that uid, 0700 (or `chown <uid>: <CODEX_HOME>` and `chmod 0700`)",
    waivable=False,
)

rule(
    WRITER_LOCK_UNUSABLE,
    "writer-lock-unusable",
    "error",
    "the credential writer's lock $CODEX_HOME/auth.lock is missing, not a regular file, or not "
    "readable and writable by the run-as uid",
    "the parent takes the lock before it writes the login; a deny masks only a lock present at "
    "sandbox start, and a lock the run-as uid cannot open stops the parent keeping its login",
    "`profilec compile --format codex-home --out <CODEX_HOME> --run-as <uid>` creates it "
    "(empty, 0600, owned by that uid)",
    waivable=False,
)

_R, _W, _X = 4, 2, 1


def _allows(st: os.stat_result, uid: int, gids: frozenset[int], want: int) -> bool:
    """Whether `uid` (with `gids`) has every bit of `want` (rwx as 4/2/1) on `st`; root has
    read and write on anything, search on any directory."""
    if uid == 0:
        return True
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid == uid:
        have = mode >> 6
    elif st.st_gid in gids:
        have = mode >> 3
    else:
        have = mode
    return have & want == want


def _bits(want: int) -> str:
    """`readable, writable and searchable`, the words for the bits of `want`."""
    words = [w for w, b in (("readable", _R), ("writable", _W), ("searchable", _X)) if want & b]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _show(st: os.stat_result) -> str:
    return f"owner {st.st_uid}, group {st.st_gid}, mode {stat.S_IMODE(st.st_mode):04o}"


class _Ownership:
    def __init__(self, uid: int, gids: frozenset[int]) -> None:
        self.uid = uid
        self.gids = gids
        self.given = True
        self.found: list[CheckFinding] = []

    def add(self, rule_id: str, message: str, path: str, root: str | None = None) -> None:
        self.found.append(
            CheckFinding(
                rule=rule_id,
                severity=rule_by_id(rule_id).severity,
                message=message,
                root=root,
                path=path,
            )
        )

    def ancestors(self, rule_id: str, path: str, what: str, root: str | None = None) -> bool:
        """A finding for the first directory above `path` the run-as uid cannot search."""
        parent = os.path.dirname(path)
        chain: list[str] = []
        while True:
            chain.append(parent)
            up = os.path.dirname(parent)
            if up == parent:
                break
            parent = up
        for d in reversed(chain):
            try:
                st = os.stat(d)
            except OSError:
                return False
            if not _allows(st, self.uid, self.gids, _X):
                self.add(
                    rule_id,
                    f"{d}, above {what} {path}, is not searchable by uid {self.uid} ({_show(st)})",
                    d,
                    root,
                )
                return False
        return True

    def need(
        self, rule_id: str, path: str, what: str, want: int, root: str | None = None
    ) -> os.stat_result | None:
        """lstat `path`; a finding when the run-as uid lacks `want` on it. None: missing."""
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not _allows(st, self.uid, self.gids, want):
            self.add(
                rule_id,
                f"{what} {path} is not {_bits(want)} by uid {self.uid} ({_show(st)})",
                path,
                root,
            )
        return st


def _read_only(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def ownership_findings(
    roots: Iterable[ResolvedRoot],
    codex_home: str | None,
    uid: int,
    gids: Iterable[int] | None = None,
    *,
    given: bool = True,
    trusted: Iterable[Any] = (),
    identities: Sequence[Any] = (),
    workspace_roots: Sequence[str] = (),
    tmpdir: str | None = None,
) -> list[CheckFinding]:
    """PC060 for each vault and credential target the run-as uid cannot read and write (or
    reach), PC061 for a CODEX_HOME it does not own (nor root), others may write or it cannot
    read, PC062 for an auth.lock that is missing or it cannot open read-write; PC070 and PC071
    (`trusted_state_findings`, `identity_findings`) over the compiled trusted base and the
    manifest's identities. `given`: the uid is the launch's (`--run-as`), not merely the one
    check runs as."""
    o = _Ownership(uid, LaunchProbe(uid, gids).gids)
    o.given = given
    o.found += trusted_state_findings(trusted, uid, o.gids)
    o.found += identity_findings(identities, codex_home, workspace_roots, tmpdir, uid)
    vaults: dict[str, str] = {}
    for r in roots:
        vaults.setdefault(r.vault, r.id)
    for vault, root_id in sorted(vaults.items()):
        if not os.path.lexists(vault):
            continue  # a missing vault is the roots' own findings (allow_missing, PC007)
        if not o.ancestors(VAULT_NOT_RUN_AS_WRITABLE, vault, "the vault", root_id):
            continue
        st = o.need(VAULT_NOT_RUN_AS_WRITABLE, vault, "the vault", _R | _W | _X, root_id)
        if st is not None and _read_only(vault):
            o.add(
                VAULT_NOT_RUN_AS_WRITABLE,
                f"the vault {vault} is on a read-only file system: the parent cannot refresh "
                "the login there",
                vault,
                root_id,
            )
    for r in roots:
        if r.kind == "file":
            o.need(VAULT_NOT_RUN_AS_WRITABLE, r.target, "the credential", _R | _W, r.id)
    if codex_home:
        _home(o, codex_home)
    return o.found


def _home(o: _Ownership, home: str) -> None:
    try:
        st = os.lstat(home)
    except OSError:
        return  # compile refuses a CODEX_HOME that is not a directory
    if st.st_uid != 0 and o.uid == 0 and not o.given:
        # Check runs as root and was not told the launch's uid: the likely fix is the flag,
        # not re-owning a CODEX_HOME another user's Codex runs from.
        o.add(
            CODEX_HOME_OWNERSHIP,
            f"CODEX_HOME {home} is owned by uid {st.st_uid} ({_show(st)}) and check runs as "
            f"root without --run-as: pass --run-as {st.st_uid} if Codex is launched as that "
            "uid (check judges ownership for the launch's uid), else re-own it for the uid "
            "Codex runs as",
            home,
        )
    elif st.st_uid not in (o.uid, 0):
        o.add(
            CODEX_HOME_OWNERSHIP,
            f"CODEX_HOME {home} is owned by uid {st.st_uid}, not the run-as uid {o.uid} "
            f"(nor root) ({_show(st)})",
            home,
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        o.add(
            CODEX_HOME_OWNERSHIP,
            f"CODEX_HOME {home} is group- or world-writable ({_show(st)})",
            home,
        )
    if not o.ancestors(CODEX_HOME_OWNERSHIP, home, "CODEX_HOME"):
        return
    o.need(CODEX_HOME_OWNERSHIP, home, "CODEX_HOME", _R | _X)
    config = os.path.join(home, "config.toml")
    cst = _lstat(config)
    if cst is not None and stat.S_ISREG(cst.st_mode):
        o.need(CODEX_HOME_OWNERSHIP, config, "the CODEX_HOME config", _R)
    lock = os.path.join(home, WRITER_LOCK)
    lst = _lstat(lock)
    if lst is None:
        o.add(WRITER_LOCK_UNUSABLE, f"the credential writer's lock {lock} does not exist", lock)
    elif not stat.S_ISREG(lst.st_mode):
        o.add(
            WRITER_LOCK_UNUSABLE, f"the credential writer's lock {lock} is not a regular file", lock
        )
    else:
        o.need(WRITER_LOCK_UNUSABLE, lock, "the credential writer's lock", _R | _W)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


rule(
    TRUSTED_STATE_WRITABLE,
    "trusted-state-writable",
    "error",
    "a vouched MCP server's cwd (its `codex sandbox` wrapper's CODEX_HOME) or a launch PATH "
    "directory before the system ones can be written, created or replaced outside the sandbox "
    "by the run-as uid, by its group or by anyone (with a run-as uid of root: by any other user)",
    "the Codex parent runs what they hold outside every sandbox: the wrapper reads "
    "`<cwd>/.env` and `<cwd>/config.toml` (a planted `.env` whose PATH led to a planted "
    "`bwrap` copied the vault), and the parent resolves `bwrap` on its PATH (a `bwrap` planted "
    "in `~/.local/bin` ran as root); measured on 0.171.0 and 0.166.0. The compiled profiles "
    "keep them read-only inside the sandbox (PC025); this holds them outside it",
    "make the directory and every directory above it owned by root (or the daemon's own "
    "user, not the run-as uid) and not group- or world-writable, or launch with a PATH of "
    "system directories only",
    waivable=False,
)

rule(
    IDENTITY_DIRS_UNDECLARED,
    "identity-dirs-undeclared",
    "error",
    "`[[identities]]` share the run-as uid (their CODEX_HOME has one owner) and one of them "
    "declares no `workspace_roots` or `tmpdir`, or the session's workspace root or TMPDIR lies "
    "outside what its identity declares",
    "one uid's file permissions separate nothing: an identity's session read another's "
    "workspace and TMPDIR in every mode (measured on 0.171.0 and 0.166.0); a compiled "
    "session denies only what the other identities declare",
    "declare each identity's `workspace_roots` (or the directory holding them) and `tmpdir` "
    "in the roots manifest and compile each session with a workspace root and `--tmpdir` "
    "inside its own, or run each identity as a uid of its own",
    waivable=False,
)


def _distrusted_write(st: os.stat_result, uid: int, gids: frozenset[int]) -> bool:
    """Whether someone the trusted side must not share this directory with may write it: the
    run-as uid (not root), a group it is in, everyone; with a run-as uid of root, any other
    user (a non-root owner, group or world write)."""
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IWOTH:
        return True
    if uid == 0:
        return st.st_uid != 0 or bool(mode & stat.S_IWGRP)
    return st.st_uid == uid or (bool(mode & stat.S_IWGRP) and st.st_gid in gids)


def _distrusted_owner(st: os.stat_result, uid: int) -> bool:
    return st.st_uid != 0 if uid == 0 else st.st_uid == uid


def _replaceable(path: str, uid: int, gids: frozenset[int]) -> str | None:
    """Why the run-as uid (or another user it must not trust) can write, create or replace
    `path` outside the sandbox, or None. lstat only: the path itself (its missing part created
    in its first existing directory), then each directory above it (a rename there moves it
    away; with the sticky bit, only the owner of the entry or of the directory may)."""
    who = f"uid {uid}" if uid else "a user other than root"
    child: os.stat_result | None = None
    cur = path
    missing = True
    while True:
        st = _lstat(cur)
        if st is not None:
            if missing:
                missing = False
                if not stat.S_ISDIR(st.st_mode):
                    return f"{cur} is no directory ({_show(st)})"
                if _distrusted_write(st, uid, gids):
                    what = "can write it" if cur == path else f"can create {path} in it"
                    return f"{who} {what}: {cur} ({_show(st)})"
            elif child is not None and _distrusted_write(st, uid, gids):
                sticky = bool(st.st_mode & stat.S_ISVTX)
                if not sticky or _distrusted_owner(child, uid) or _distrusted_owner(st, uid):
                    return f"{who} can rename what leads to {path} in {cur} ({_show(st)})"
            child = st if st is not None else child
        up = os.path.dirname(cur)
        if up == cur:
            return None
        cur = up


def trusted_state_findings(
    trusted: Iterable[Any], uid: int, gids: Iterable[int] | None = None
) -> list[CheckFinding]:
    """PC070 for each vouched MCP server cwd and launch PATH directory of the compiled trusted
    base (`trusted`: its TrustedPaths) that the run-as uid, or another user, can write,
    create or replace outside the sandbox."""
    o = _Ownership(uid, LaunchProbe(uid, gids).gids)
    for t in trusted:
        if getattr(t, "role", None) not in (MCP_SERVER_CWD, LAUNCH_PATH_DIR):
            continue
        why = _replaceable(t.path, o.uid, o.gids)
        if why is not None:
            o.add(TRUSTED_STATE_WRITABLE, f"{t.role} {t.path}: {why}", t.path)
    return o.found


def _spellings(paths: Iterable[str]) -> list[str]:
    """Each path as given and canonical."""
    return [q for p in paths for q in (p, os.path.realpath(p))]


def identity_findings(
    identities: Sequence[Any],
    codex_home: str | None,
    workspace_roots: Sequence[str],
    tmpdir: str | None,
    uid: int,
) -> list[CheckFinding]:
    """PC071: identities whose CODEX_HOME the run-as uid owns (they run as it) each declare
    `workspace_roots` and `tmpdir` when more than one does, and the session's own workspace
    roots and TMPDIR lie inside what its identity declares. lstat only."""
    o = _Ownership(uid, frozenset())
    sharing = []
    for ident in identities:
        st = _lstat(ident.codex_home)
        if st is not None and st.st_uid == uid:
            sharing.append(ident)
    if len(sharing) < 2:
        return []
    for ident in sharing:
        lacks = [k for k in ("workspace_roots", "tmpdir") if not getattr(ident, k)]
        if lacks:
            o.add(
                IDENTITY_DIRS_UNDECLARED,
                f"identity {ident.id} shares run-as uid {uid} with "
                f"{', '.join(i.id for i in sharing if i is not ident)} and declares no "
                f"{' or '.join(lacks)}: the other identities' sessions can read them",
                ident.codex_home,
            )
            continue
        if codex_home not in (ident.codex_home, os.path.realpath(ident.codex_home)):
            continue
        mine = [(w, "workspace root", ident.workspace_roots) for w in workspace_roots]
        mine += [(tmpdir, "TMPDIR", [ident.tmpdir])] if tmpdir else []
        for path, what, declared in mine:
            real = os.path.realpath(path)
            if not any(is_within(p, d) for p in (path, real) for d in _spellings(declared)):
                o.add(
                    IDENTITY_DIRS_UNDECLARED,
                    f"the session's {what} {path} lies outside what identity {ident.id} "
                    f"declares ({', '.join(declared)}): the other identities on uid {uid} can "
                    "read it",
                    path,
                )
    return o.found
