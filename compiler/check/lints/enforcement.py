"""Lints of what the sandbox does with each mode's profile on this filesystem.

PC030-PC039, PC055: the refusal classes of compiler/startup.py (the sandbox refuses to start, or
drops a deny it cannot enforce), evaluated by profilec.codex.enforce as Codex measures them.
"""

from __future__ import annotations

from typing import Any

from ...codex.enforce import enforce
from ...codex.fsview import LiveFs, resolve_path
from ...codex.vocabulary import MEASURED_RANGE
from ...paths import CODEX_HOME_UNDER_TEMP_REASON, codex_home_temp_dir
from ...rule_ids import (
    CODEX_HOME_UNDER_TMP,
    CWD_THROUGH_SYMLINK_DENIED,
    DENY_FILE_IN_DENIED_DIR,
    DENY_NOT_ENFORCED,
    ENTRY_KEY_IS_SYMLINK,
    INVALID_DENY_GLOB,
    MISSING_NESTED_ENTRIES,
    READ_ENTRY_CROSSES_WRITABLE_SYMLINK,
    SCOPED_TABLE_KEY_PATTERN_SYNTAX,
    WRITABLE_ROOT_THROUGH_SYMLINK,
    WRITE_ENTRY_ON_FILE,
)
from ...startup import REFUSAL_CLASSES
from ..context import LintContext, lint
from ..rules import rule

rule(
    WRITE_ENTRY_ON_FILE,
    "write-entry-on-file",
    "error",
    "a `write` entry names a regular file: the sandbox refuses to start",
    "measured: 'bwrap: Can't mkdir parents for <file>/.git: Not a directory', then a panic "
    "'failed to inspect synthetic bubblewrap mount target ...' (no command runs)",
    REFUSAL_CLASSES["write-on-file"].fix,
    MEASURED_RANGE,
)

rule(
    DENY_FILE_IN_DENIED_DIR,
    "deny-file-in-denied-dir",
    "error",
    "a denied directory plus a deny (exact or glob) on an existing path inside it (or on a "
    "missing path inside it, below a writable root that lies above the denied directory)",
    "measured: 'bwrap: Can't create file at <file>: Read-only file system', for a directory "
    "'Can't mkdir <dir>: Read-only file system', for a missing parent 'Can't mkdir parents "
    "for <path>: Read-only file system' (no command runs); a writable root between them "
    "mounts first and avoids it",
    REFUSAL_CLASSES["deny-inside-denied-dir"].fix,
    MEASURED_RANGE,
)

rule(
    READ_ENTRY_CROSSES_WRITABLE_SYMLINK,
    "read-entry-crosses-writable-symlink",
    "error",
    "a `read` entry is, or passes through, a symlink inside a writable root (or a deny key is "
    "such a symlink, or a carve-out name `.git .agents .codex .aws` directly in a writable "
    "root is one; a deny crossing one above its key is PC017)",
    "measured: 'error building bubblewrap command: Fatal error: cannot enforce sandbox "
    "read-only path <p> because it crosses writable symlink <l>' (no command runs)",
    REFUSAL_CLASSES["crosses-writable-symlink"].fix,
    MEASURED_RANGE,
)

rule(
    MISSING_NESTED_ENTRIES,
    "missing-nested-entries",
    "error",
    "two or more entries below the same missing directory inside a writable root, a deny on a "
    "missing carve-out name, or a deny on a missing path below a `read` entry (a carve-out "
    "too) inside a writable root: a CODEX_HOME in the workspace before its auth.lock exists",
    "measured: 'bwrap: Can't bind mount /bindfileXXXXXX on /newroot<dir>: Unable to mount "
    "source on destination: No such file or directory', 'Can't create file at <carve-out>: "
    "Is a directory', 'Can't create file at <path>: Read-only file system' (no command runs)",
    REFUSAL_CLASSES["missing-nested-entries"].fix,
    MEASURED_RANGE,
)

rule(
    ENTRY_KEY_IS_SYMLINK,
    "entry-key-is-symlink",
    "error",
    "a read or deny key is itself a symlink (absolute to an existing path, or relative `.`)",
    "measured on 0.171.0: 'bwrap: Can't mount tmpfs on /newroot<key>: No such file or "
    "directory' (absolute link to a dir), 'Can't create file at <key>: No such file or "
    "directory' (to a file), 'Can't remount readonly on /newroot<key>: realpath(destination)' "
    "(relative `.`) (no command runs)",
    REFUSAL_CLASSES["entry-on-symlink"].fix,
    MEASURED_RANGE,
)

rule(
    INVALID_DENY_GLOB,
    "invalid-deny-glob",
    "error",
    "a deny glob has an unbalanced `{` or `}` after its literal prefix",
    "measured: 'Fatal error: unreadable glob pattern is invalid for <dir>: error parsing glob "
    "...: unclosed alternate group; missing '}'' (or 'unopened alternate group') (no "
    "command runs)",
    REFUSAL_CLASSES["invalid-glob"].fix,
    MEASURED_RANGE,
)

rule(
    CWD_THROUGH_SYMLINK_DENIED,
    "cwd-through-symlink-denied",
    "error",
    "the session cwd is spelled through a symlink and its real directory is denied",
    "measured: 'bwrap: Can't chdir to <cwd>: Permission denied' (no command runs)",
    REFUSAL_CLASSES["cwd-denied"].fix,
    MEASURED_RANGE,
)

