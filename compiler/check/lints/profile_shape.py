"""Lints of the profiles' shape and selection: legacy sandbox keys, unknown keys and specials,
default_permissions and the mode map, version-gated syntax, the session config's permissions.

PC001-PC003, PC005, PC006, PC009, PC012, PC013, PC019-PC021. Each rule is declared with
`rule(...)` right above the `@lint` function that fires it (compiler/check/context.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...codex.lexical import EvaluationError
from ...codex.resolve import EvalContext, resolve
from ...codex.vocabulary import (
    BUILTIN_FULL,
    BUILTIN_PROFILES,
    BUILTIN_WORKSPACE,
    EXTENDS_RANGE,
    LEGACY_SANDBOX_KEYS,
    NESTED_WORKSPACE_ROOTS_RANGE,
    NETWORK_KEYS,
    PROFILE_KEYS,
    PROFILES_RANGE,
    SESSION_FORBIDDEN_KEYS,
    SPECIALS,
    in_range,
)
from ...models.check import CheckFinding
from ...models.policy import ACP_MODES
from ...rule_ids import (
    CWD_FOLLOWING_WRITE,
    DANGER_FULL_ACCESS,
    EXTENDS_UNSUPPORTED_VERSION,
    LEGACY_NONE,
    LEGACY_SANDBOX_MODE,
    MODE_UNMAPPED,
    NESTED_WORKSPACE_ROOTS_TABLE,
    NO_DEFAULT_PERMISSIONS,
    PROFILES_UNSUPPORTED_VERSION,
    SESSION_CONFIG_PERMISSIONS,
    UNKNOWN_PROFILE_KEY,
    UNKNOWN_SPECIAL,
)
from ..context import LintContext, lint, perms_of
from ..rules import rule, rule_by_id

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


@lint
def _legacy_sandbox(o: LintContext) -> None:
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


@lint
def _profile_shapes(o: LintContext) -> None:
    stack = o.inp.stack
    for pid, prof in sorted(perms_of(o.merged).items()):
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


rule(
    CWD_FOLLOWING_WRITE,
    "cwd-following-write",
    "error",
    "a mode's profile makes the session cwd writable, whatever cwd the client picks "
    '(`:workspace_roots` = write, or `extends = ":workspace"`)',
    "the client picks the cwd (thread/start, ACP session/new): a session opened at CODEX_HOME, "
    "HOME or a directory above a vault made it writable, and a writable root beats a read entry "
    "at the same path (measured on 0.171.0 and 0.166.0)",
    "extend :read-only and grant write on each workspace root by its path (profilec's compiled "
    "profiles do), and keep the launcher's cwd to a workspace root",
    waivable=False,
)

#: A cwd no profile names: a profile that writes it writes any cwd a client picks.
_CWD_PROBE = "/profilec-cwd-probe/any-cwd-a-client-picks"


@lint
def _cwd_following_write(o: LintContext) -> None:
    perms = perms_of(o.merged)
    for mode, pid in sorted(o.inp.mode_map.items()):
        if pid == BUILTIN_FULL or (pid not in perms and pid not in BUILTIN_PROFILES):
            continue  # flagged as danger-full-access or mode-unmapped
        try:
            eff = resolve(perms, pid, EvalContext(cwd=_CWD_PROBE))
        except EvaluationError:  # a profile that does not resolve is its own finding (PC015)
            continue
        if eff.unrestricted or eff.decide(_CWD_PROBE).access != "write":
            continue
        o.add(
            CWD_FOLLOWING_WRITE,
            f"mode {mode}'s profile {pid} makes any session cwd writable: a client that opens "
            "the session outside the workspace (CODEX_HOME, HOME, above a vault) writes there",
            mode=mode,
            profile=pid,
        )


@lint
def _selection(o: LintContext) -> None:
    inp = o.inp
    perms = perms_of(o.merged)
    dp = o.merged.get("default_permissions")
    if perms and dp is None:
        layer = next((ly for ly in reversed(inp.stack.layers) if perms_of(ly.data)), None)
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


@lint
def _versions(o: LintContext) -> None:
    inp = o.inp
    v = o.codex_version
    perms = perms_of(o.merged)
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


@lint
def _session(o: LintContext) -> None:
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
