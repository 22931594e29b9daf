"""`profilec check`: re-derive every mode's access from a Codex config, prove the deny, run lints.

The checker trusts nothing the compiler says about itself: it takes the Codex `[permissions]`
tables (from a fresh compile, a foreign config.toml, or a `-c` override list), evaluates them
with compiler.evaluate (Codex's own rules), and for every mode x root x spelling requires
`deny`. Codex masks by real path, so a spelling through links reaches what its canonical target
gets; directory roots are also probed one level below each spelling. Lints catch the ways Codex
silently drops or weakens a profile.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .errors import InputError
from .evaluate import EvalContext, EvaluationError, resolve
from .models import ACP_MODES, CompiledBundle, ResolvedRoot
from .paths import is_within

Severity = Literal["note", "warning", "error"]
SEVERITY_RANK = {"note": 0, "warning": 1, "error": 2}
CHILD_PROBE = "profilec-probe-child"


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint rule: stable id, severity, why it matters and how to fix it."""

    id: str
    name: str
    severity: Severity
    why: str
    fix: str
    codex_versions: str = ">=0.133.0"


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("PC000", "coverage", "error", "a protected root is readable under some spelling",
             "deny the canonical target in every mode (profilec compile does)"),
        Rule("PC001", "legacy-sandbox-mode", "error",
             "sandbox_mode/sandbox_workspace_write in any layer replaces the profile and denies",
             "remove sandbox_mode and sandbox_workspace_write from every config layer"),
        Rule("PC002", "legacy-none", "warning",
             "`none` is a legacy alias Codex keeps only temporarily", "write `deny`"),
        Rule("PC003", "danger-full-access", "error",
             ":danger-full-access is unrestricted and cannot carry a deny",
             "extend :workspace with \":root\" = \"write\" and network instead"),
        Rule("PC004", "deny-through-symlink", "error",
             "a deny on a symlink path, or crossing one, makes Codex refuse to start every command",
             "deny the canonical target (realpath) instead"),
        Rule("PC005", "unknown-profile-key", "warning",
             "Codex accepts unknown keys inside a profile silently; a typo drops the rule",
             "use only description, extends, workspace_roots, filesystem, network"),
        Rule("PC006", "unknown-special", "warning",
             "Codex ignores an unknown :special with only a log line",
             "use :root :minimal :workspace_roots :tmpdir :slash_tmp"),
        Rule("PC007", "deny-path-missing", "note",
             "a deny on a path that does not exist is accepted silently; is it the intended one?",
             "point the deny at the existing canonical target"),
        Rule("PC008", "unbounded-glob", "warning",
             "a `**` deny glob without glob_scan_max_depth is expanded by a full scan at start",
             "set filesystem.glob_scan_max_depth"),
        Rule("PC009", "no-default-permissions", "error",
             "profiles without default_permissions make Codex fail or fall back to defaults",
             "set default_permissions to the agent mode's profile"),
        Rule("PC010", "codex-home-denied", "error",
             "a denied CODEX_HOME hides $CODEX_HOME/tmp/arg0, the sandbox helper cannot start",
             "make CODEX_HOME read, deny only the credential targets"),
        Rule("PC011", "hardlinked-target", "warning",
             "a path deny does not cover other hard links to the same credential",
             "remove the extra links (ln count 1) or deny their paths too"),
        Rule("PC012", "session-config-permissions", "warning",
             "agent session config tried to set permissions/default_permissions/sandbox_mode",
             "launchers must strip these keys (profilec compile --session-config does)"),
        Rule("PC013", "mode-unmapped", "error",
             "an ACP mode without a profile falls back to a built-in that hides nothing",
             "map every ACP mode (read-only, agent, agent-full-access) to a profile"),
        Rule("PC014", "holder-writable", "error",
             "a directory holding a link or target is writable: a model command can re-point it",
             "give the directory a read entry (profilec compile does)"),
        Rule("PC015", "codex-rejects-profile", "error",
             "Codex refuses to load this profile, so no command of the mode runs as intended",
             "fix the profile until `codex debug prompt-input` accepts it"),
    )
}

PROFILE_KEYS = {"description", "extends", "workspace_roots", "filesystem", "network"}
SPECIALS = {":root", ":minimal", ":workspace_roots", ":project_roots", ":tmpdir", ":slash_tmp"}


@dataclass(frozen=True, slots=True)
class Finding:
    """One reported problem."""

    rule: str
    severity: Severity
    message: str
    mode: str | None = None
    profile: str | None = None
    path: str | None = None