rule(
    SCOPED_TABLE_KEY_PATTERN_SYNTAX,
    "scoped-table-key-pattern-syntax",
    "error",
    "a scoped table under a path key (absolute, or `~` expanded with HOME) that holds one of "
    "`* ? [ ] { } \\` has a `deny` subpath holding one of `* ? [ ] { }`, or any subpath "
    "holding `{` or `}`",
    'measured on 0.171.0: \'Error: unsupported configuration path "<key>" using POSIX path '
    "syntax' (no command runs); keys `]z x*y q? [br] {c,d} z} w{ back\\slash` and `~/x*y` "
    "refuse, `a b` starts; a `read` subpath `f/**` or a subpath without those characters "
    "starts; a `:special` table over such a path starts",
    REFUSAL_CLASSES["unsupported-path-syntax"].fix,
    MEASURED_RANGE,
)


rule(
    WRITABLE_ROOT_THROUGH_SYMLINK,
    "writable-root-through-symlink",
    "error",
    "a writable root or the session cwd is spelled through a symlink",
    "the sandbox binds the real directory but drops every deny and read-only entry spelled "
    "by its real path below it (measured on 0.171.0: `-C <link>` with :workspace and a deny "
    "on <real>/f: a sandboxed cat read the file; the compiled policy still lists the deny)",
    "spell every writable root and the cwd by its canonical path (realpath)",
    MEASURED_RANGE,
    waivable=False,
)

rule(
    CODEX_HOME_UNDER_TMP,
    "codex-home-under-tmp",
    "error",
    "CODEX_HOME lies under the launch temp dir (--tmpdir, else $TMPDIR, else /tmp)",
    "measured: 'Refusing to create helper binaries under temporary dir', then the sandbox "
    "helper cannot be exec'd and no command runs (compile refuses such a layout, exit 2)",
    "put CODEX_HOME under a persistent directory (e.g. /var/lib, $HOME), or launch Codex with "
    "a TMPDIR outside it",
    MEASURED_RANGE,
)

rule(
    DENY_NOT_ENFORCED,
    "deny-not-enforced",
    "error",
    "a deny in the compiled policy that the sandbox does not enforce",
    'measured on 0.171.0: `":minimal" = "deny"` is ignored; a deny glob masks only '
    "existing non-directories at sandbox start; a glob with `{`/`}` in a directory "
    "component masks nothing; a deny under a writable root spelled through a symlink is "
    "dropped",
    "deny exact canonical paths of existing files or directories",
    MEASURED_RANGE,
    waivable=False,
)


@lint
def _enforcement(o: LintContext) -> None:
    """PC030-PC036: what the sandbox does with each mode's profile on this filesystem."""
    inp = o.inp
    fs = LiveFs()
    for me in o.modes:
        layer = inp.stack.layer_defining(me.profile_id)
        for cwd, eff in me.contexts:
            if eff.unrestricted:
                continue
            kw: dict[str, Any] = {"mode": me.mode, "profile": me.profile_id}
            real_cwd = resolve_path(fs, cwd).real
            if real_cwd != cwd:
                o.add(
                    WRITABLE_ROOT_THROUGH_SYMLINK,
                    f"mode {me.mode}: the session cwd {cwd} is spelled through a symlink "
                    f"(real: {real_cwd}); denies below {real_cwd} are not enforced",
                    path=cwd,
                    **kw,
                )
            for e in eff.entries:
                if e.kind == "path" and e.access == "write":
                    real = resolve_path(fs, e.path).real
                    if real != e.path and e.path != cwd:
                        o.add(
                            WRITABLE_ROOT_THROUGH_SYMLINK,
                            f"mode {me.mode}: writable root {e.path} (from {e.source}) is "
                            f"spelled through a symlink (real: {real})",
                            layer=layer,
                            needles=(e.source, e.path),
                            path=e.path,
                            **kw,
                        )
            enf = enforce(eff, fs, codex_version=o.codex_version)
            for r in enf.refusals:
                cls = REFUSAL_CLASSES.get(r.code)
                rule = cls.rule if cls else None
                crossing_above = not r.message.endswith(f"crosses writable symlink {r.path}")
                if rule is None or (
                    rule == READ_ENTRY_CROSSES_WRITABLE_SYMLINK
                    and "deny-read" in r.message
                    and crossing_above
                ):
                    continue  # a deny crossing a writable symlink above its key is PC017
                o.add(
                    rule,
                    f"mode {me.mode}: the sandbox will not start: {r.message}",
                    layer=layer,
                    needles=(r.path,),
                    path=r.path,
                    **kw,
                )
            for dr in enf.dropped:
                if dr.entry.access != "deny":
                    continue
                o.add(
                    DENY_NOT_ENFORCED,
                    f"mode {me.mode}: deny {dr.entry.path} (from {dr.entry.source}) is not "
                    f"enforced: {dr.reason}",
                    layer=layer,
                    needles=(dr.entry.source, dr.entry.path),
                    path=dr.entry.path,
                    **kw,
                )
    # The launch TMPDIR (check --tmpdir, else the environment's), else Codex's default /tmp.
    temp = codex_home_temp_dir(inp.codex_home, inp.tmpdir) if inp.codex_home else None
    if inp.codex_home and temp:
        o.add(
            CODEX_HOME_UNDER_TMP,
            f"CODEX_HOME {inp.codex_home} is under the temp dir {temp}: "
            f"{CODEX_HOME_UNDER_TEMP_REASON}",
            path=inp.codex_home,
        )
