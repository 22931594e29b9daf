"""Run one static check: resolve every mode from the config stack, prove coverage, lint.

Two entry points build the same `CheckInputs`: `from_bundle` re-reads what profilec compiled
(the `-c` lines it renders, parsed back as Codex parses them), `from_foreign` takes a config.toml,
an override list or an acp-json document someone else wrote. Either way the roots manifest says
what must be denied, and every verdict comes from profilec.codex, never from the compiler.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..codex.fsview import LiveFs
from ..codex.lexical import EvaluationError
from ..codex.resolve import PLACEHOLDER_CWD, EvalContext, resolve, session_contexts
from ..codex.vocabulary import DEFAULT_CODEX_VERSION
from ..emit.overrides import render_overrides
from ..models import ACP_MODES, CompiledBundle, ResolvedRoot
from ..rule_ids import CODEX_REJECTS_PROFILE
from .configstack import ConfigStack, Layer, parse_override_lines, session_layer
from .coverage import ModeEval, cell_findings, coverage
from .lint import lint
from .result import (
    CheckFinding,
    CheckReport,
    Severity,
    Summary,
    at_or_above,
    finding_sort_key,
)
from .rules import all_rules, rule

#: Session cwd used when no workspace root was named (holds nothing), as compile does.


@dataclass(frozen=True, slots=True)
class CheckInputs:
    """Everything one check looks at."""

    stack: ConfigStack
    mode_map: Mapping[str, str]
    roots: tuple[ResolvedRoot, ...]
    workspace_roots: tuple[str, ...] = ()
    codex_home: str | None = None
    codex_home_holders: tuple[str, ...] = ()
    session_raw: Mapping[str, Any] | None = None
    session_file: str | None = None
    manifest_file: str | None = None
    home: str | None = None
    tmpdir: str | None = None
    #: The trusted base a compiled bundle carries (empty for a foreign config).
    trusted_base: tuple[Any, ...] = ()
    #: The session cwd as the launcher spells it (`check --cwd`); None: each workspace root.
    cwd: str | None = None
    #: The session allow-list of the run's policy directory (None: the shipped one).
    allowlist: Any = None
    #: The reviewed parent policy the stack must keep in force (profiles/parent.toml).
    parent: tuple[Any, ...] = ()


def launch_context_line(inp: CheckInputs) -> str:
    """The launch context every report prints: `~`, `:tmpdir` and the cwd decide access."""
    if inp.cwd:
        cwd = inp.cwd
    elif inp.workspace_roots:
        cwd = "each workspace root in turn"
    else:
        cwd = f"{PLACEHOLDER_CWD} (placeholder: no workspace root, no --cwd)"
    tmp = inp.tmpdir or "(unset: :tmpdir covers nothing; Codex's temp dir is /tmp)"
    return f"launch context: cwd {cwd}; HOME {inp.home or '(unset)'}; TMPDIR {tmp}"


def contexts(inp: CheckInputs) -> list[EvalContext]:
    """One evaluation context per possible session cwd (--cwd, else each workspace root)."""
    return session_contexts(
        inp.workspace_roots, cwd=inp.cwd or None, tmpdir=inp.tmpdir, home=inp.home
    )


def _mode_order(mode_map: Mapping[str, str]) -> list[str]:
    return [m for m in ACP_MODES if m in mode_map] + sorted(
        m for m in mode_map if m not in ACP_MODES
    )


rule(
    CODEX_REJECTS_PROFILE,
    "codex-rejects-profile",
    "error",
    "Codex refuses to load the selected profile",
    "every command of that mode fails, or the launcher falls back to another profile",
    "fix the profile until `codex debug prompt-input` accepts it",
    waivable=False,
)


def evaluate_modes(
    inp: CheckInputs, merged: Mapping[str, Any]
) -> tuple[list[ModeEval], list[CheckFinding]]:
    """Resolve each mapped profile per cwd; a profile Codex rejects is a PC015 finding."""
    perms = merged.get("permissions")
    table: Mapping[str, Any] = perms if isinstance(perms, Mapping) else {}
    out: list[ModeEval] = []
    findings: list[CheckFinding] = []
    ctxs = contexts(inp)
    dp = merged.get("default_permissions")
    if isinstance(dp, str):
        try:
            resolve(table, dp, ctxs[0])
        except EvaluationError as exc:
            findings.append(
                CheckFinding(
                    rule=CODEX_REJECTS_PROFILE,
                    severity="error",
                    profile=dp,
                    message=f"default_permissions: {exc.message}",
                )
            )
    for mode in _mode_order(inp.mode_map):
        pid = inp.mode_map[mode]
        if not pid.startswith(":") and pid not in table:
            out.append(ModeEval(mode, pid, ()))  # PC013 reports it; no cells to prove
            continue
        try:
            effs = tuple((c.cwd, resolve(table, pid, c)) for c in ctxs)
        except EvaluationError as exc:
            layer = inp.stack.layer_defining(pid)
            findings.append(
                CheckFinding(
                    rule=CODEX_REJECTS_PROFILE,
                    severity="error",
                    mode=mode,
                    profile=pid,
                    message=f"mode {mode}: Codex rejects profile {pid}: {exc.message}",
                    file=layer.file if layer else None,
                    line=layer.line_of(pid) if layer else None,
                )
            )
            out.append(ModeEval(mode, pid, ()))
            continue
        out.append(ModeEval(mode, pid, effs))
    return out, findings


def run_check(
    inp: CheckInputs,
    *,
    fail_on: Severity = "error",
    codex_version: str = DEFAULT_CODEX_VERSION,
    canary: dict[str, Any] | None = None,
    extra: Sequence[CheckFinding] = (),
) -> CheckReport:
    """The whole static check; deterministic for the same inputs."""
    merged = inp.stack.merged()
    modes, findings = evaluate_modes(inp, merged)

    cells = coverage(modes, inp.roots, LiveFs(), codex_version=codex_version)
    findings += cell_findings(cells, file=inp.manifest_file)
    findings += lint(inp, merged=merged, modes=modes, codex_version=codex_version)
    findings += list(extra)
    seen: set[tuple[str | None, ...]] = set()
    unique: list[CheckFinding] = []
    for f in sorted(findings, key=finding_sort_key):
        key = (f.rule, f.mode, f.profile, f.root, f.path, None if f.path else f.message)
        if key in seen:
            continue
        seen.add(key)
        if f.file is None and inp.manifest_file:
            # CI annotations need a file: root-level facts point at the roots manifest.
            f = f.model_copy(update={"file": inp.manifest_file})
        unique.append(f)
    summary = Summary.counting(
        unique, cells=len(cells), failed_cells=sum(1 for c in cells if c.access != "deny")
    )
    return CheckReport(
        codex_version=codex_version,
        fail_on=fail_on,
        passed=not any(at_or_above(f.severity, fail_on) for f in unique),
        inputs=(
            *(f"{ly.name}: {ly.file or '(generated)'}" for ly in inp.stack.layers),
            launch_context_line(inp),
        ),
        modes={m.mode: m.profile_id for m in modes},
        summary=summary,
        cells=tuple(cells),
        findings=tuple(unique),
        rules=all_rules(),
        canary=canary,
    )


def bundle_layers(bundle: CompiledBundle) -> Layer:
    """The compiled profiles as Codex receives them: the rendered `-c` lines, parsed back."""
    text = render_overrides(bundle)
    return Layer(
        "-c overrides (compiled)",
        "cli-override",
        parse_override_lines(text, where="compiled overrides"),
        None,
        text,
    )


def from_bundle(
    bundle: CompiledBundle,
    mode_map: Mapping[str, str],
    *,
    manifest_file: str | None = None,
    session_raw: Mapping[str, Any] | None = None,
    session_file: str | None = None,
    extra_layers: Sequence[Layer] = (),
) -> CheckInputs:
    """Inputs for checking what profilec compiled (session config as the launcher passes it)."""
    layers: list[Layer] = list(extra_layers)
    layers.append(bundle_layers(bundle))
    if bundle.session_config is not None:
        layers.append(session_layer(bundle.session_config, file=session_file, text=None))
    ws = tuple(dict.fromkeys(bundle.layout.workspace_roots))
    home = bundle.codex_home
    return CheckInputs(
        stack=ConfigStack(tuple(layers)),
        mode_map=dict(mode_map),
        roots=tuple(bundle.roots),
        workspace_roots=ws,
        codex_home=home.canonical if home else None,
        codex_home_holders=home.holder_dirs if home else (),
        session_raw=session_raw,
        session_file=session_file,
        manifest_file=manifest_file,
        # The launch context compiled in (--home, --tmpdir), else this process's environment.
        home=bundle.layout.home or os.environ.get("HOME"),
        tmpdir=bundle.layout.tmpdir or os.environ.get("TMPDIR"),
        trusted_base=tuple(bundle.trusted_base),
        parent=tuple(bundle.parent),
    )