@dataclass(frozen=True, slots=True)
class Cell:
    """One coverage cell: mode x root x spelling and the effective access."""

    mode: str
    profile: str
    root: str
    spelling: str
    access: str
    winner: str


@dataclass(slots=True)
class CheckResult:
    """Coverage matrix plus findings; `failed(level)` decides the exit code."""

    cells: list[Cell] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    canary: dict[str, Any] | None = None

    def failed(self, fail_on: Severity) -> bool:
        """True when any finding is at or above `fail_on`."""
        return any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, deterministic."""
        return {
            "cells": [asdict(c) for c in self.cells],
            "findings": [asdict(f) for f in self.findings],
            "rules": {k: asdict(v) for k, v in sorted(RULES.items())},
            "canary": self.canary,
        }


def _add(res: CheckResult, rule: str, message: str, **kw: Any) -> None:
    res.findings.append(Finding(rule=rule, severity=RULES[rule].severity, message=message, **kw))


# ---------------------------------------------------------------------------------------------
# Config sources


def parse_override_lines(text: str, *, where: str) -> dict[str, Any]:
    """Turn `-c` values (one per line, LF only) into a config dict the way Codex does."""
    config: dict[str, Any] = {}
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise InputError(f"line {n}: expected key=value", where=where)
        try:
            parsed: Any = tomllib.loads("_x_ = " + value.strip())["_x_"]
        except tomllib.TOMLDecodeError:
            parsed = value.strip().strip("\"'")
        node = config
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise InputError(f"line {n}: {key} crosses a non-table", where=where)
        node[parts[-1]] = parsed
    return config


def load_foreign(path: str, *, overrides: bool) -> dict[str, Any]:
    """A Codex config.toml or override list handed in by someone else."""
    try:
        with open(path, "rb") as fh:
            data = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", where=path) from None
    if overrides:
        return parse_override_lines(data, where=path)
    try:
        return tomllib.loads(data)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", where=path) from None


def bundle_config(bundle: CompiledBundle) -> dict[str, Any]:
    """The Codex config a compiled bundle stands for (what the launcher passes)."""
    return {
        "default_permissions": bundle.default_profile_id,
        "permissions": {p.profile_id: p.codex_table() for p in bundle.profiles},
    }


# ---------------------------------------------------------------------------------------------
# Checks


def _contexts(workspace_roots: Sequence[str]) -> list[EvalContext]:
    if not workspace_roots:
        return [EvalContext(cwd="/nonexistent/profilec-session-cwd")]
    return [
        EvalContext(cwd=c, workspace_roots=tuple(r for r in workspace_roots if r != c))
        for c in workspace_roots
    ]


def _spellings(root: ResolvedRoot) -> list[tuple[str, str]]:
    """(label, path Codex masks for it): each spelling reaches the canonical target."""
    out = [(s, root.target) for s in root.spellings]
    if root.kind == "dir":
        out += [(f"{s}/{CHILD_PROBE}", f"{root.target}/{CHILD_PROBE}") for s in root.spellings]
    return out


def coverage(
    config: Mapping[str, Any],
    mode_profiles: Mapping[str, str],
    roots: Sequence[ResolvedRoot],
    workspace_roots: Sequence[str],
    res: CheckResult,
    home: str | None = None,
) -> None:
    """Fill the mode x root x spelling matrix; every non-deny cell is a PC000 error."""
    perms = config.get("permissions", {})
    for mode in ACP_MODES:
        pid = mode_profiles.get(mode)
        if pid is None:
            _add(res, "PC013", f"ACP mode {mode!r} has no profile", mode=mode)
            continue
        if pid == ":danger-full-access":
            _add(res, "PC003", f"mode {mode} selects :danger-full-access", mode=mode, profile=pid)
        if pid not in perms and not pid.startswith(":"):
            _add(res, "PC013", f"mode {mode} maps to undefined profile {pid!r}", mode=mode)
            continue
        for ctx in _contexts(workspace_roots):
            try:
                eff = resolve(perms, pid, ctx)
            except EvaluationError as exc:
                _add(res, "PC015", f"Codex rejects profile {pid!r}: {exc.message}", mode=mode,
                     profile=pid)
                break
            for root in roots:
                for label, real in _spellings(root):
                    d = eff.decide(real)
                    access = "write" if eff.unrestricted else (d.access or "none")
                    winner = ":danger-full-access" if eff.unrestricted else (
                        d.winner.source if d.winner else "no entry")
                    res.cells.append(Cell(mode, pid, root.id, label, access, winner))
                    if access != "deny":
                        _add(res, "PC000",
                             f"root {root.id!r} spelling {label} is {access} (winner: {winner})",
                             mode=mode, profile=pid, path=label)
                if not eff.unrestricted and mode != "read-only":
                    for hd in root.holder_dirs:
                        dd = eff.decide(hd)
                        if dd.writable and not any(is_within(hd, r.target) for r in roots
                                                   if r.kind == "dir"):
                            _add(res, "PC014", f"directory {hd} holding root {root.id!r} is "
                                 "writable", mode=mode, profile=pid, path=hd)
            if home and not eff.unrestricted:
                dh = eff.decide(home.rstrip("/") + "/tmp/arg0")
                if dh.access == "deny":
                    _add(res, "PC010", f"CODEX_HOME {home} is denied", mode=mode, profile=pid,
                         path=home)
            break_after_first = len(workspace_roots) <= 1
            if break_after_first:
                break


def _lstat_crossing(path: str) -> str | None:
    cur = ""
    for seg in path.strip("/").split("/"):
        cur += "/" + seg
        try:
            if stat.S_ISLNK(os.lstat(cur).st_mode):
                return cur
        except OSError:
            return None
    return None


def lint_config(config: Mapping[str, Any], res: CheckResult) -> None:
    """Lints over a Codex config (any source). Uses lstat only, never opens a path."""
    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                full = f"{path}.{k}" if path else str(k)
                if str(k).startswith(("sandbox_mode", "sandbox_workspace_write")):
                    _add(res, "PC001", f"{full} is set; Codex ignores the profiles", path=full)
                walk(v, full)
    walk(config, "")
    perms = config.get("permissions")
    if not isinstance(perms, dict):
        return
    if perms and "default_permissions" not in config:
        _add(res, "PC009", "[permissions] defined but no default_permissions")
    if config.get("default_permissions") == ":danger-full-access":
        _add(res, "PC003", "default_permissions selects :danger-full-access")
    for pid, prof in sorted(perms.items()):
        if not isinstance(prof, dict):
            continue
        for k in sorted(set(prof) - PROFILE_KEYS):
            _add(res, "PC005", f"unknown key {k!r} in profile {pid}", profile=pid)
        if prof.get("extends") == ":danger-full-access":
            _add(res, "PC003", f"profile {pid} extends :danger-full-access", profile=pid)
        fs = prof.get("filesystem", {})
        if not isinstance(fs, dict):
            continue
        for key, value in sorted(fs.items()):
            if key == "glob_scan_max_depth":
                continue
            values = value.values() if isinstance(value, dict) else [value]
            if "none" in values:
                _add(res, "PC002", f"{pid}: {key} uses legacy `none`", profile=pid, path=key)
            if key.startswith(":") and key not in SPECIALS:
                _add(res, "PC006", f"{pid}: unknown special {key}", profile=pid, path=key)
            subs = value.items() if isinstance(value, dict) else [("", value)]
            for sub, acc in subs:
                if ("**" in key or "**" in str(sub)) and (
                    acc in ("deny", "none") and "glob_scan_max_depth" not in fs
                ):
                        _add(res, "PC008", f"{pid}: `**` glob {key} {sub}".rstrip(),
                             profile=pid, path=key)
            if key.startswith("/") and value in ("deny", "none") and not any(
                c in key for c in "*?["
            ):
                link = _lstat_crossing(key)
                if link is not None:
                    _add(res, "PC004", f"{pid}: deny {key} crosses symlink {link}",
                         profile=pid, path=key)
                elif not os.path.lexists(key):
                    _add(res, "PC007", f"{pid}: deny path {key} does not exist",
                         profile=pid, path=key)


def lint_roots(roots: Sequence[ResolvedRoot], stripped: Sequence[str], res: CheckResult) -> None:
    """Lints over the resolved roots and the stripped session keys."""
    for r in roots:
        if r.nlink is not None and r.nlink > 1:
            _add(res, "PC011", f"root {r.id!r} target has {r.nlink} hard links", path=r.target)
    for key in stripped:
        _add(res, "PC012", f"session config key {key!r} was stripped")


def check(
    config: Mapping[str, Any],
    mode_profiles: Mapping[str, str],
    roots: Sequence[ResolvedRoot],
    workspace_roots: Sequence[str] = (),
    *,
    stripped: Sequence[str] = (),
    codex_home: str | None = None,
) -> CheckResult:
    """The whole static check of one config against the protected roots."""
    res = CheckResult()
    lint_config(config, res)
    lint_roots(roots, stripped, res)
    coverage(config, mode_profiles, roots, workspace_roots, res, codex_home)
    res.findings.sort(key=lambda f: (-SEVERITY_RANK[f.severity], f.rule, f.mode or "",
                                     f.path or "", f.message))
    return res
