"""Would the sandbox start? Each mode's compiled profile, enforced on the live filesystem.

`enforce()` models the start-up failures measured against the real `codex sandbox`
(compiler/codex/refusals.py, one function per class; the differential tester finds them).
Each class has one lint (`check`) and one fix, here; compile refuses a bundle with any of them
(exit 10), so a launcher that trusts compile never gets a session in which no command runs.
lstat/readlink only.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Collection
from typing import NamedTuple

from .codex.enforce import enforce
from .codex.enforced import Refusal
from .codex.fsview import FsKind, FsSnapshot, FsView, LiveFs
from .codex.lexical import EvaluationError
from .codex.resolve import EvalContext, resolve
from .codex.vocabulary import CARVE_OUTS
from .compile import writer_lock_path
from .models.compiled import CompiledBundle
from .rule_ids import (
    CWD_THROUGH_SYMLINK_DENIED,
    DENY_FILE_IN_DENIED_DIR,
    ENTRY_KEY_IS_SYMLINK,
    INVALID_DENY_GLOB,
    MISSING_NESTED_ENTRIES,
    READ_ENTRY_CROSSES_WRITABLE_SYMLINK,
    SCOPED_TABLE_KEY_PATTERN_SYNTAX,
    WRITE_ENTRY_ON_FILE,
)
from .settings import codex_version


class RefusalClass(NamedTuple):
    """One measured start-up failure class: the lint that reports it and the fix."""

    rule: str
    fix: str


#: codex.enforced.Refusal.code -> its lint and fix (compiler/check/lints/enforcement.py uses these).
REFUSAL_CLASSES: dict[str, RefusalClass] = {
    "write-on-file": RefusalClass(
        WRITE_ENTRY_ON_FILE, "grant write on the directory that holds the file, or read on the file"
    ),
    "deny-inside-denied-dir": RefusalClass(
        DENY_FILE_IN_DENIED_DIR, "drop the inner deny: the directory deny already hides it"
    ),
    "crosses-writable-symlink": RefusalClass(
        READ_ENTRY_CROSSES_WRITABLE_SYMLINK,
        "spell the entry by its canonical path, and keep links out of writable roots",
    ),
    "missing-nested-entries": RefusalClass(
        MISSING_NESTED_ENTRIES, "create the directory before launch, or drop the entries below it"
    ),
    "entry-on-symlink": RefusalClass(
        ENTRY_KEY_IS_SYMLINK, "name the canonical target (realpath), never the link"
    ),
    "invalid-glob": RefusalClass(
        INVALID_DENY_GLOB, "escape literal braces as `\\{` `\\}` (profilec's escape_literal does)"
    ),
    "cwd-denied": RefusalClass(
        CWD_THROUGH_SYMLINK_DENIED,
        "start the session in a directory the profile does not deny, spelled canonically",
    ),
    "unsupported-path-syntax": RefusalClass(
        SCOPED_TABLE_KEY_PATTERN_SYNTAX,
        "write each deny as a flat absolute key (escape the literal part with profilec's "
        "escape_literal) instead of a scoped table whose key holds `* ? [ ] { } \\`, or "
        "rename the directory",
    ),
}


class StartRefusal(NamedTuple):
    """One mode (at one session cwd) whose profile the sandbox refuses to start."""

    mode: str
    profile_id: str
    cwd: str
    refusal: Refusal
    #: What to do: the class's fix, or the one for this path (`fix_for`).
    fix: str = ""

    def line(self) -> str:
        """What, where and the fix, on one line."""
        cls = REFUSAL_CLASSES[self.refusal.code]
        return (
            f"mode {self.mode} (profile {self.profile_id}, cwd {self.cwd}): the sandbox will not "
            f"start: {self.refusal.message} [{self.refusal.code}, {cls.rule}]; fix: "
            f"{self.fix or cls.fix}"
        )


def fix_for(refusal: Refusal, writer_lock: str | None) -> str:
    """The fix of one refusal: its class's, or the named one for a missing writer's lock (a
    CODEX_HOME inside a writable root, compiled before its lock exists: the deny on it cannot
    be mounted in the read-only CODEX_HOME) and for a carve-out name that is a symlink directly
    in a writable root (Codex binds it read-only and refuses the link)."""
    if refusal.path == writer_lock and refusal.code == "missing-nested-entries":
        home = posixpath.dirname(refusal.path)
        return (
            f"create the writer's lock before launch: `profilec compile --format codex-home "
            f"--out {home}` does (or `install -m 600 /dev/null {refusal.path}` as the run-as "
            "user), or keep CODEX_HOME outside the workspace"
        )
    link = f"crosses writable symlink {refusal.path}"
    if posixpath.basename(refusal.path) in CARVE_OUTS and refusal.message.endswith(link):
        return (
            f"replace the symlink {refusal.path} with a real directory (or remove it): Codex "
            f"binds {', '.join(CARVE_OUTS)} read-only in every writable root and refuses a "
            "link there"
        )
    return REFUSAL_CLASSES[refusal.code].fix


def startup_refusals(
    bundle: CompiledBundle, placeholder_cwd: str, *, lock_created: bool = False
) -> list[StartRefusal]:
    """Every (mode, cwd) whose compiled profile the sandbox of the target Codex release
    (`settings.codex_version()`) refuses, on this filesystem. `lock_created`: the run
    creates CODEX_HOME's writer's lock before any launch (`compile --format codex-home` and
    `launch`), so it is judged present."""
    table = {p.profile_id: p.codex_table() for p in bundle.profiles}
    lay = bundle.layout
    home = lay.home or os.environ.get("HOME")
    cwds = list(dict.fromkeys(lay.workspace_roots)) or [placeholder_cwd]
    lock = writer_lock_path(bundle.codex_home) if bundle.codex_home is not None else None
    fs = _with_files([lock] if lock is not None and lock_created else [])
    version = codex_version()
    out: list[StartRefusal] = []
    for prof in bundle.profiles:
        for cwd in cwds:
            ctx = EvalContext(
                cwd=cwd,
                workspace_roots=tuple(r for r in lay.workspace_roots if r != cwd),
                tmpdir=lay.tmpdir,
                home=home,
            )
            try:
                eff = resolve(table, prof.profile_id, ctx)
            except EvaluationError:
                continue  # Codex rejects the profile itself: check's PC015 reports it
            out.extend(
                StartRefusal(prof.mode, prof.profile_id, cwd, r, fix_for(r, lock))
                for r in enforce(eff, fs, codex_version=version).refusals
            )
    return out


def _with_files(files: Collection[str]) -> FsView:
    """The live filesystem, with each of `files` a regular file (lstat/readlink only)."""
    fs: FsView = LiveFs()
    for f in files:
        path = os.path.normpath(f)
        kinds: dict[str, FsKind] = {path: "file"}
        fs = FsSnapshot(kinds, scope=path, outside=fs)
    return fs
