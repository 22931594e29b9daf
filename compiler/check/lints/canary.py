"""Canary results as check findings: one PC022 per failed probe (never the probe's output).

Input is the canary report dict (the JSON dump of compiler/models/canary.py CanaryReport, schema
schemas/canary-report.schema.json). Each finding names the mode, profile, probe and failure
classes plus the expected/predicted/observed decisions; nothing a probe printed is copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...models.check import CheckFinding
from ...rule_ids import CANARY_FAILED
from ..rules import rule

rule(
    CANARY_FAILED,
    "canary-failed",
    "error",
    "a canary probe failed (leak, decoy, control, trusted, tamper, network, mismatch, parent "
    "or error)",
    "the real sandbox disagrees with the static proof or leaks",
    "read the canary section of the report",
    waivable=False,
)


RULE = CANARY_FAILED


def probe_failure(probe: Mapping[str, Any]) -> str:
    """`classes (expected X, predicted Y, observed Z)` for one failed probe dict."""
    classes = ",".join(str(c) for c in probe.get("failures") or ()) or "failed"
    return (
        f"{classes} (expected {probe.get('expected')}, predicted {probe.get('predicted')}, "
        f"observed {probe.get('observed')})"
    )


def mode_error(mode: Mapping[str, Any]) -> str:
    """The one line for a mode that could not run (its error text, cut to one short line)."""
    text = str(mode.get("error") or "").split("\n")[0][:200]
    return f"error: the mode could not run: {text}"


def canary_findings(doc: Mapping[str, Any]) -> list[CheckFinding]:
    """PC022 findings for a canary report dict: one per failed probe and per mode error."""
    found: list[CheckFinding] = []
    for mode in doc.get("modes") or ():
        name = str(mode.get("mode"))
        profile = str(mode.get("profile_id"))
        for probe in mode.get("probes") or ():
            if probe.get("ok"):
                continue
            found.append(
                CheckFinding(
                    rule=RULE,
                    severity="error",
                    message=f"canary {name} probe {probe.get('name')}: {probe_failure(probe)}",
                    mode=name,
                    profile=profile,
                )
            )
        if mode.get("error"):
            found.append(
                CheckFinding(
                    rule=RULE,
                    severity="error",
                    message=f"canary {name}: {mode_error(mode)}",
                    mode=name,
                    profile=profile,
                )
            )
    if not found and not doc.get("passed"):
        failures = ", ".join(str(f) for f in doc.get("failures") or ()) or "no mode ran"
        found.append(
            CheckFinding(rule=RULE, severity="error", message=f"canary failures: {failures}")
        )
    return found
