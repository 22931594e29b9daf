"""The launch's ownership and mode prerequisites, for the uid the trusted parent runs as.

PC060-PC062. A root daemon that launches Codex as an unprivileged uid (`--run-as 65534`) needs
that uid to reach and keep the login: the Codex parent reads the credential through the
CODEX_HOME link and refreshes it by a temp file and a rename in the vault, takes
`$CODEX_HOME/auth.lock` before it writes, and reads `$CODEX_HOME/config.toml`. A vault only
root may enter passes every coverage proof (nothing in the sandbox reads it) while the parent
cannot read or refresh its own login. The run-as uid is `--run-as`, else the uid check runs as;
its groups as compile takes them (compiler/roots.py LaunchProbe). lstat, stat and statvfs only:
no credential is opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from ...codex.vocabulary import WRITER_LOCK
from ...launchprobe import LaunchProbe
from ...models.check import CheckFinding
from ...models.compiled import ResolvedRoot
from ...rule_ids import CODEX_HOME_OWNERSHIP, VAULT_NOT_RUN_AS_WRITABLE, WRITER_LOCK_UNUSABLE
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
) -> list[CheckFinding]:
    """PC060 for each vault and credential target the run-as uid cannot read and write (or
    reach), PC061 for a CODEX_HOME it does not own (nor root), others may write or it cannot
    read, PC062 for an auth.lock that is missing or it cannot open read-write. `given`: the
    uid is the launch's (`--run-as`), not merely the one check runs as."""
    o = _Ownership(uid, LaunchProbe(uid, gids).gids)
    o.given = given
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
