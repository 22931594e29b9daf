"""Lints for the trusted Codex parent: the parent policy (profiles/parent.toml) in the stack.

PC046-PC047, PC050 and PC051. The sandbox confines the model's shell commands only; the Codex
parent runs unsandboxed with the credential readable. Each setting of the reviewed parent
policy closes one road by which the parent reads, runs or passes on something because of the
model (docs/parent.md): a config stack that does not hold a setting at its value leaves that
road open, whatever the permission profiles say. A list-valued setting (the command
environment's exclude patterns) holds when the merged list contains every pattern the policy
names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...codex.resolve import resolve, session_contexts
from ...models.check import CheckFinding
from ...projectdocs import planted_docs, protected_dirs
from ...rule_ids import CODEX_HOME_DOTENV, LOCK_WRITABLE, PARENT_POLICY_MISSING, PROJECT_DOC_LINK
from ..context import lint
from ..rules import rule, rule_by_id

if TYPE_CHECKING:
    from ...models.policy import ParentSetting
    from ..context import LintContext


rule(
    PARENT_POLICY_MISSING,
    "parent-policy-missing",
    "error",
    "a setting of the parent policy (profiles/parent.toml) is not in force in the config stack",
    "the Codex parent runs unsandboxed with the credential readable; measured on 0.171.0, "
    "without these settings it ran HOME's login-shell files at session start (shell snapshot), "
    "opened spawn_agent media items outside the sandbox, and passed the launcher's API key to "
    "every model command (docs/parent.md)",
    "launch with a profilec output (every format carries the parent policy), or set the key "
    "the finding names to the value it gives",
    waivable=False,
)


def _lookup(merged: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    node: Any = merged
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def holds(setting: ParentSetting, merged: Mapping[str, Any]) -> bool:
    """Whether the merged config stack keeps `setting` in force."""
    found, value = _lookup(merged, setting.key)
    if not found:
        return False
    if isinstance(setting.value, list):
        return isinstance(value, list) and set(setting.value) <= {str(v) for v in value}
    return bool(value == setting.value and type(value) is type(setting.value))


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return f"[{len(value)} patterns]"
    return repr(value)


@lint
def parent_lints(o: LintContext) -> None:
    """PC046: one finding per parent-policy setting the merged stack does not hold."""
    for setting in o.inp.parent:
        if holds(setting, o.merged):
            continue
        found, value = _lookup(o.merged, setting.key)
        if isinstance(setting.value, list) and found and isinstance(value, list):
            missing = sorted(set(setting.value) - {str(v) for v in value})
            now = f"lacks {', '.join(missing)}"
        else:
            now = f"is {_show(value)}" if found else "is unset"
        o.add(
            PARENT_POLICY_MISSING,
            f"{setting.key} {now}; the parent policy sets {_show(setting.value)} "
            f"(road: {setting.road}, measured on codex {setting.codex_versions})",
            path=setting.key,
        )


rule(
    CODEX_HOME_DOTENV,
    "codex-home-dotenv",
    "error",
    "the private CODEX_HOME holds a .env file",
    "Codex 0.171.0 loads CODEX_HOME/.env into the parent's own environment (names starting "
    "CODEX_ are dropped); every process the parent starts inherits it: git, MCP servers, "
    "model commands, so a GIT_CONFIG_*, BASH_ENV or LD_PRELOAD there steers the trusted side",
    "remove CODEX_HOME/.env; the launcher sets the parent's environment itself",
    waivable=False,
)


@lint
def dotenv_lint(o: LintContext) -> None:
    """PC047: CODEX_HOME/.env exists (lstat only; never opened)."""
    home = o.inp.codex_home
    if not home:
        return
    path = f"{home.rstrip('/')}/.env"
    if not isinstance(o.lstat(path), int):
        o.add(
            CODEX_HOME_DOTENV,
            f"{path} exists; Codex loads it into the parent's environment",
            path=path,
        )


rule(
    PROJECT_DOC_LINK,
    "project-doc-link",
    "warning",
    "a workspace root's AGENTS.md or AGENTS.override.md is a symlink into a vault or the "
    "private CODEX_HOME (Codex 0.171.0 loads it with the root as cwd unless the root is "
    "untrusted; a subdirectory cwd loads its own AGENTS.md even then)",
    "a model command can plant it (the workspace is writable); Codex reads the session cwd's "
    "project docs at session start under the profile, which denies the target, so a later "
    "session that loads it fails to start: `failed to load AGENTS.md instructions for "
    "environment `local`: Permission denied (os error 13)` (codex exec: `thread/start failed: "
    "error creating thread: ...`, exit 1); not a leak. Measured on 0.171.0 with the cwd at the "
    "workspace root: without the untrusted `projects` entry it fails; with it 0.171.0 loads no "
    "project doc there. The entry names the root only: a session whose cwd is a subdirectory "
    "still loads that subdirectory's AGENTS.md, so the entry does not make such a link "
    "harmless (PC051 looks at each workspace root's own docs)",
    "remove the link (the launcher, before the next session) and find the command that "
    "planted it; `profilec watch` reports it as drift `project-doc-link`",
    ">=0.171.0,<=0.171.0",
)


@lint
def project_doc_lint(o: LintContext) -> None:
    """PC051: a planted project-doc link (compiler/projectdocs.py; lstat/readlink only)."""
    # CheckInputs carries the canonical CODEX_HOME; a link's target is canonical too.

    protected = protected_dirs((r.vault for r in o.inp.roots), (o.inp.codex_home,))
    for doc in planted_docs(o.inp.workspace_roots, protected):
        o.add(PROJECT_DOC_LINK, doc.message, path=doc.path)


rule(
    LOCK_WRITABLE,
    "lock-writable",
    "error",
    "the lock file `check --lock` / `watch --lock` reads is writable in some mode",
    "the lock is what a launcher trusts as the reviewed bundle: a model command that can "
    "rewrite it makes drift invisible to `check --lock` and `watch --lock` (profilec's own "
    "inputs are trusted base; the lock's path is known only here)",
    "keep the lock beside the roots manifest or in another directory no mode writes",
    waivable=False,
)


def lock_findings(bundle: Any, lock: str) -> list[CheckFinding]:
    """PC050 for each mode in which the lock file is writable (the compiled profile, each
    session cwd)."""
    path = os.path.abspath(lock)
    ws = tuple(bundle.layout.workspace_roots)
    out: list[CheckFinding] = []
    for profile in bundle.profiles:
        table = {profile.profile_id: profile.codex_table()}
        for ctx in session_contexts(ws, tmpdir=bundle.layout.tmpdir):
            access, won = resolve(table, profile.profile_id, ctx).winner(path)
            if access == "write":
                winner = won.source if won is not None else "no entry"
                out.append(
                    CheckFinding(
                        rule=LOCK_WRITABLE,
                        severity=rule_by_id(LOCK_WRITABLE).severity,
                        message=f"mode {profile.mode}: lock {path} is write (winner: {winner})",
                        mode=profile.mode,
                        profile=profile.profile_id,
                        path=path,
                    )
                )
                break
    return out
