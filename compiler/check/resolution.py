"""Each mode's profile resolved in every session context, as Codex resolves it (PC015).

The checker resolves the mapped profile of every mode once per possible session cwd; the
coverage proof (compiler/check/coverage.py) and the lints (compiler/check/lints/) read the
result, a `ModeEval` per mode. A profile Codex refuses to load is a PC015 finding here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..codex.lexical import EvaluationError
from ..codex.resolve import EffectiveProfile, resolve
from ..models.check import CheckFinding
from ..models.policy import ACP_MODES
from ..rule_ids import CODEX_REJECTS_PROFILE
from .check_inputs import CheckInputs, contexts
from .rules import rule


@dataclass(frozen=True, slots=True)
class ModeEval:
    """One mode's profile resolved once per session cwd."""

    mode: str
    profile_id: str
    contexts: tuple[tuple[str, EffectiveProfile], ...]


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
