"""Lints: the ways Codex silently drops, weakens or refuses a profile. Stable rule ids.

Every rule is declared with `rule(...)` (compiler/check/rules.py) right above the code that
fires it: a one-line message, a why, a fix and a severity; version-gated rules carry the Codex
version range they apply to (checked against profilec.settings.codex_version()). Filesystem
facts come from lstat only: a deny path, its ancestors or a credential is never opened.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..ancestry import Protected, unsafe_ancestors
from ..codex.enforce import enforce
from ..codex.fsview import LiveFs, resolve_path
from ..codex.resolve import EffectiveProfile
from ..codex.vocabulary import (
    BUILTIN_FULL,
    BUILTIN_PROFILES,
    BUILTIN_WORKSPACE,
    DEFAULT_CODEX_VERSION,
    EXTENDS_RANGE,
    LEGACY_SANDBOX_KEYS,
    MEASURED_RANGE,
    NESTED_WORKSPACE_ROOTS_RANGE,
    NETWORK_KEYS,
    PROFILE_KEYS,
    PROFILES_RANGE,
    SESSION_FORBIDDEN_KEYS,
    SPECIALS,
    WRITER_LOCK,
    in_range,
)
from ..models import ACP_MODES
from ..paths import CODEX_HOME_UNDER_TEMP_REASON, codex_home_temp_dir
from ..rule_ids import (
    ANCESTOR_RENAMABLE,
    CODEX_HOME_DENIED,
    CODEX_HOME_UNDER_TMP,
    CWD_THROUGH_SYMLINK_DENIED,
    DANGER_FULL_ACCESS,
    DENY_CROSSES_WRITABLE_SYMLINK,
    DENY_FILE_IN_DENIED_DIR,
    DENY_NOT_ENFORCED,
    DENY_ON_SYMLINK,
    DENY_PATH_MISSING,
    ENTRY_KEY_IS_SYMLINK,
    EXTENDS_UNSUPPORTED_VERSION,
    HARDLINKED_TARGET,
    HOLDER_DIR_WRITABLE,
    INVALID_DENY_GLOB,
    LEGACY_NONE,
    LEGACY_SANDBOX_MODE,
    MISSING_NESTED_ENTRIES,
    MODE_UNMAPPED,
    NESTED_WORKSPACE_ROOTS_TABLE,
    NO_DEFAULT_PERMISSIONS,
    PROFILE_ONLY_IN_SESSION_CONFIG,
    PROFILES_UNSUPPORTED_VERSION,
    READ_ENTRY_CROSSES_WRITABLE_SYMLINK,
    SCOPED_TABLE_KEY_PATTERN_SYNTAX,
    SESSION_CONFIG_PERMISSIONS,
    TRUSTED_BASE_WRITABLE,
    UNBOUNDED_DENY_GLOB,
    UNKNOWN_PROFILE_KEY,
    UNKNOWN_SPECIAL,
    WRITABLE_ROOT_THROUGH_SYMLINK,
    WRITE_ENTRY_ON_FILE,
)
from ..startup import REFUSAL_CLASSES
from .agent_layers import agent_layer_lints
from .configstack import Layer
from .coverage import ModeEval
from .parent_layers import dotenv_lint, parent_lints, project_doc_lint
from .result import CheckFinding
from .rules import rule, rule_by_id

if TYPE_CHECKING:
    from .checker import CheckInputs

# ---------------------------------------------------------------------------------------------
# The lint context


class _Out:
    """The lint context and its findings: the check's inputs and what the checker derived from
    them (the merged stack, each mode's resolution, the Codex version); fills a finding's
    severity from the rule and its location from the layer."""

    def __init__(
        self,
        inp: CheckInputs,
        merged: Mapping[str, Any],
        modes: Sequence[ModeEval],
        codex_version: str,
    ) -> None:
        self.inp = inp
        self.merged = merged
        self.modes = modes
        self.codex_version = codex_version
        self.items: list[CheckFinding] = []
        self._lstat: dict[str, os.stat_result | int] = {}

    def lstat(self, path: str) -> os.stat_result | int:
        """Cached lstat: the stat result, or the errno when it failed. Never opens."""
        hit = self._lstat.get(path)
        if hit is None:
            try:
                hit = os.lstat(path)
            except OSError as exc:
                hit = exc.errno or errno.ENOENT
            self._lstat[path] = hit
        return hit

    def add(
        self,
        rule: str,
        message: str,
        *,
        layer: Layer | None = None,
        needles: tuple[str, ...] = (),
        file: str | None = None,
        **kw: Any,
    ) -> None:
        line = layer.line_of(*needles) if layer is not None and needles else None
        self.items.append(
            CheckFinding(
                rule=rule,
                severity=rule_by_id(rule).severity,
                message=message,
                file=file or (layer.file if layer else None),
                line=line,
                **kw,
            )
        )


def _perms(data: Mapping[str, Any]) -> Mapping[str, Any]:
    p = data.get("permissions")
    return p if isinstance(p, Mapping) else {}


# ---------------------------------------------------------------------------------------------
# Config-shape rules


def _walk_keys(node: Any, path: str) -> list[tuple[str, str]]:
    """(dotted path, last key) of every key at any depth."""
    out: list[tuple[str, str]] = []
    if isinstance(node, Mapping):
        for k in sorted(node, key=str):
            full = f"{path}.{k}" if path else str(k)
            out.append((full, str(k)))
            out.extend(_walk_keys(node[k], full))
    return out


rule(
    LEGACY_SANDBOX_MODE,
    "legacy-sandbox-mode",
    "error",
    "sandbox_mode or sandbox_workspace_write is set in the config stack",
    "a legacy sandbox setting in a higher layer replaces the profile and all its denies",
    "remove sandbox_mode and sandbox_workspace_write from every layer (and every profile)",
    waivable=False,
)


def _legacy_sandbox(o: _Out) -> None:
    for layer in o.inp.stack.layers:
        for full, key in _walk_keys(layer.data, ""):
            if any(seg.startswith(LEGACY_SANDBOX_KEYS) for seg in key.split(".")):
                o.add(
                    LEGACY_SANDBOX_MODE,
                    f"{layer.name}: {full} is set; Codex uses it instead of the profiles",
                    layer=layer,
                    needles=(key.split(".")[0],),
                    path=full,
                )


rule(
    LEGACY_NONE,
    "legacy-none",
    "warning",
    "a filesystem entry uses the legacy value `none`",
    "`none` is an input alias Codex keeps only temporarily",
    "write `deny`",
)

rule(
    DANGER_FULL_ACCESS,
    "danger-full-access",
    "error",
    "a profile extends, or a mode selects, :danger-full-access",
    ":danger-full-access is unrestricted and cannot carry a deny (extending it is rejected)",
    'extend :read-only with ":root" = "write", explicit writes on the workspace roots and '
    "network enabled instead (never :workspace: it makes the session cwd writable)",
    waivable=False,
)

rule(
    UNKNOWN_PROFILE_KEY,
    "unknown-profile-key",
    "warning",
    "a profile (or its network table) holds a key Codex does not know",
    "Codex accepts unknown keys inside a profile silently, so a typo drops the rule",
    "use description, extends, workspace_roots, filesystem, network",
)

rule(
    UNKNOWN_SPECIAL,
    "unknown-special",
    "warning",
    "a filesystem key is an unknown :special",
    "Codex ignores an unknown :special with only a log line; it grants or denies nothing",
    "use :root :minimal :workspace_roots :tmpdir :slash_tmp",
)


def _profile_shapes(o: _Out) -> None:
    stack = o.inp.stack
    for pid, prof in sorted(_perms(o.merged).items()):
        layer = stack.layer_defining(pid)
        if not isinstance(prof, Mapping):
            continue
        for k in sorted(set(prof) - PROFILE_KEYS):
            o.add(
                UNKNOWN_PROFILE_KEY,
                f"profile {pid}: unknown key {k!r}",
                layer=layer,
                needles=(k,),
                profile=pid,
            )
        net = prof.get("network")
        if isinstance(net, Mapping):
            for k in sorted(set(net) - NETWORK_KEYS):
                o.add(
                    UNKNOWN_PROFILE_KEY,
                    f"profile {pid}: unknown network key {k!r}",
                    layer=layer,
                    needles=(k,),
                    profile=pid,
                )
        if prof.get("extends") == BUILTIN_FULL:
            o.add(
                DANGER_FULL_ACCESS,
                f"profile {pid} extends :danger-full-access",
                layer=layer,
                needles=(BUILTIN_FULL,),
                profile=pid,
            )
        fs = prof.get("filesystem")
        if not isinstance(fs, Mapping):
            continue
        for key in sorted(fs):
            value = fs[key]
            if key == "glob_scan_max_depth":
                continue
            values = list(value.values()) if isinstance(value, Mapping) else [value]
            if "none" in values:
                o.add(
                    LEGACY_NONE,
                    f"profile {pid}: {key} uses legacy `none`",
                    layer=layer,
                    needles=(key,),
                    profile=pid,
                    path=key,
                )
            if key.startswith(":") and key not in SPECIALS:
                o.add(
                    UNKNOWN_SPECIAL,
                    f"profile {pid}: unknown special {key}",
                    layer=layer,
                    needles=(key,),
                    profile=pid,
                    path=key,
                )


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


rule(
    NO_DEFAULT_PERMISSIONS,
    "no-default-permissions",
    "error",
    "[permissions] profiles are defined but default_permissions is not set",
    "Codex refuses the config (prompt-input, sandbox) or app-server falls back to defaults",
    "set default_permissions to the default mode's profile",
    waivable=False,
)

rule(
    MODE_UNMAPPED,
    "mode-unmapped",
    "error",
    "an ACP mode has no profile mapping, or maps to a profile no config layer defines",
    "that mode falls back to a built-in profile (or Codex rejects it); built-ins hide nothing",
    "map read-only, agent and agent-full-access each to a profile defined in a config layer",
    waivable=False,
)


def _selection(o: _Out) -> None:
    inp = o.inp
    perms = _perms(o.merged)
    dp = o.merged.get("default_permissions")
    if perms and dp is None:
        layer = next((ly for ly in reversed(inp.stack.layers) if _perms(ly.data)), None)
        o.add(
            NO_DEFAULT_PERMISSIONS,
            "[permissions] profiles are defined but default_permissions is not set",
            layer=layer,
            needles=("permissions",),
        )
    if dp == BUILTIN_FULL:
        o.add(
            DANGER_FULL_ACCESS,
            "default_permissions selects :danger-full-access",
            needles=("default_permissions",),
            layer=next((ly for ly in inp.stack.layers if "default_permissions" in ly.data), None),
        )
    for mode in ACP_MODES:
        if mode not in inp.mode_map:
            o.add(
                MODE_UNMAPPED,
                f"ACP mode {mode} has no profile mapping",
                mode=mode,
                file=inp.manifest_file,
            )
    for mode, pid in sorted(inp.mode_map.items()):
        if pid == BUILTIN_FULL:
            o.add(
                DANGER_FULL_ACCESS,
                f"mode {mode} selects :danger-full-access",
                mode=mode,
                profile=pid,
            )
        elif pid not in BUILTIN_PROFILES and pid not in perms:
            o.add(
                MODE_UNMAPPED,
                f"mode {mode} maps to profile {pid!r}, which no config layer defines",
                mode=mode,
                profile=pid,
            )


rule(
    PROFILE_ONLY_IN_SESSION_CONFIG,
    "profile-only-in-session-config",
    "error",
    "the profiles live only in CODEX_CONFIG (thread config), not in a config layer",
    "agentclientprotocol/codex-acp lists permission-profile:<id> modes only for profiles in "
    "$CODEX_HOME/config.toml or app-server -c; otherwise it stays in `agent` mode and sends "
    "a legacy sandboxPolicy on every turn, which replaces the profile and its denies",
    "write a CODEX_HOME (profilec compile --format codex-home) and set "
    "INITIAL_AGENT_MODE=permission-profile:<id>, or pass -c to app-server",
    waivable=False,
)


def _launcher(o: _Out) -> None:
    inp = o.inp
    stack = inp.stack
    config_layers = stack.profiles_defined_in("config-toml", "cli-override")
    session_only = sorted(
        pid
        for pid in set(inp.mode_map.values())
        if pid in stack.profiles_defined_in("session") and pid not in config_layers
    )
    for pid in session_only:
        layer = stack.layer_defining(pid)
        o.add(
            PROFILE_ONLY_IN_SESSION_CONFIG,
            f"profile {pid} is defined only in {layer.name if layer else 'session'}; "
            "agentclientprotocol/codex-acp replaces it with a per-turn sandboxPolicy",
            layer=layer,
            needles=(pid,),
            profile=pid,
        )


rule(
    PROFILES_UNSUPPORTED_VERSION,
    "profiles-unsupported-version",
    "error",
    "permission profiles need Codex >= 0.113.0",
    "older Codex has no [permissions]/default_permissions and ignores them",
    "upgrade Codex (PROFILEC_CODEX_VERSION names the target)",
    PROFILES_RANGE,
    waivable=False,
)

rule(
    EXTENDS_UNSUPPORTED_VERSION,
    "extends-unsupported-version",
    "error",
    "`extends` needs Codex >= 0.133.0",
    "older Codex has no profile inheritance; the profile loses its parent's entries",
    "upgrade Codex, or write the parent's entries out in full",
    EXTENDS_RANGE,
    waivable=False,
)

rule(
    NESTED_WORKSPACE_ROOTS_TABLE,
    "nested-workspace-roots-table",
    "error",
    'a [permissions.X.filesystem.":workspace_roots"] table under extends = ":workspace"',
    "Codex 0.148 rejects that nested table ('did not match any variant of untagged enum "
    "FilesystemPermissionToml', openai/codex#38803)",
    "write :workspace_roots as an inline table",
    NESTED_WORKSPACE_ROOTS_RANGE,
)


def _versions(o: _Out) -> None:
    inp = o.inp
    v = o.codex_version
    perms = _perms(o.merged)
    if perms and in_range(v, rule_by_id(PROFILES_UNSUPPORTED_VERSION).codex_versions):
        o.add(
            PROFILES_UNSUPPORTED_VERSION,
            f"config defines permission profiles but the target Codex is {v}",
        )
    if in_range(v, rule_by_id(EXTENDS_UNSUPPORTED_VERSION).codex_versions):
        for pid, prof in sorted(perms.items()):
            if isinstance(prof, Mapping) and "extends" in prof:
                o.add(
                    EXTENDS_UNSUPPORTED_VERSION,
                    f"profile {pid} uses extends but the target Codex is {v}",
                    layer=inp.stack.layer_defining(pid),
                    needles=("extends",),
                    profile=pid,
                )
    if in_range(v, rule_by_id(NESTED_WORKSPACE_ROOTS_TABLE).codex_versions):
        for layer in inp.stack.layers:
            if layer.origin != "config-toml" or layer.text is None:
                continue
            for n, line in enumerate(layer.text.split("\n"), start=1):
                m = re.match(r'\s*\[permissions\.([^.\]]+)\.filesystem\.":workspace_roots"\]', line)
                if m:
                    prof = perms.get(m.group(1))
                    if isinstance(prof, Mapping) and prof.get("extends") == BUILTIN_WORKSPACE:
                        o.items.append(
                            CheckFinding(
                                rule=NESTED_WORKSPACE_ROOTS_TABLE,
                                severity="error",
                                profile=m.group(1),
                                message=f"profile {m.group(1)}: nested :workspace_roots table "
                                "under "
                                f'extends = ":workspace" breaks Codex {v}',
                                file=layer.file,
                                line=n,
                            )
                        )


rule(
    SESSION_CONFIG_PERMISSIONS,
    "session-config-permissions",
    "warning",
    "session config tries to set permissions*, default_permissions or sandbox_mode*",
    "agent-supplied config must never define or replace the permission profile",
    "strip these keys before launch (profilec compile --session-config does)",
)


def _session(o: _Out) -> None:
    raw = o.inp.session_raw
    if raw is None:
        return
    for full, key in _walk_keys(raw, ""):
        if any(seg.startswith(SESSION_FORBIDDEN_KEYS) for seg in key.split(".")):
            o.add(
                SESSION_CONFIG_PERMISSIONS,
                f"session config sets {full!r}",
                path=full,
                file=o.inp.session_file,
            )


# ---------------------------------------------------------------------------------------------
# Filesystem rules (lstat only)


def _first_symlink_ancestor(o: _Out, path: str) -> str | None:
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


def _filesystem(o: _Out) -> None:
    inp = o.inp
    allowed_missing = {r.target for r in inp.roots if r.kind == "missing"}
    perms = _perms(o.merged)
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


def _roots_and_home(o: _Out) -> None:
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
    "such a symlink; a deny crossing one above its key is PC017)",
    "measured: 'error building bubblewrap command: Fatal error: cannot enforce sandbox "
    "read-only path <p> because it crosses writable symlink <l>' (no command runs)",
    REFUSAL_CLASSES["crosses-writable-symlink"].fix,
    MEASURED_RANGE,
)

rule(
    MISSING_NESTED_ENTRIES,
    "missing-nested-entries",
    "error",
    "two or more entries below the same missing directory inside a writable root",
    "measured: 'bwrap: Can't bind mount /bindfileXXXXXX on /newroot<dir>: Unable to mount "
    "source on destination: No such file or directory' (no command runs)",
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


def _enforcement(o: _Out) -> None:
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


def _whole_path(o: _Out, me: ModeEval, cwd: str, eff: EffectiveProfile) -> None:
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
            o.add(
                TRUSTED_BASE_WRITABLE,
                f"mode {me.mode}: trusted-base {t.kind} {t.path} is {access or 'unlisted'} "
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


def lint(
    inp: CheckInputs,
    *,
    merged: Mapping[str, Any],
    modes: Sequence[ModeEval],
    codex_version: str = DEFAULT_CODEX_VERSION,
) -> list[CheckFinding]:
    """Every rule over the inputs and what the checker derived from them (the merged stack, each
    mode's resolution); order is fixed later by the checker."""
    o = _Out(inp, merged, modes, codex_version)
    _legacy_sandbox(o)
    _profile_shapes(o)
    _selection(o)
    _launcher(o)
    _versions(o)
    _session(o)
    _filesystem(o)
    _roots_and_home(o)
    agent_layer_lints(o)
    parent_lints(o)
    dotenv_lint(o)
    project_doc_lint(o)
    _enforcement(o)
    return o.items
